// What a generated kernel unit makes the compiler parse (decisions 108, 129): <sstream> never,
// <complex> and the iostreams only when the user's source may use them. Preprocesses real kernel
// units with the host compiler and, where one is installed, nvcc (no GPU needed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel_unit.h"
#include "codegen/source_use.h"

namespace jaxcc::codegen {
namespace {

namespace fs = std::filesystem;

TEST(MayUseStdComplex, FindsComplexNamesInCode) {
  for (const char* source : {
           "std::complex<float> z;",
           "jaxcc::complex64_t* p;",
           "using T = BE::complex128_t;",
           "if (d == BE::DType::Complex64) {}",
           "BE_DISPATCH_ALL(x.dtype(), T, { f<T>(); });",
           "JAXCC_DISPATCH_ALL(x.dtype(), T, {});",
           "JAXCC_DISPATCH_COMPLEX(x.dtype(), T, {});",
           "cuFloatComplex c;",
           "int a = 1'000; complex64_t b;",  // a digit separator opens no character literal
           "auto s = \"a\\\"b\"; complex64_t c;",
           "char q = '\\''; complex64_t c;",
           "auto r = R\"x(\")x\"; complex64_t c;",
           "// a comment\ncomplex64_t c;",
           "/* a comment */ complex64_t c;",
       }) {
    EXPECT_TRUE(MayUseStdComplex(source)) << source;
  }
}

TEST(MayUseStdComplex, IgnoresCommentsLiteralsAndOtherDispatches) {
  for (const char* source : {
           "",
           "float x; // a complex algorithm\n",
           "/* complex */ int y;",
           "const char* s = \"complex64\";",
           "auto r = R\"(complex)\";",
           "JAXCC_DISPATCH_ALL_TYPES(x.dtype(), T, {});",
           "BE_DISPATCH_FLOATING_AND_HALF(x.dtype(), T, {});",
           "double e = 1e+5; int h = 0x1'00;",
       }) {
    EXPECT_FALSE(MayUseStdComplex(source)) << source;
  }
}

TEST(MayUseStdComplex, UnterminatedCommentOrLiteralEndsTheScan) {
  EXPECT_FALSE(MayUseStdComplex("int x; /* never closed complex"));
  EXPECT_TRUE(MayUseStdComplex("const char* s = \"never closed\ncomplex64_t c;"));
}

// Property runner: 2000 sources of 1-8 fragments (fixed seed), each a naming fragment with
// probability 1/5; `scan` must answer true exactly when one is in the source.
void ExpectAgreesWithFragments(bool (*scan)(const std::string&),
                               const std::vector<std::string>& benign,
                               const std::vector<std::string>& naming, unsigned seed) {
  std::mt19937 random(seed);
  for (int round = 0; round < 2000; ++round) {
    std::string source;
    bool expected = false;
    int pieces = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < pieces; ++i) {
      if (random() % 5 == 0) {
        source += naming[random() % naming.size()];
        expected = true;
      } else {
        source += benign[random() % benign.size()];
      }
    }
    ASSERT_EQ(scan(source), expected) << source;
  }
}

// Property: a source assembled from fragments whose answer is known (comments, literals and
// numbers that mention "complex" without naming it, plain code, and code that does name a
// complex type) is read as using complex exactly when a naming fragment is in it. Fixed seed.
TEST(MayUseStdComplex, AgreesWithTheFragmentsOfRandomSources) {
  const std::vector<std::string> benign = {
      "// complex64_t in a comment\n",
      "/* std::complex<float>\n over lines */",
      "const char* s = \"complex128 \\\" still a string complex\";\n",
      "char c = '\"'; char d = '\\'';\n",
      "auto r = R\"tag(complex)\" )tag\";\n",
      "auto u = u8R\"(Complex64)\";\n",
      "auto t = R\"x(a\" complex64_t \")x\";\n",
      "long n = 1'000'000; double e = 1.5e-3; int h = 0xFF'FF;\n",
      "JAXCC_DISPATCH_ALL_TYPES(d, T, { f<T>(); });\n",
      "void kernel(const BE::Tensor x, BE::Tensor y, int64_t stream) {}\n",
      "#include \"complex_helpers_are_only_named_in_strings.h\"\n",
      "x = a / b * c;\n",
  };
  const std::vector<std::string> naming = {
      "std::complex<double> z;\n",    "jaxcc::complex64_t w;\n", "BE::DType::Complex128;\n",
      "BE_DISPATCH_ALL(d, T, {});\n", "cuDoubleComplex q;\n",    "BE_DISPATCH_COMPLEX(d, T, {});\n",
  };
  ExpectAgreesWithFragments(MayUseStdComplex, benign, naming, 20261124);
}

TEST(MayUseStreams, FindsStreamsManipulatorsAndOutputOperators) {
  for (const char* source : {
           "#include <ostream>\n",
           "#include <iostream>\n",
           "#include <sstream>\n",
           "#include <iomanip>\n",
           "std::cout << x;",
           "JAXCC_CHECK(ok) << std::hex << v;",
           "JAXCC_CHECK(ok) << std :: left << v;",
           "JAXCC_CHECK(ok) << v << std::endl;",
           "JAXCC_CHECK(ok) << std::setw(4) << v;",
           "std::ostringstream text;",
           "using namespace std;\nint f() { return hex; }",
           "std::ostream& operator<<(std::ostream& os, const P& p);",
           "Out& operator << (Out& o, P p);",
       }) {
    EXPECT_TRUE(MayUseStreams(source)) << source;
  }
}

TEST(MayUseStreams, IgnoresCommentsLiteralsShiftsAndCommonWords) {
  for (const char* source : {
           "",
           "// std::cout << x\nint y = 1 << 3;",
           "/* #include <iostream> */",
           "const char* s = \"std::endl\";",
           "kernel<<<blocks, threads, 0, s>>>(x);",
           "int left = 0, right = n, hex = 16; bool fixed = true;",
           "JAXCC_CHECK(n > 0) << \"n = \" << n << x.dtype();",
           "auto op = &T::operator+;",
       }) {
    EXPECT_FALSE(MayUseStreams(source)) << source;
  }
}

// Property, as for complex: random sources of fragments with a known answer.
TEST(MayUseStreams, AgreesWithTheFragmentsOfRandomSources) {
  const std::vector<std::string> benign = {
      "// std::cout << endl\n",
      "/* #include <sstream>\n */",
      "const char* s = \"ostream \\\" std::hex\";\n",
      "auto r = R\"tag(std::setw(3))\" )tag\";\n",
      "int left = a << 2, right = b >> 1;\n",
      "JAXCC_CHECK(n >= 0) << \"n \" << n << 1.5 << true << x.dtype();\n",
      "k<<<g, b>>>(p);\n",
      "std::string hexdump; int fixed_point;\n",
      "T operator+(T a, T b);\n",
  };
  const std::vector<std::string> naming = {
      "#include <iostream>\n", "std::cerr << e;\n",      "os << std::fixed;\n",
      "x << std::endl;\n",     "std::stringstream s;\n", "P& operator<<(P&, Q);\n",
  };
  ExpectAgreesWithFragments(MayUseStreams, benign, naming, 20261125);
}

std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string FindNvcc() {
  const char* home = std::getenv("CUDA_HOME");
  if (home != nullptr && *home != '\0' && fs::exists(fs::path(home) / "bin" / "nvcc")) {
    return (fs::path(home) / "bin" / "nvcc").string();
  }
  return fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "";
}

// The macros defined at the end of preprocessing `unit` (`-E -dM`), or a failure message.
std::string DefinedMacros(const std::string& compiler, const std::string& unit,
                          const std::string& extension) {
  fs::path dir = fs::temp_directory_path() / ("jaxcc_unit_headers_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path source = dir / ("unit" + extension);
  fs::path out = dir / "macros.txt";
  std::ofstream(source) << unit;
  // nvcc has no -dM of its own; its host preprocessing pass takes g++'s.
  std::string dump = extension == ".cu" ? " -E -Xcompiler=-dM" : " -E -dM";
  std::string command = Quote(compiler) + " -std=c++17" + dump + " -I " +
                        Quote(std::string(JAXCC_SOURCE_DIR) + "/include") + " " +
                        Quote(source.string()) + " > " + Quote(out.string()) + " 2>&1";
  int status = std::system(command.c_str());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove_all(dir);
  return status == 0 ? text.str() : "FAILED: " + command + "\n" + text.str();
}

bool Defines(const std::string& macros, const std::string& name) {
  return macros.find("#define " + name + " ") != std::string::npos;
}

const char kPlainKernel[] =
    "void scale(BE::Tensor x, BE::Tensor y) {\n"
    "  JAXCC_CHECK(x.ndim() == 1) << \"rank \" << x.ndim() << std::hex << 255 << x.dtype();\n"
    "  JAXCC_DISPATCH_FLOATING(x.dtype(), T, { (void)y.data_ptr<T>(); });\n"
    "}\n";
const char kLeanKernel[] =
    "void scale(BE::Tensor x, BE::Tensor y) {\n"
    "  JAXCC_CHECK(x.ndim() == 1) << \"rank \" << x.ndim() << x.dtype();\n"
    "  JAXCC_DISPATCH_FLOATING(x.dtype(), T, { (void)y.data_ptr<T>(); });\n"
    "}\n";
const char kComplexKernel[] = "jaxcc::complex64_t twice(jaxcc::complex64_t z) { return z + z; }\n";

void ExpectUnitHeaders(const std::string& compiler, const std::string& extension) {
  std::string plain = DefinedMacros(compiler, GenerateKernelUnit("k", kPlainKernel, {}), extension);
  ASSERT_EQ(plain.rfind("FAILED", 0), std::string::npos) << plain;
  ASSERT_TRUE(Defines(plain, "JAXCC_DETAIL_NO_STD_COMPLEX")) << "kernel unit not generated lean";
  EXPECT_TRUE(Defines(plain, "_GLIBCXX_OSTREAM")) << "std::hex needs <ostream>";
  std::string lean = DefinedMacros(compiler, GenerateKernelUnit("k", kLeanKernel, {}), extension);
  ASSERT_EQ(lean.rfind("FAILED", 0), std::string::npos) << lean;
  ASSERT_TRUE(Defines(lean, "JAXCC_DETAIL_NO_OSTREAM")) << "kernel unit not generated lean";
  for (const char* guard : {"_GLIBCXX_OSTREAM", "_GLIBCXX_IOS", "_GLIBCXX_SSTREAM"}) {
    EXPECT_FALSE(Defines(lean, guard)) << compiler << ": a kernel unit that names no stream "
                                       << "pulls the header guarded by " << guard;
  }
  for (const char* guard : {"_GLIBCXX_SSTREAM", "_GLIBCXX_ISTREAM", "_GLIBCXX_COMPLEX"}) {
    EXPECT_FALSE(Defines(plain, guard)) << compiler << ": a kernel unit with no complex type "
                                        << "pulls the header guarded by " << guard;
  }
  std::string with =
      DefinedMacros(compiler, GenerateKernelUnit("k", kComplexKernel, {}), extension);
  ASSERT_EQ(with.rfind("FAILED", 0), std::string::npos) << with;
  EXPECT_FALSE(Defines(with, "JAXCC_DETAIL_NO_STD_COMPLEX"));
  EXPECT_TRUE(Defines(with, "_GLIBCXX_COMPLEX")) << "a source naming complex64_t gets <complex>";
  EXPECT_FALSE(Defines(with, "_GLIBCXX_SSTREAM") && !Defines(with, "_GLIBCXX_COMPLEX"));
}

TEST(KernelUnitHeaders, HostCompilerParsesNoUnusedComplexOrStream) {
  ExpectUnitHeaders(JAXCC_TEST_CXX, ".cc");
}

TEST(KernelUnitHeaders, NvccParsesNoUnusedComplexOrStream) {
  std::string nvcc = FindNvcc();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc (CUDA_HOME, /usr/local/cuda)";
  ExpectUnitHeaders(nvcc, ".cu");
}

}  // namespace
}  // namespace jaxcc::codegen

#include <gtest/gtest.h>

#include "build/build_graph.h"
#include "build/compile_diagnostics.h"
#include "build/depfile.h"

namespace jaxcc::build {
namespace {

TEST(Depfile, ParsesContinuationsAndEscapedSpaces) {
  std::string text = "kernel_0.o: kernel_0.cc /home/u/my\\ dir/a.h \\\n  /usr/include/b.h\n";
  std::vector<std::string> deps = ParseDepfile(text);
  ASSERT_EQ(deps.size(), 3u);
  EXPECT_EQ(deps[0], "kernel_0.cc");
  EXPECT_EQ(deps[1], "/home/u/my dir/a.h");
  EXPECT_EQ(deps[2], "/usr/include/b.h");
}

TEST(Depfile, EmptyAndMalformedInputsYieldNothingOrWhatWasRead) {
  EXPECT_TRUE(ParseDepfile("").empty());
  EXPECT_TRUE(ParseDepfile("no colon here").empty());
}

TEST(FirstError, PicksTheFirstErrorWithItsSourceLines) {
  std::string output =
      "[1/3] compile kernel_0.cc\n"
      "FAILED: kernel_0.o\n"
      "g++ -c kernel_0.cc\n"
      "<mod>: In function 'void f(jaxcc::Tensor)':\n"
      "<mod>:7:5: error: 'undeclared' was not declared in this scope\n"
      "    7 |     undeclared(1);\n"
      "      |     ^~~~~~~~~~\n"
      "<mod>:9:1: error: second error\n";
  std::string first = FirstError(output);
  EXPECT_EQ(first,
            "<mod>: In function 'void f(jaxcc::Tensor)':\n"
            "<mod>:7:5: error: 'undeclared' was not declared in this scope\n"
            "    7 |     undeclared(1);\n"
            "      |     ^~~~~~~~~~");
}

TEST(FirstError, ReadsNvccFrontEndDiagnosticsInTheCommonFormat) {
  std::string output =
      "FAILED: kernel_0.o\n"
      "/usr/local/cuda/bin/nvcc -c kernel_0.cu -o kernel_0.o\n"
      "<mod>(7): error: identifier \"undefined_b\" is undefined\n"
      "      if (idx < n) out[idx] = a[idx] + undefined_b;\n"
      "                                       ^\n"
      "\n"
      "1 error detected in the compilation of \"kernel_0.cu\".\n";
  EXPECT_EQ(FirstError(output),
            "<mod>:7: error: identifier \"undefined_b\" is undefined\n"
            "      if (idx < n) out[idx] = a[idx] + undefined_b;\n"
            "                                       ^");
  // A parenthesised number that is not a location stays as it is.
  EXPECT_NE(FirstError("f(x): error: y\n").find("f(x): error: y"), std::string::npos);
}

TEST(FirstError, FallsBackToLinkerErrors) {
  std::string output =
      "FAILED: m.so\n/usr/bin/ld: kernel_0.o: in function `f':\n"
      "kernel_0.cc:(.text+0x5): undefined reference to `missing_symbol'\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(FirstError(output),
            "/usr/bin/ld: kernel_0.o: in function `f':\n"
            "kernel_0.cc:(.text+0x5): undefined reference to `missing_symbol'");
}

TEST(FirstError, ReadsLldAndMoldUndefinedSymbolsWithWhereTheyAreReferenced) {
  for (const char* linker : {"ld.lld", "mold"}) {
    std::string error = std::string(linker) +
                        ": error: undefined symbol: missing_symbol\n"
                        ">>> referenced by kernel_0.cc\n"
                        ">>>               kernel_0.o:(f())";
    std::string output = "FAILED: m.so\n" + error +
                         "\ncollect2: error: ld returned 1 exit status\n"
                         "ninja: build stopped: subcommand failed.\n";
    EXPECT_EQ(FirstError(output), error) << linker;
  }
}

TEST(FirstError, ReportsTheCompilerDriverInsteadOfNinjasChatter) {
  std::string output =
      "ninja: Entering directory `/tmp/b'\n[1/3] compile kernel_0.cc\nFAILED: kernel_0.o\n"
      "/usr/bin/g++ -fbogus -c kernel_0.cc -o kernel_0.o\n"
      "g++: error: unrecognized command-line option '-fbogus'\n"
      "[2/3] compile ffi_wrapper.cc\nninja: build stopped: subcommand failed.\n";
  EXPECT_EQ(FirstError(output), "g++: error: unrecognized command-line option '-fbogus'");
  EXPECT_EQ(FirstError("nvcc fatal   : Unknown option '-fbogus'\n"),
            "nvcc fatal   : Unknown option '-fbogus'");
  // collect2's summary is no explanation: the tail of the output is kept instead.
  EXPECT_NE(FirstError("weird linker text\ncollect2: error: ld returned 1 exit status\n")
                .find("weird linker text"),
            std::string::npos);
}

TEST(SignatureProofFailure, NamesJaxccsReadingAndTheCompilersType) {
  std::string gxx =
      "<m>:9:14: error: static assertion failed: jaxcc signature proof: jaxcc reads `f` as "
      "`(float)`\n"
      "    9 | // @BE f\n"
      "<m>:9:45: error: no matching function for call to "
      "\u2018jaxcc_generated::jaxcc_read_f::Bind(void (*)(const jaxcc::Tensor&, double))\u2019\n";
  auto proof = SignatureProofFailure(gxx);
  ASSERT_TRUE(proof);
  EXPECT_EQ(proof->rfind("<m>:9:14: error: static assertion failed: jaxcc signature proof", 0), 0u);
  EXPECT_NE(proof->find("the compiler declares it as `void (*)(const jaxcc::Tensor&, double)`"),
            std::string::npos)
      << *proof;
  std::string overloaded =
      "<m>:3:1: error: static assertion failed: jaxcc signature proof: ...\n"
      "<m>:3:1: error: no matching function for call to "
      "'jaxcc_read_g::Bind(<unresolved overloaded function type>)'\n";
  EXPECT_NE(SignatureProofFailure(overloaded)->find("several overloads"), std::string::npos);
  std::string nvcc =
      "<m>(4): error: static assertion failed with \"jaxcc signature proof: ...\"\n"
      "<m>(4): error: no instance of function template \"jaxcc_read_f::Bind\" matches\n"
      "            argument types are: (void (*)(jaxcc::Tensor, double))\n";
  EXPECT_NE(SignatureProofFailure(nvcc)->find("declares it as `void (*)(jaxcc::Tensor, double)`"),
            std::string::npos);
  EXPECT_FALSE(SignatureProofFailure("<m>:1:1: error: 'x' was not declared\n"));
}

// A pool or state name used in a unit that does not include its header, in each compiler's
// words (captured from g++ 12, Clang 14 and nvcc 13): the hint names the header to include.
TEST(FixHint, NamesTheHeaderOfAPoolOrStateNameAUnitLeftOut) {
  const struct {
    const char* line;
    const char* header;
  } cases[] = {
      {"<m>:3:32: error: \u2018jaxcc::ThreadPool\u2019 has not been declared", "jaxcc/parallel.h"},
      {"<m>:4:32: error: \u2018jaxcc::State\u2019 has not been declared", "jaxcc/state.h"},
      {"<m>:5:41: error: \u2018parallel_for\u2019 is not a member of \u2018BE\u2019",
       "jaxcc/parallel.h"},
      {"<m>:3:29: error: 'BE::ThreadPool' has not been declared", "jaxcc/parallel.h"},
      {"<m>:3:39: error: no type named 'ThreadPool' in namespace 'jaxcc'", "jaxcc/parallel.h"},
      {"<m>:4:39: error: no template named 'State' in namespace 'jaxcc'", "jaxcc/state.h"},
      {"<m>:5:41: error: no member named 'parallel_for' in namespace 'jaxcc'", "jaxcc/parallel.h"},
      {"<m>:3: error: namespace \"jaxcc\" has no member \"ThreadPool\"", "jaxcc/parallel.h"},
      {"<m>:4: error: namespace \"jaxcc\" has no member \"State\"", "jaxcc/state.h"},
  };
  for (const auto& c : cases) {
    const std::string hint = FixHint(c.line);
    EXPECT_NE(hint.find(std::string("#include \"") + c.header + "\""), std::string::npos)
        << c.line << "\n"
        << hint;
  }
  // The first error of each failed step, as a build with two failed units reports them.
  EXPECT_NE(FixHint("2 build steps failed; the first error of each, in order:\n\n<m>:1:1: error: "
                    "x\n\n<w>:6:62: error: no type named 'ThreadPool' in namespace 'jaxcc'")
                .find("jaxcc/parallel.h"),
            std::string::npos);
  // The user's own names, or ours in a line that is not an undeclared-name error: no such hint.
  for (const char* line :
       {"<m>:3:32: error: 'State' has not been declared",
        "<m>:3:32: error: 'my::ThreadPool' has not been declared",
        "<m>:3:32: error: no matching function for call to 'jaxcc::parallel_for(int)'",
        "<m>:3:32: error: 'jaxcc::StateOfMine' has not been declared",
        // A user's own State in a unit built under a cache directory named jaxcc.
        "/root/.cache/jaxcc/.build/m-1@h/kernel_0.cc:3:32: error: 'State' has not been declared",
        "/root/.cache/jaxcc/.build/m-1@h/kernel_0.cc:3:32: error: no type named 'State' in "
        "namespace 'ops'"}) {
    EXPECT_EQ(FixHint(line).find("#include \"jaxcc/"), std::string::npos) << line;
  }
}

// Issue 49 item 19: on a full disk the assembler's "can't create ...: No such file or directory"
// was read as a missing header and told the user to pass extra_include_paths.
TEST(FixHint, AFullDiskIsNeverReadAsAMissingHeader) {
  for (const char* line :
       {"Assembler messages:\nFatal error: can't create kernel_0.o: No such file or directory",
        "<m>:1:1: fatal error: error writing to /tmp/ccX.s: No space left on device",
        "/usr/bin/ld: final link failed: No space left on device"}) {
    EXPECT_EQ(FixHint(line).find("extra_include_paths"), std::string::npos) << line;
  }
  EXPECT_NE(FixHint("/usr/bin/ld: final link failed: No space left on device").find("disk is full"),
            std::string::npos);
}

// g++ 12 and Clang 14 without an assembler on PATH (issue 52: this read as a missing header).
TEST(FixHint, AMissingAssemblerIsNeverReadAsAMissingHeader) {
  for (const char* line :
       {"g++-12: fatal error: cannot execute \u2018as\u2019: execvp: No such file or directory",
        "clang: error: unable to execute command: Executable \"as\" doesn't exist!"}) {
    const std::string hint = FixHint(line);
    EXPECT_NE(hint.find("add the directory that holds it to PATH"), std::string::npos) << hint;
    EXPECT_EQ(hint.find("extra_include_paths"), std::string::npos) << hint;
  }
}

TEST(FixHint, NamesTheOptionThatFixesTheFailure) {
  EXPECT_NE(
      FixHint("<m>:1:10: fatal error: x.h: No such file or directory").find("extra_include_paths"),
      std::string::npos);
  for (const char* line :
       {"/usr/bin/ld: cannot find -lfoo: No such file or directory",
        "ld.lld: error: unable to find library -lfoo", "mold: fatal: library not found: foo"}) {
    EXPECT_NE(FixHint(line).find("-L<dir>"), std::string::npos) << line;
  }
  EXPECT_NE(FixHint("k.cc:(.text+0x5): undefined reference to `gone()'").find("extra_ldflags"),
            std::string::npos);
  // The same from gold, lld and mold, whichever ChooseLinker picked (decision 161a).
  for (const char* line : {"k.o:k.cc:function f(): error: undefined reference to 'gone()'",
                           "ld.lld: error: undefined symbol: gone()\n>>> referenced by k.cc",
                           "mold: error: undefined symbol: gone()\n>>> referenced by k.o:(f())"}) {
    EXPECT_NE(FixHint(line).find("extra_ldflags=['-l<name>']"), std::string::npos) << line;
  }
  // OpenMP's symbols get the flag that brings them, not the generic -l<name>.
  for (const char* line :
       {"k.cc:(.text+0x5): undefined reference to `GOMP_parallel'",
        "k.cc:(.text+0x9): undefined reference to `omp_get_max_threads'",
        "kernel_0.o:kernel_0.cc:function f(jaxcc::Tensor): error: undefined reference to "
        "'omp_get_max_threads'",
        "ld.lld: error: undefined symbol: GOMP_parallel\n>>> referenced by kernel_0.cc",
        "mold: error: undefined symbol: omp_get_max_threads\n>>> referenced by kernel_0.o"}) {
    EXPECT_NE(FixHint(line).find("pass -fopenmp in extra_cflags"), std::string::npos) << line;
    EXPECT_EQ(FixHint(line).find("-l<name>"), std::string::npos) << line;
  }
  EXPECT_NE(FixHint("g++: error: unrecognized command-line option '-fx'").find("extra_cflags"),
            std::string::npos);
  EXPECT_NE(FixHint("nvcc fatal   : Unknown option '-fx'").find("extra_cuda_cflags"),
            std::string::npos);
  EXPECT_EQ(FixHint("<m>:3:9: error: expected primary-expression"), "");
}

TEST(NinjaStatus, ReadsFinishedAndTotalFromJaxccsStatusOnly) {
  int finished = -1, total = -1;
  EXPECT_TRUE(ParseNinjaStatus("[jaxcc-step 7/20] CXX kernel_3.o", &finished, &total));
  EXPECT_EQ(finished, 7);
  EXPECT_EQ(total, 20);
  for (const char* line : {"[7/20] CXX kernel_3.o", "[jaxcc-step x/20] a", "[jaxcc-step 9/3] a",
                           "[jaxcc-step 7/20 no bracket", "k.cc:1:2: error: [jaxcc-step 1/2]"}) {
    EXPECT_FALSE(ParseNinjaStatus(line, &finished, &total)) << line;
  }
}

// Ninja's output with -k 0 when two of three units fail (the layout ninja 1.11 prints).
const char kTwoFailures[] =
    "[jaxcc-step 0/4] CXX kernel_0.o\n"
    "FAILED: kernel_0.o \n"
    "/usr/bin/g++ -c kernel_0.cc -o kernel_0.o\n"
    "a.cc: In function 'void f()':\n"
    "a.cc:3:5: error: 'x' was not declared in this scope\n"
    "    3 |     x = 1;\n"
    "      |     ^\n"
    "[jaxcc-step 1/4] CXX kernel_1.o\n"
    "[jaxcc-step 2/4] CXX kernel_2.o\n"
    "FAILED: kernel_2.o \n"
    "/usr/bin/g++ -c kernel_2.cc -o kernel_2.o\n"
    "c.cc:9:1: error: expected ';' before '}' token\n"
    "ninja: build stopped: subcommands failed.\n";

TEST(FailedBuild, EveryFailedStepIsReportedWithItsFirstError) {
  std::vector<std::string> failed = FailedStepOutputs(kTwoFailures);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_NE(failed[0].find("a.cc:3:5"), std::string::npos);
  EXPECT_EQ(failed[0].find("c.cc"), std::string::npos);
  EXPECT_NE(failed[1].find("c.cc:9:1"), std::string::npos);
  std::string message = FailedBuildMessage(kTwoFailures);
  EXPECT_EQ(message.rfind("2 build steps failed", 0), 0u) << message;
  size_t a = message.find("a.cc:3:5: error: 'x' was not declared");
  size_t c = message.find("c.cc:9:1: error: expected ';'");
  ASSERT_NE(a, std::string::npos) << message;
  ASSERT_NE(c, std::string::npos) << message;
  EXPECT_LT(a, c);
}

TEST(FailedBuild, OneFailedStepKeepsTheSingleErrorMessage) {
  std::string one =
      std::string(kTwoFailures).substr(0, std::string(kTwoFailures).find("[jaxcc-step 1/4]"));
  EXPECT_EQ(FailedBuildMessage(one), FirstError(one));
}

TEST(NinjaFile, OneRulePerUnitAndEscapedPaths) {
  BuildGraph graph;
  graph.compiles.push_back(
      {"kernel_0.cc", "kernel_0.o", {"/usr/bin/g++", "-I", "/a b/c", "-DX=$Y"}});
  graph.compiles.push_back({"ffi_wrapper.cc", "ffi_wrapper.o", {"/usr/bin/g++", "-O3"}});
  graph.link_command = {"/usr/bin/g++", "-shared"};
  graph.link_flags = {"-lm"};
  graph.output = "m.so";
  std::string text = RenderNinjaFile(graph);
  EXPECT_NE(text.find("rule compile_0\n  command = /usr/bin/g++ -I '/a b/c' '-DX=$$Y' -MD -MF "
                      "$out.d -c $in -o $out\n  depfile = $out.d\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("build kernel_0.o: compile_0 kernel_0.cc\n"), std::string::npos);
  EXPECT_NE(text.find("build m.so: link kernel_0.o ffi_wrapper.o\n"), std::string::npos);
  EXPECT_NE(text.find("command = /usr/bin/g++ -shared $in -o $out -lm -Wl,--trace > $out.inputs\n"),
            std::string::npos);
}

TEST(NinjaFile, SchedulingFlagsFollowTheCommandInTheRule) {
  BuildGraph graph;
  graph.compiles.push_back(
      {"kernel_0.cu", "kernel_0.o", {"/cuda/bin/nvcc", "-O3"}, {"--threads", "2"}});
  graph.link_command = {"/usr/bin/g++", "-shared"};
  graph.output = "m.so";
  std::string text = RenderNinjaFile(graph);
  EXPECT_NE(text.find("command = /cuda/bin/nvcc -O3 --threads 2 -MD -MF $out.d -c $in -o $out\n"),
            std::string::npos)
      << text;
}

TEST(NinjaFile, PrebuiltObjectsAreLinkedButNeverCompiled) {
  BuildGraph graph;
  graph.compiles.push_back({"kernel_0.cc", "kernel_0.o", {"/usr/bin/g++"}});
  graph.prebuilt_objects = {"ffi_wrapper.o"};
  graph.link_command = {"/usr/bin/g++", "-shared"};
  graph.output = "m.so";
  std::string text = RenderNinjaFile(graph);
  EXPECT_NE(text.find("build m.so: link kernel_0.o ffi_wrapper.o\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("ffi_wrapper.cc"), std::string::npos) << text;
  EXPECT_EQ(text.find("rule compile_1"), std::string::npos) << text;
}

}  // namespace
}  // namespace jaxcc::build

// Macro-stamped entry points through ResolveSpecs: sources shaped like brainevent 0.3's (an
// annotation, then an invocation of a macro whose body defines the FFI function), and every kind
// of bad input, each a kSignature error at the user's line.
#include "signature/stamped_functions.h"

#include <gtest/gtest.h>

#include "signature/resolve_test_util.h"

namespace jaxcc::signature {
namespace {

using namespace resolve_testing;  // NOLINT(google-build-using-namespace): test helpers only

// Written for these tests in the shape of an event-driven CUDA operator file.
const char* const kEventOperators = R"(#include "brainevent/common.h"

#ifndef ACTIVE_TERM
#define ACTIVE_TERM(W, S) (((S) != 0) ? (W) : 0)
#endif

#ifndef WARPS
#define WARPS 4
#endif

#define DEFINE_GATHER(SUFFIX, W_T, S_T)                                    \
__global__ void gather_kernel##SUFFIX(const W_T* w, const S_T* s, W_T* o, int n) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                         \
    if (i < n) o[i] = ACTIVE_TERM(w[i], s[i]);                             \
}

#define FFI_GATHER(SUFFIX, W_T, S_T)                                       \
void event_gather##SUFFIX(                                                 \
    const BE::Tensor weights, const BE::Tensor spikes,                     \
    BE::Tensor out, int64_t stream                                         \
) {                                                                        \
    int n = static_cast<int>(out.size(0));                                 \
    gather_kernel##SUFFIX<<<(n + 255) / 256, 32 * WARPS, 0,                \
        reinterpret_cast<cudaStream_t>(stream)>>>(                         \
        static_cast<const W_T*>(weights.data_ptr()),                       \
        static_cast<const S_T*>(spikes.data_ptr()),                        \
        static_cast<W_T*>(out.data_ptr()), n);                             \
}

#define SCALED(SUFFIX, T) \
void event_scale##SUFFIX(const BE::Tensor x, BE::Tensor y, T alpha, int64_t stream) {}

DEFINE_GATHER(_f32_bool, float, int8_t)
DEFINE_GATHER(_f64_float, double, float)

namespace ops {
// @BE event_gather_f32_bool
FFI_GATHER(_f32_bool, float, int8_t)
}

// @BE event_gather_f64_float
FFI_GATHER(_f64_float, double, float)

// @BE event_scale_f16
SCALED(_f16, uint16_t)
// @BE event_scale_f64
SCALED(_f64, double)
)";

TEST(StampedFunctionsTest, BraineventShapedSourceResolves) {
  auto specs = Resolve({{"ops.cu", kEventOperators}});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  ASSERT_EQ(specs->size(), 4u);
  EXPECT_EQ((*specs)[0].name, "event_gather_f32_bool");
  EXPECT_EQ(argspec::ToTokens((*specs)[0]), (Strings{"arg", "arg", "ret", "stream"}));
  EXPECT_EQ((*specs)[0].namespaces, Strings{"ops"});  // the invocation's namespace
  EXPECT_EQ((*specs)[1].namespaces, Strings{});
  EXPECT_EQ(argspec::ToTokens((*specs)[2]), (Strings{"arg", "ret", "attr.alpha:uint16", "stream"}));
  EXPECT_EQ(argspec::ToTokens((*specs)[3]),
            (Strings{"arg", "ret", "attr.alpha:float64", "stream"}));
}

TEST(StampedFunctionsTest, FunctionsListAndExplicitTokens) {
  auto listed =
      Resolve({{"ops.cu", kEventOperators}},
              Requests{{"event_gather_f64_float", std::nullopt},
                       {"event_scale_f64", Strings{"arg", "ret", "attr.alpha", "stream"}}});
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  EXPECT_EQ(argspec::ToTokens((*listed)[1]),
            (Strings{"arg", "ret", "attr.alpha:float64", "stream"}));
  // Explicit tokens are now checked against the expansion, as against any declaration.
  Error e =
      ErrorOf({{"ops.cu", kEventOperators}},
              Requests{{"event_scale_f64", Strings{"arg", "ret", "attr.alpha:float32", "stream"}}});
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_NE(e.message.find("note: in the expansion of macro `SCALED` invoked here"),
            std::string::npos)
      << e.message;
}

TEST(StampedFunctionsTest, ConditionalsAndRedefinitionsPickTheMacroAtTheInvocation) {
  const char* text =
      "#define MODE 2\n"
      "#if MODE == 1\n#define STAMP(s) void f##s(BE::Tensor y) {}\n"
      "#else\n#define STAMP(s) void f##s(const BE::Tensor x, BE::Tensor y) {}\n#endif\n"
      "// @BE f_a\nSTAMP(_a)\n"
      "#undef STAMP\n#define STAMP(s) void f##s(const BE::Tensor x, BE::Tensor y, float k) {}\n"
      "// @BE f_b\nSTAMP(_b)\n";
  auto specs = Resolve(One(text));
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  EXPECT_EQ(argspec::ToTokens((*specs)[0]), (Strings{"arg", "ret"}));
  EXPECT_EQ(argspec::ToTokens((*specs)[1]), (Strings{"arg", "ret", "attr.k:float32"}));
}

TEST(StampedFunctionsTest, VariadicStringizedAndNestedStamps) {
  const char* text =
      "#define NAME(base, s) base##s\n"
      "#define PARAMS(...) (__VA_ARGS__)\n"
      "#define STAMP(s, ...) void NAME(op, s) PARAMS(__VA_ARGS__) { (void)#s; }\n"
      "// @BE op_x\nSTAMP(_x, const BE::Tensor a, const BE::Tensor b, BE::Tensor c)\n";
  EXPECT_EQ(TokensOf(text), (Strings{"arg", "arg", "ret"}));
}

TEST(StampedFunctionsTest, ErrorsPointAtAnnotationInvocationAndDefine) {
  const char* text =
      "#define STAMP(s) \\\n"
      "  void f##s(const BE::Tensor x, float* p, BE::Tensor y) {}\n"
      "// @BE f_1\n"
      "STAMP(_1)\n";
  Error e = ErrorOf(One(text));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  // The primary caret is on the parameter, inside the #define; the notes show the rest.
  EXPECT_EQ(e.message.substr(0, 17), "<module>:2:33: er");
  EXPECT_NE(e.message.find("<module>:4:1: note: in the expansion of macro `STAMP` invoked here\n"
                           "STAMP(_1)\n^~~~~"),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("<module>:1:9: note: macro `STAMP` is defined here\n"
                           "#define STAMP(s) \\\n        ^~~~~"),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("<module>:3:8: note: `f_1` is annotated here\n// @BE f_1\n       ^~~"),
            std::string::npos)
      << e.message;
}

TEST(StampedFunctionsTest, MacroExpandingToTwoDefinitions) {
  const char* text =
      "#define TWICE(s) void f##s(const BE::Tensor x, BE::Tensor y) {} \\\n"
      "                 void f##s(const BE::Tensor x, BE::Tensor y) {}\n"
      "// @BE f_1\nTWICE(_1)\n";
  Error e = ErrorOf(One(text));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_EQ(e.message.substr(0, e.message.find('\n')),
            "<module>:3:8: error: macro `TWICE` expands to 2 definitions of `f_1`: jaxcc exports "
            "one C++ function per name; make the macro define it once");
  EXPECT_NE(e.message.find("<module>:4:1: note: in the expansion of macro `TWICE`"),
            std::string::npos);
}

TEST(StampedFunctionsTest, RecursiveMacros) {
  Error loop = ErrorOf(One("#define A B\n#define B A\n// @BE f\nA\n"));
  EXPECT_EQ(loop.kind, ErrorKind::kSignature);
  EXPECT_EQ(loop.message.substr(0, loop.message.find('\n')),
            "<module>:3:8: error: `f` is annotated here, but macro `A`, invoked after the "
            "annotation, refers to itself through `A` (C never expands a macro inside its own "
            "expansion), and its expansion declares no function at all (after expansion it is not "
            "a function declaration)");
  // A self-referencing macro left inside the stamped declaration's parameters.
  Error in_params = ErrorOf(
      One("#define T T\n#define F(s) void f##s(const T x, BE::Tensor y) {}\n// @BE f_1\nF(_1)\n"));
  EXPECT_NE(in_params.message.find("<module>:3:8: error: the declaration of `f_1` that macro `F` "
                                   "expands to still holds `T`, a macro that refers to itself"),
            std::string::npos)
      << in_params.message;
}

TEST(StampedFunctionsTest, MalformedInvocations) {
  const char* define = "#define F(s, t) void f##s(const BE::Tensor x, t y) {}\n";
  Error unbalanced = ErrorOf(One(std::string(define) + "// @BE f_1\nF(_1, BE::Tensor\nint z;\n"));
  EXPECT_EQ(unbalanced.kind, ErrorKind::kSignature);
  EXPECT_NE(unbalanced.message.find("<module>:2:8: error: `f_1` is annotated here, but macro `F`, "
                                    "invoked after the annotation, cannot be expanded: the "
                                    "arguments of macro `F` are never closed"),
            std::string::npos)
      << unbalanced.message;
  Error count = ErrorOf(One(std::string(define) + "// @BE f_1\nF(_1)\n"));
  EXPECT_NE(count.message.find("cannot be expanded: macro `F` takes 2 arguments, but 1 argument "
                               "was given"),
            std::string::npos)
      << count.message;
}

TEST(StampedFunctionsTest, NotAFunctionAfterExpansion) {
  Error e = ErrorOf(One("#define S(n) struct n { int x; };\n// @BE thing\nS(thing)\n"));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_NE(e.message.find("expands to no function at all (after expansion it is not a function "
                           "declaration)"),
            std::string::npos);
  Error other = ErrorOf(One("#define S(s) void g##s(BE::Tensor y) {}\n// @BE f_1\nS(_1)\n"));
  EXPECT_NE(other.message.find("expands to the function `g_1` but not `f_1`; annotate the name "
                               "the expansion defines"),
            std::string::npos)
      << other.message;
}

TEST(StampedFunctionsTest, RunawayExpansionIsBoundedAndReported) {
  std::string text = "#define X0 a a\n";
  for (int i = 1; i <= 24; ++i) {
    text += "#define X" + std::to_string(i) + " X" + std::to_string(i - 1) + " X" +
            std::to_string(i - 1) + "\n";
  }
  text += "// @BE f\nX24\n";
  Error e = ErrorOf(One(text));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_NE(e.message.find("<module>:27:1: error: macro expansion stopped here"), std::string::npos)
      << e.message.substr(0, 300);
  EXPECT_NE(e.message.find("more than 1048576 tokens"), std::string::npos);
}

TEST(StampedFunctionsTest, MacrosFromUnseenHeadersStillNeedTokens) {
  // GEN comes from a header jaxcc does not read: with tokens the annotation works (decision 15).
  auto specs = Resolve(One("// @BE f_f32 arg ret\nGEN(_f32, float)\n"));
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  EXPECT_EQ(argspec::ToTokens(specs->front()), (Strings{"arg", "ret"}));
}

}  // namespace
}  // namespace jaxcc::signature

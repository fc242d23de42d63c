// Issue 37, point 4: the signature of a macro-stamped entry point as the compile flags make it,
// a refusal where an unevaluable branch decides a by-value tensor's role, and the exact C++
// types jaxcc hands the compiler to prove.
#include <gtest/gtest.h>

#include "argspec/arg_spec.h"
#include "signature/resolve.h"

namespace jaxcc::signature {
namespace {

using argspec::FunctionSpec;
using Strings = std::vector<std::string>;

const char* kReal = R"(#include "brainevent/common.h"
#ifndef REAL
#define REAL float
#endif
#define FFI_SCALE(SUFFIX) \
void scale##SUFFIX(const BE::Tensor& x, BE::Tensor& out, REAL alpha) {}
// @BE scale_a
FFI_SCALE(_a)
)";

const char* kInq = R"(#include "brainevent/common.h"
#ifndef INQ
#define INQ const
#endif
#define FFI_INC(SUFFIX) \
void inc##SUFFIX(INQ BE::Tensor x, BE::Tensor out, float alpha) {}
// @BE inc_a
FFI_INC(_a)
)";

Result<std::vector<FunctionSpec>> WithFlags(const char* text, const Strings& flags) {
  return ResolveSpecs({{"<module>", text}}, std::nullopt, {flags});
}

Strings Tokens(const char* text, const Strings& flags) {
  auto specs = WithFlags(text, flags);
  EXPECT_TRUE(specs.ok()) << specs.error().message;
  return specs.ok() ? argspec::ToTokens(specs->front()) : Strings{};
}

TEST(FlagMacrosTest, RegressionRealDefinedDoubleOnTheCommandLine) {
  EXPECT_EQ(Tokens(kReal, {"-DREAL=double"}), (Strings{"arg", "ret", "attr.alpha:float64"}));
  EXPECT_EQ(Tokens(kReal, {"-DREAL=double", "-UREAL"}),
            (Strings{"arg", "ret", "attr.alpha:float32"}));
  // Unflagged, jaxcc takes the source's own #define, and the compiler proves it (cpp_type).
  auto specs = WithFlags(kReal, {});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  const FunctionSpec& spec = specs->front();
  EXPECT_EQ(spec.params[0].cpp_type, "const ::jaxcc::Tensor&");
  EXPECT_EQ(spec.params[1].cpp_type, "::jaxcc::Tensor&");
  EXPECT_EQ(spec.params[2].cpp_type, "float");
  EXPECT_EQ(spec.line, 7);  // the annotation
}

TEST(FlagMacrosTest, RegressionInqEmptiedOnTheCommandLine) {
  EXPECT_EQ(Tokens(kInq, {"-DINQ="}), (Strings{"ret", "ret", "attr.alpha:float32"}));
  EXPECT_EQ(Tokens(kInq, {"-DINQ=const"}), (Strings{"arg", "ret", "attr.alpha:float32"}));
}

TEST(FlagMacrosTest, ByValueConstOnAnUnevaluableBranchIsRefused) {
  auto specs = WithFlags(kInq, {});
  ASSERT_FALSE(specs.ok());
  const std::string& m = specs.error().message;
  EXPECT_EQ(specs.error().kind, ErrorKind::kSignature);
  EXPECT_NE(m.find("<module>:7:8: error: parameter `x` of `inc_a` is a tensor taken by value"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("depends on macro `INQ`"), std::string::npos) << m;
  EXPECT_NE(m.find("extra_cflags=['-DINQ=...']"), std::string::npos) << m;
  EXPECT_NE(m.find("<module>:2:1: note: the condition jaxcc cannot evaluate"), std::string::npos)
      << m;
  // `out` and `alpha` do not depend on INQ: only `x` is refused; explicit roles are the user's.
  auto stated =
      ResolveSpecs({{"<module>", kInq}},
                   std::vector<FunctionRequest>{{"inc_a", Strings{"arg", "ret", "attr.alpha"}}});
  EXPECT_TRUE(stated.ok()) << stated.error().message;
}

TEST(FlagMacrosTest, UncertainMacrosAwayFromTensorsAreNotRefused) {
  // REAL decides only the scalar, which the compiler proves: no refusal for `x`/`out` by value.
  const char* text = R"(#ifndef REAL
#define REAL float
#endif
#define K(S) void k##S(const BE::Tensor x, BE::Tensor out, REAL a) {}
// @BE k_a
K(_a)
)";
  EXPECT_EQ(Tokens(text, {}), (Strings{"arg", "ret", "attr.a:float32"}));
}

TEST(FlagMacrosTest, ProofTypesKeepTheDeclaredSpellingOfOneScalar) {
  auto specs =
      ResolveSpecs({{"<module>",
                     "void f(const BE::Tensor x, BE::Tensor out, long long n, const double& d, "
                     "std::int64_t m) {}"}},
                   std::vector<FunctionRequest>{{"f", std::nullopt}});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  const auto& p = specs->front().params;
  EXPECT_EQ(p[0].cpp_type, "const ::jaxcc::Tensor");
  EXPECT_EQ(p[1].cpp_type, "::jaxcc::Tensor");
  EXPECT_EQ(p[2].cpp_type, "long long");  // int64 to jaxcc, but not `long` to the compiler
  EXPECT_EQ(p[3].cpp_type, "const double&");
  EXPECT_EQ(p[4].cpp_type, "std::int64_t");
  EXPECT_EQ(specs->front().line, 1);
}

TEST(FlagMacrosTest, AlternativeDefinitionsThatDifferInByValueConstAreRefused) {
  const char* text =
      "#ifdef USE_CONST\nvoid f(const BE::Tensor x, BE::Tensor y) {}\n#else\n"
      "void f(BE::Tensor x, BE::Tensor y) {}\n#endif\n";
  std::vector<FunctionRequest> f = {{"f", std::nullopt}};
  auto unknown = ResolveSpecs({{"<module>", text}}, f, {{}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("<module>:2:8: error: parameter `x` of `f` is a tensor "
                                         "taken by value, `const` (an input) in one definition"),
            std::string::npos)
      << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("<module>:1:1: note: the condition"), std::string::npos);
  auto decided = ResolveSpecs({{"<module>", text}}, f, {{"-DUSE_CONST"}});
  ASSERT_TRUE(decided.ok()) << decided.error().message;
  EXPECT_EQ(argspec::ToTokens(decided->front()), (Strings{"arg", "ret"}));
  auto undefined = ResolveSpecs({{"<module>", text}}, f, {{"-UUSE_CONST"}});
  ASSERT_TRUE(undefined.ok()) << undefined.error().message;
  EXPECT_EQ(argspec::ToTokens(undefined->front()), (Strings{"ret", "ret"}));
  // A prototype in an unknown branch does not decide: the definition's `const` is the one
  // that holds in the body.
  auto prototype = ResolveSpecs({{"<module>",
                                  "#ifdef X\nvoid f(const BE::Tensor x, BE::Tensor y);\n#endif\n"
                                  "void f(BE::Tensor x, BE::Tensor y) {}\n"}},
                                f, {{}});
  ASSERT_TRUE(prototype.ok()) << prototype.error().message;
  EXPECT_EQ(argspec::ToTokens(prototype->front()), (Strings{"ret", "ret"}));
}

}  // namespace
}  // namespace jaxcc::signature

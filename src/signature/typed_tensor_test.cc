// Declared dtypes (`arg:float32`, decision 158) through ResolveSpecs: annotations and requests
// keep them, inference from an untyped tensor leaves them unset, and the cross-check reads the
// token's role as before (the C++ tensor types carry no dtype jaxcc could compare).
#include <gtest/gtest.h>

#include "signature/resolve_test_util.h"

namespace jaxcc::signature {
namespace {

using namespace resolve_testing;  // NOLINT(google-build-using-namespace): test helpers only
using argspec::ElementType;

TEST(TypedTensorResolveTest, AnnotationTokensKeepTheirDtypes) {
  FunctionSpec spec = Single(
      "// @BE f arg:float32 arg ret:int32 attr.s\n"
      "void f(const BE::Tensor x, const BE::Tensor y, BE::Tensor out, float s) {}");
  ASSERT_EQ(spec.params.size(), 4u);
  EXPECT_EQ(spec.params[0].dtype, ElementType::kFloat32);
  EXPECT_EQ(spec.params[0].name, "x");
  EXPECT_FALSE(spec.params[1].dtype.has_value());
  EXPECT_EQ(spec.params[2].dtype, ElementType::kInt32);
  EXPECT_FALSE(spec.params[3].dtype.has_value());
  EXPECT_EQ(argspec::ToTokens(spec),
            (Strings{"arg:float32", "arg", "ret:int32", "attr.s:float32"}));
}

TEST(TypedTensorResolveTest, RequestTokensKeepTheirDtypesAndInferenceLeavesThemUnset) {
  const std::string source = "void f(const jaxcc::Tensor& x, jaxcc::Tensor& y) {}";
  EXPECT_EQ(TokensOf(source, Requests{{"f", Strings{"args:complex64", "rets:bfloat16"}}}),
            (Strings{"arg:complex64", "ret:bfloat16"}));
  FunctionSpec inferred = Single(source, Infer("f"));
  ASSERT_EQ(inferred.params.size(), 2u);
  EXPECT_FALSE(inferred.params[0].dtype.has_value());
  EXPECT_FALSE(inferred.params[1].dtype.has_value());
  // No declaration to check against (the name only in a macro argument): trusted as written.
  EXPECT_EQ(TokensOf("#define EXPORT(name) void name(const Tensor& x, Tensor& y) {}\n"
                     "EXPORT(g)\n",
                     Requests{{"g", Strings{"arg:int8", "ret:uint8"}}}),
            (Strings{"arg:int8", "ret:uint8"}));
}

TEST(TypedTensorResolveTest, AnUnknownDtypeInAnAnnotationPointsAtTheToken) {
  Error e = ErrorOf(One("// @BE f arg:flaot32 ret\nvoid f(const Tensor& x, Tensor& y);"));
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_NE(e.message.find("<module>:1:10: error: function `f`: unknown dtype `flaot32` in "
                           "`arg:flaot32`; did you mean `arg:float32`?"),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("\n         ^~~~~~~~~~~"), std::string::npos) << e.message;
}

TEST(TypedTensorResolveTest, TheRoleIsStillCrossCheckedWithTheDtypeQuoted) {
  Error scalar = ErrorOf(One("// @BE f arg:float32 ret\nvoid f(float x, Tensor& y) {}"));
  EXPECT_EQ(scalar.kind, ErrorKind::kSignature);
  EXPECT_NE(scalar.message.find("the spec says `arg:float32` but the C++ declares `float x`"),
            std::string::npos)
      << scalar.message;
  Error written =
      ErrorOf(One("// @BE f arg ret:float32\nvoid f(const Tensor& x, const Tensor& y) {}"));
  EXPECT_NE(written.message.find("a `const` tensor cannot be written"), std::string::npos)
      << written.message;
}

// Decision 147's proof reports at the stated line; its caret lands on the column recorded here
// (the function's name), not past the end of a short annotation.
TEST(StatedPlaceTest, TheAnnotationsNameElseTheDeclarationsNameElseTheInvocation) {
  FunctionSpec annotated = Single("  // @BE   f\nvoid f(const Tensor& x, Tensor& y) {}");
  EXPECT_EQ(annotated.line, 1);
  EXPECT_EQ(annotated.column, 12);
  FunctionSpec declared = Single("\nstatic void   f(const Tensor& x, Tensor& y) {}", Infer("f"));
  EXPECT_EQ(declared.line, 2);
  EXPECT_EQ(declared.column, 15);
  FunctionSpec stamped =
      Single("#define MAKE(n) void n(const Tensor& x, Tensor& y) {}\n\n   MAKE(g)\n", Infer("g"));
  EXPECT_EQ(stamped.line, 3);
  EXPECT_EQ(stamped.column, 4);
}

}  // namespace
}  // namespace jaxcc::signature

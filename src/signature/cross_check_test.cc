// An explicit spec against the declaration: count, kinds in order, attribute types and names.
#include "signature/cross_check.h"

#include <gtest/gtest.h>

#include "argspec/arg_spec.h"
#include "signature/active_code.h"

namespace jaxcc::signature {
namespace {

using Strings = std::vector<std::string>;

Result<argspec::FunctionSpec> Check(const std::string& text, const Strings& tokens) {
  SourceFile source{"<module>", text};
  SourceScan scan = ScanDeclarations(CodeTokens(DropDisabledBranches(Lex(text))), 0);
  if (scan.declarations.empty()) return MakeError(ErrorKind::kIo, "test: no declaration");
  auto spec = argspec::ParseArgSpec(scan.declarations.back().name, tokens);
  if (!spec.ok()) return spec.error();
  return CheckSpec(*spec, tokens, scan.declarations.back(), source);
}

std::string ErrorOf(const std::string& text, const Strings& tokens) {
  auto spec = Check(text, tokens);
  EXPECT_FALSE(spec.ok());
  if (spec.ok()) return "";
  EXPECT_EQ(spec.error().kind, ErrorKind::kSignature);
  return spec.error().message;
}

TEST(CheckSpecTest, MatchingSpecGetsNamesAndTypes) {
  auto spec =
      Check("namespace ops { void f(const Tensor& x, Tensor& y, float scale, cudaStream_t s); }",
            {"arg", "ret", "attr.scale", "stream"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(argspec::ToTokens(*spec), (Strings{"arg", "ret", "attr.scale:float32", "stream"}));
  EXPECT_EQ(spec->params[0].name, "x");
  EXPECT_EQ(spec->params[1].name, "y");
  EXPECT_EQ(spec->params[2].name, "scale");
  EXPECT_EQ(spec->params[3].name, "s");
  EXPECT_EQ(spec->namespaces, (Strings{"ops"}));
}

TEST(CheckSpecTest, ExplicitAttrMayRenameTheParameter) {
  auto spec = Check("void f(Tensor& y, float factor);", {"ret", "attr.scale:float32"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->params[1].name, "scale");  // the FFI attribute name
}

TEST(CheckSpecTest, ArgOnNonConstTensorIsAllowed) {
  // brainevent specs often say `arg` for `BE::Tensor x`; the spec decides, the call compiles.
  EXPECT_TRUE(Check("void f(BE::Tensor x, BE::Tensor out);", {"arg", "ret"}).ok());
}

TEST(CheckSpecTest, Int64StreamUnderAnyNameAndExplicitAttrStream) {
  EXPECT_TRUE(Check("void f(Tensor& y, int64_t s);", {"ret", "stream"}).ok());
  auto spec = Check("void f(Tensor& y, const int64_t stream);", {"ret", "attr.stream:int64"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->params[1].kind, argspec::ParamKind::kAttr);
  EXPECT_TRUE(Check("void f(Tensor& y, const int64_t stream);", {"ret", "attr.stream"}).ok());
}

TEST(CheckSpecTest, HalfAttributesBindToUint16) {
  EXPECT_TRUE(Check("void f(Tensor& y, uint16_t h);", {"ret", "attr.h:float16"}).ok());
  EXPECT_TRUE(Check("void f(Tensor& y, std::uint16_t h);", {"ret", "attr.h:bfloat16"}).ok());
  EXPECT_NE(ErrorOf("void f(Tensor& y, float h);", {"ret", "attr.h:float16"})
                .find("float16 attributes arrive as raw 16 bits: declare the parameter `uint16_t`"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, __half h);", {"ret", "attr.h:float16"})
                .find("which jaxcc cannot pass"),
            std::string::npos);
}

TEST(CheckSpecTest, UnknownTypesAreTrusted) {
  EXPECT_TRUE(
      Check("void f(const MyTensor& x, MyTensor& y, real_t s);", {"arg", "ret", "attr.s:float32"})
          .ok());
}

TEST(CheckSpecTest, CountMismatch) {
  EXPECT_EQ(ErrorOf("void f(const Tensor& x, Tensor& y);", {"arg", "ret", "attr.s:float32"}),
            "<module>:1:6: error: the spec of `f` has 3 entries [arg, ret, attr.s:float32] but "
            "the C++ declares 2 parameters (const Tensor&, Tensor&); give one token per "
            "parameter, in order (from the C++ alone jaxcc reads [arg, ret])\n"
            "void f(const Tensor& x, Tensor& y);\n"
            "     ^");
}

TEST(CheckSpecTest, KindMismatch) {
  EXPECT_EQ(ErrorOf("void f(const Tensor& x, Tensor& y);", {"ret", "arg"}),
            "<module>:1:8: error: parameter `x` of `f` does not match the spec: the spec says "
            "`ret` but the C++ declares `const Tensor& x`, an input tensor (`arg`); a `const` "
            "tensor cannot be written: drop the `const` or make the token `arg`\n"
            "void f(const Tensor& x, Tensor& y);\n"
            "       ^~~~~~~~~~~~~~~");
  EXPECT_NE(ErrorOf("void f(Tensor& y, float s);", {"ret", "arg"})
                .find("the spec says `arg` but the C++ declares `float s`, a scalar "
                      "(`attr.s:float32`); give the token in parentheses"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, float s);", {"ret", "stream"})
                .find("the stream is a `cudaStream_t` or an `int64_t`"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, cudaStream_t s);", {"ret", "attr.s:int64"})
                .find("the stream (`stream`)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, float* p);", {"ret", "arg"})
                .find("which jaxcc cannot pass: pointers"),
            std::string::npos);
}

TEST(CheckSpecTest, AttrTypeMismatch) {
  EXPECT_EQ(ErrorOf("void f(Tensor& y,\n       float s);", {"ret", "attrs.s:float64"}),
            "<module>:2:8: error: parameter `s` of `f` does not match the spec: the spec says "
            "`attrs.s:float64` but the C++ declares `float s`, a scalar (`attr.s:float32`); make "
            "them agree: `attr.s:float32`, or change the C++ type\n"
            "       float s);\n"
            "       ^~~~~~~");
}

TEST(CheckSpecTest, BareAttrNeedsTheSameName) {
  EXPECT_EQ(ErrorOf("void f(Tensor& y, float factor);", {"ret", "attr.scale"}),
            "<module>:1:19: error: `attr.scale` takes its type from the C++ parameter of that "
            "name, but parameter `factor` of `f` stands at its position: use the same name, or "
            "write the type (`attr.scale:float32`)\n"
            "void f(Tensor& y, float factor);\n"
            "                  ^~~~~~~~~~~~");
  EXPECT_NE(ErrorOf("void f(Tensor& y, real_t s);", {"ret", "attr.s"})
                .find("`attr.s` takes its type from the C++, but parameter `s` of `f` has type "
                      "`real_t`, which jaxcc does not know"),
            std::string::npos);
}

}  // namespace
}  // namespace jaxcc::signature

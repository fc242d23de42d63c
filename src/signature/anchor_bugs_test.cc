// ResolveSpecs against the signature-reading bugs of the anchor (§2.3, §2.4), one test each.
#include <gtest/gtest.h>

#include "signature/resolve_test_util.h"

namespace jaxcc::signature {
namespace {

using namespace resolve_testing;  // NOLINT(google-build-using-namespace): test helpers only

TEST(AnchorBugsTest, CommentInParameterListDoesNotSwapArgAndRet) {
  EXPECT_EQ(TokensOf("// @BE f\n"
                     "void f(const BE::Tensor a, // input; const, not written\n"
                     "       BE::Tensor o) {}\n"),
            (Strings{"arg", "ret"}));
  // A comma inside a comment does not split a parameter either.
  EXPECT_EQ(TokensOf("// @BE f\nvoid f(BE::Tensor o /* out, 2-D */, float s);"),
            (Strings{"ret", "attr.s:float32"}));
}

TEST(AnchorBugsTest, UsageCommentOrStringBeforeTheDefinitionIsNotMatched) {
  auto spec = Single(
      "// Usage: void f(const BE::Tensor x, BE::Tensor y, float unused);\n"
      "/* void f(int a, int b); */\n"
      "const char* kDoc = \"void f(BE::Tensor only)\";\n"
      "const char* kRaw = R\"(void f(double d))\";\n"
      "#define SIG \"void f(bool)\"\n"
      "void f(const BE::Tensor x, BE::Tensor out, int n) {}\n",
      Infer("f"));
  EXPECT_EQ(argspec::ToTokens(spec), (Strings{"arg", "ret", "attr.n:int32"}));
}

TEST(AnchorBugsTest, DefaultArgumentsAreKept) {
  EXPECT_EQ(TokensOf("void f(const Tensor& x, Tensor& y, float s = 1.0f, int n = g(1, 2)) {}",
                     Infer("f")),
            (Strings{"arg", "ret", "attr.s:float32", "attr.n:int32"}));
}

TEST(AnchorBugsTest, StreamSizeAndStdTypesAreNotDropped) {
  EXPECT_EQ(TokensOf("void f(const Tensor& x, Tensor& y, cudaStream_t st, size_t n, long l,"
                     " unsigned u, std::int32_t i) {}",
                     Infer("f")),
            (Strings{"arg", "ret", "stream", "attr.n:uint64", "attr.l:int64", "attr.u:uint32",
                     "attr.i:int32"}));
}

TEST(AnchorBugsTest, HalfAndTypedefsAreErrorsNotDrops) {
  Error half = ErrorOf(One("void f(Tensor& y, __half h) {}"), Infer("f"));
  EXPECT_EQ(half.kind, ErrorKind::kSignature);
  EXPECT_NE(half.message.find("<module>:1:19: error: parameter `h` of `f` has type `__half`"),
            std::string::npos);
  Error alias = ErrorOf(One("typedef float real;\nvoid f(Tensor& y, real s) {}"), Infer("f"));
  EXPECT_NE(alias.message.find("<module>:2:19: error: parameter `s` of `f` has type `real`"),
            std::string::npos);
}

TEST(AnchorBugsTest, ConstInt64StreamIsTheStreamNotAnAttribute) {
  EXPECT_EQ(TokensOf("// @BE f\nvoid f(const BE::Tensor a, BE::Tensor o, const int64_t stream) {}"),
            (Strings{"arg", "ret", "stream"}));
}

TEST(AnchorBugsTest, CommentedOutOrDisabledDeclarationIsNotPickedUp) {
  EXPECT_EQ(TokensOf("// void f(BE::Tensor o, float old_scale) {}\n"
                     "#if 0\nvoid f(BE::Tensor o, int legacy) {}\n#endif\n"
                     "void f(const BE::Tensor x, BE::Tensor o) {}\n",
                     Infer("f")),
            (Strings{"arg", "ret"}));
}

TEST(AnchorBugsTest, AnnotationInBlockCommentStringOrIfZeroIsIgnored) {
  auto specs =
      Resolve(One("/* // @BE a arg ret */\n"
                  "const char* s = \"// @BE b arg ret\";\n"
                  "#if 0\n// @BE c arg ret\n#endif\n"
                  "// @BE real\n"
                  "void real(const Tensor& x, Tensor& y) {}\n"));
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  ASSERT_EQ(specs->size(), 1u);
  EXPECT_EQ((*specs)[0].name, "real");
}

TEST(AnchorBugsTest, TrailingCommentAfterInlineTokensIsNotAToken) {
  EXPECT_EQ(TokensOf("// @BE f arg ret // two tensors\nvoid f(const Tensor& x, Tensor& y) {}"),
            (Strings{"arg", "ret"}));
}

TEST(AnchorBugsTest, QualifiedDefinitionIsFoundAndCalledQualified) {
  auto spec = Single(
      "namespace ops { void f(const Tensor& x, Tensor& y); }\n"
      "void ops::f(const Tensor& x, Tensor& y) {}\n",
      Infer("f"));
  EXPECT_EQ(spec.namespaces, (Strings{"ops"}));
  EXPECT_EQ(argspec::ToTokens(spec), (Strings{"arg", "ret"}));
}

TEST(AnchorBugsTest, NamespacedFunctionRecordsItsPath) {
  auto spec = Single("namespace a { namespace b {\n// @BE f\nvoid f(Tensor& y) {}\n} }\n");
  EXPECT_EQ(spec.namespaces, (Strings{"a", "b"}));
}

TEST(AnchorBugsTest, TemplateIsRefused) {
  Error e = ErrorOf(One("// @BE f\ntemplate <typename T> void f(const Tensor& x, Tensor& y) {}"));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_NE(e.message.find("`f` is a template"), std::string::npos);
  EXPECT_NE(e.message.find("export a non-template wrapper"), std::string::npos);
}

TEST(AnchorBugsTest, ParenthesesInsideTheParameterListDoNotTruncateIt) {
  EXPECT_EQ(TokensOf("void f(const Tensor& x __attribute__((unused)), Tensor& y,"
                     " float s __attribute__((unused))) {}",
                     Infer("f")),
            (Strings{"arg", "ret", "attr.s:float32"}));
  Error pointer = ErrorOf(One("void f(Tensor& y, void (*cb)(int), float s) {}"), Infer("f"));
  EXPECT_NE(pointer.message.find("parameter `cb` of `f` has type `void(*)(int)`"),
            std::string::npos);
  Error type_of = ErrorOf(One("void f(Tensor& y, decltype(1.0f) s) {}"), Infer("f"));
  EXPECT_NE(type_of.message.find("jaxcc does not know the type `decltype(1.0f)`"),
            std::string::npos);
}

TEST(AnchorBugsTest, TypesMerelyContainingTensorAreNotTensors) {
  Error e = ErrorOf(One("void f(const TensorList& xs, Tensor& y) {}"), Infer("f"));
  EXPECT_NE(e.message.find("jaxcc does not know the type `TensorList`"), std::string::npos);
}

TEST(AnchorBugsTest, ReturnTypeNeedNotBeVoid) {
  EXPECT_EQ(TokensOf("int f(const Tensor& x, Tensor& y) { return 0; }", Infer("f")),
            (Strings{"arg", "ret"}));
  EXPECT_EQ(TokensOf("auto f(const Tensor& x, Tensor& y) -> void {}", Infer("f")),
            (Strings{"arg", "ret"}));
  EXPECT_EQ(TokensOf("static inline Status f(Tensor& y) { return {}; }", Infer("f")),
            (Strings{"ret"}));
}

TEST(AnchorBugsTest, MacroStampedEntryPointsWithAnnotationTokens) {
  const char* text =
      "#define GEN(S, T) void f##S(const Tensor& x, Tensor& y, T v) {}\n"
      "namespace ops {\n"
      "// @BE f_f32 arg ret attr.v:float32\n"
      "GEN(_f32, float)\n"
      "}\n"
      "// @BE f_f64 arg ret attr.v:float64\n"
      "GEN(_f64, double)\n";
  auto specs = Resolve(One(text));
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name, "f_f32");
  EXPECT_EQ((*specs)[0].namespaces, (Strings{"ops"}));
  EXPECT_EQ(argspec::ToTokens((*specs)[0]), (Strings{"arg", "ret", "attr.v:float32"}));
  EXPECT_EQ((*specs)[1].namespaces, Strings{});
}

TEST(AnchorBugsTest, MacroStampedBareAttrIsAnErrorAtTheAnnotation) {
  Error e = ErrorOf(One("// @BE f_f32 arg ret attr.v\nGEN(_f32, float)\n"));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_EQ(e.message,
            "<module>:1:22: error: `attr.v` takes its type from the C++ declaration of `f_f32`, "
            "but none was found (a macro may define it): write the type, e.g. "
            "`attr.v:float32`\n"
            "// @BE f_f32 arg ret attr.v\n"
            "                     ^~~~~~");
}

TEST(AnchorBugsTest, MacroStampedBareAnnotationAsksForTokens) {
  Error e = ErrorOf(One("// @BE f_f32\nGEN(_f32, float)\n"));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_EQ(e.message,
            "<module>:1:8: error: function `f_f32` not found in the sources: no source declares "
            "it at namespace scope; if a macro from a header jaxcc does not read stamps it "
            "out, write its tokens in the annotation, e.g. `// @jaxcc f_f32 arg ret`\n"
            "// @BE f_f32\n"
            "       ^~~~~");
}

}  // namespace
}  // namespace jaxcc::signature

// ResolveSpecs end to end: annotations, requests, errors and robustness.
#include <gtest/gtest.h>

#include "signature/resolve_test_util.h"

namespace jaxcc::signature {
namespace {

using namespace resolve_testing;  // NOLINT(google-build-using-namespace): test helpers only

// --- ResolveSpecs semantics ----------------------------------------------------------------------
TEST(ResolveSpecsTest, NoAnnotationsAndNoRequests) {
  Error e = ErrorOf(One("void f(Tensor& y) {}"));
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_EQ(e.message,
            "no functions to export: annotate each entry point with `// @jaxcc <function> "
            "[tokens...]` (or `// @BE ...`) in a line comment, or pass `functions`");
}

TEST(ResolveSpecsTest, AnnotationsFromAllSourcesInOrder) {
  std::vector<SourceFile> sources = {
      {"a.cu", "// @jaxcc second arg ret\nvoid second(const Tensor& x, Tensor& y) {}\n"},
      {"b.cu", "// @BE first\nnamespace { void first(Tensor& y) {} }\n"}};
  auto specs = Resolve(sources);
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name, "second");
  EXPECT_EQ((*specs)[0].source_index, 0);
  EXPECT_EQ((*specs)[1].name, "first");
  EXPECT_EQ((*specs)[1].source_index, 1);
  EXPECT_EQ((*specs)[1].namespaces, Strings{});  // anonymous: callable unqualified there
}

TEST(ResolveSpecsTest, DuplicateAnnotationIsAnError) {
  Error e = ErrorOf(One("// @BE f\n// @BE f arg ret\nvoid f(const Tensor& x, Tensor& y);"));
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_NE(e.message.find("<module>:2:8: error: `f` is annotated twice"), std::string::npos);
}

TEST(ResolveSpecsTest, AnnotationSpecErrorPointsAtTheToken) {
  Error e =
      ErrorOf(One("// @BE f arg ret attr.s:float\nvoid f(const Tensor& x, Tensor& y, float s);"));
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_EQ(e.message,
            "<module>:1:18: error: function `f`: unknown attribute type `float` in "
            "`attr.s:float`; did you mean `float32`? valid types: bool, int8, int16, int32, "
            "int64, uint8, uint16, uint32, uint64, float32, float64, float16, bfloat16\n"
            "// @BE f arg ret attr.s:float\n"
            "                 ^~~~~~~~~~~~");
  Error no_ret = ErrorOf(One("// @BE f arg\nvoid f(const Tensor& x);"));
  EXPECT_NE(no_ret.message.find("<module>:1:8: error: function `f`: the arg_spec [arg] has no "
                                "`ret`"),
            std::string::npos);
}

TEST(ResolveSpecsTest, AnnotationTokensAreCrossChecked) {
  Error e = ErrorOf(One("// @BE f ret arg\nvoid f(const Tensor& x, Tensor& y) {}"));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_NE(e.message.find("<module>:2:8: error: parameter `x` of `f` does not match the spec"),
            std::string::npos);
}

TEST(ResolveSpecsTest, DictFormUsesAndChecksTokens) {
  Requests requests = {{"scale", Strings{"args", "rets", "attrs.factor"}}};
  auto spec = Single("void scale(const Tensor& x, Tensor& y, double factor) {}", requests);
  EXPECT_EQ(argspec::ToTokens(spec), (Strings{"arg", "ret", "attr.factor:float64"}));
  EXPECT_EQ(spec.params[0].name, "x");
  // Dict-form spec errors have no location: the tokens came from Python.
  Error e = ErrorOf(One("void f(Tensor& y);"), Requests{{"f", Strings{"ret", "bogus"}}});
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_EQ(e.message.rfind("function `f`: unknown arg_spec token `bogus`", 0), 0u);
}

TEST(ResolveSpecsTest, RequestOrderIsKept) {
  auto specs = Resolve(One("void a(Tensor& y) {}\nvoid b(Tensor& y) {}\n"),
                       Requests{{"b", std::nullopt}, {"a", std::nullopt}});
  ASSERT_TRUE(specs.ok());
  EXPECT_EQ((*specs)[0].name, "b");
  EXPECT_EQ((*specs)[1].name, "a");
}

TEST(ResolveSpecsTest, RequestedTwiceIsASpecError) {
  Error e =
      ErrorOf(One("void a(Tensor& y) {}"), Requests{{"a", std::nullopt}, {"a", Strings{"ret"}}});
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_EQ(e.message, "function `a` is requested twice in `functions`; list each function once");
}

TEST(ResolveSpecsTest, InvalidRequestedName) {
  Error e = ErrorOf(One("void a(Tensor& y) {}"), Requests{{"ops::a", std::nullopt}});
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_NE(e.message.find("`ops::a` is not a valid function name"), std::string::npos);
}

TEST(ResolveSpecsTest, NotFoundListsNearMisses) {
  Error e = ErrorOf(One("void scale_f32(const Tensor& a, Tensor& o) {}\n"
                        "void scale_f64(const Tensor& a, Tensor& o) {}\n"
                        "void unrelated(const Tensor& a, Tensor& o) {}\n"),
                    Infer("scale_f16"));
  EXPECT_EQ(e.kind, ErrorKind::kSignature);
  EXPECT_EQ(e.message,
            "function `scale_f16` not found in the sources: no source declares it at namespace "
            "scope; did you mean one of `scale_f32`, `scale_f64`?");
  Error one =
      ErrorOf(One("// @BE vector_add\nvoid vector_add(Tensor& o) {}\n"), Infer("vectoradd"));
  EXPECT_EQ(one.message,
            "function `vectoradd` not found in the sources: no source declares it at namespace "
            "scope; did you mean `vector_add`?");
  Error none = ErrorOf(One("void g(Tensor& o) {}"), Requests{{"zzz", Strings{"ret"}}});
  EXPECT_EQ(none.message,
            "function `zzz` not found in the sources: no source declares it at "
            "namespace scope");
}

TEST(ResolveSpecsTest, NotFoundExplainsAMemberFunction) {
  Error e = ErrorOf(One("struct K {\n  void run(Tensor& o);\n};\n"), Infer("run"));
  EXPECT_NE(e.message.find("it appears at <module>:2:8, but not as a function declared at "
                           "namespace scope"),
            std::string::npos);
}

TEST(ResolveSpecsTest, DictFormForMacroArgumentName) {
  // The name appears as a macro argument: accepted with explicit types, in that namespace.
  auto spec = Single("namespace k {\nDEFINE_ADD(add_f32, float)\n}\n",
                     Requests{{"add_f32", Strings{"arg", "arg", "ret"}}});
  EXPECT_EQ(spec.name, "add_f32");
  EXPECT_EQ(spec.namespaces, (Strings{"k"}));
  EXPECT_EQ(spec.source_index, 0);
}

TEST(ResolveSpecsTest, ListFormUsesTheAnnotationTokens) {
  auto specs = Resolve({{"a.cc", "int x;\n"}, {"b.cc", "// @BE f_f32 arg ret\nGEN(_f32)\n"}},
                       Infer("f_f32"));
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  EXPECT_EQ((*specs)[0].source_index, 1);
  EXPECT_EQ(argspec::ToTokens((*specs)[0]), (Strings{"arg", "ret"}));
}

TEST(ResolveSpecsTest, AnnotationErrorsDoNotMatterWhenFunctionsAreGiven) {
  auto specs = Resolve(One("// @BE\n// @BE f\n// @BE f\nvoid f(Tensor& y) {}\n"), Infer("f"));
  ASSERT_TRUE(specs.ok()) << specs.error().message;
}

TEST(ResolveSpecsTest, EmptyRequestList) {
  EXPECT_EQ(ErrorOf(One("void f(Tensor& y);"), Requests{}).kind, ErrorKind::kSpec);
}

TEST(ResolveSpecsTest, SourceIndexOfTheDefinition) {
  std::vector<SourceFile> sources = {{"decl.h", "void f(const Tensor&, Tensor&);\n"},
                                     {"impl.cc", "void f(const Tensor& in, Tensor& out) {}\n"}};
  auto specs = Resolve(sources, Infer("f"));
  ASSERT_TRUE(specs.ok());
  EXPECT_EQ((*specs)[0].source_index, 1);
  EXPECT_EQ((*specs)[0].params[1].name, "out");
}

TEST(ResolveSpecsTest, SeedScaleBy) {
  auto spec = Single(
      "__global__ void scale_kernel(const float* x, float* out, int n, float factor) {}\n"
      "// @BE scale_by arg ret attr.scale_factor:float32 stream\n"
      "void scale_by(const BE::Tensor x, BE::Tensor out,\n"
      "              float scale_factor, int64_t stream) {\n"
      "    scale_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(x, out, n, f);\n"
      "}\n");
  EXPECT_EQ(argspec::ToTokens(spec),
            (Strings{"arg", "ret", "attr.scale_factor:float32", "stream"}));
  EXPECT_EQ(spec.params[3].name, "stream");
}

}  // namespace
}  // namespace jaxcc::signature

namespace jaxcc::signature {
namespace {

// Truncated sources (an editor mid-keystroke) must give errors, never crashes or hangs.
TEST(ResolveSpecsRobustnessTest, EveryPrefixOfASourceIsHandled) {
  const std::string text =
      "#include <x.h>\n#define GEN(S) void g##S(Tensor& o) {}\n"
      "namespace a { namespace {\n"
      "// @BE f arg ret attr.s:float32 // note\n"
      "template <class T, int N = (1 > 0)> void t(T x) {}\n"
      "void f(const BE::Tensor x /* const, */, BE::Tensor& y [[maybe_unused]],\n"
      "       float s = R\"d(a)d\"[0] + u8'c' + 1'000.5e-3f) {\n"
      "  struct { int q; } w{};\n}\n} }\n"
      "extern \"C\" { int c(void (*cb)(int), ...); }\n";
  for (size_t n = 0; n <= text.size(); ++n) {
    std::vector<SourceFile> sources = {{"<module>", text.substr(0, n)}};
    (void)ResolveSpecs(sources, std::nullopt);
    (void)ResolveSpecs(sources, std::vector<FunctionRequest>{{"f", std::nullopt}});
  }
  auto full = ResolveSpecs({{"<module>", text}}, std::nullopt);
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_EQ(full->at(0).namespaces, (std::vector<std::string>{"a"}));
}

TEST(HostileSourceTest, AnUnclosedParameterListIsASignatureErrorAtTheName) {
  for (const char* text :
       {"void f(const BE::Tensor& x, BE::Tensor& y", "void f(const BE::Tensor& x, BE::Tensor& y;",
        "void f(const BE::Tensor& x, g(BE::Tensor& y)"}) {
    Error error = ErrorOf(One(text), Infer("f"));
    EXPECT_EQ(error.kind, ErrorKind::kSignature) << text;
    EXPECT_NE(error.message.find("<module>:1:6: error: the parameter list of `f` is never closed"),
              std::string::npos)
        << error.message;
  }
}

}  // namespace
}  // namespace jaxcc::signature

// Finding namespace-scope function declarations: scopes, bodies, prefixes, macros.
#include "signature/declarations.h"

#include <gtest/gtest.h>

#include "signature/active_code.h"

namespace jaxcc::signature {
namespace {

using Strings = std::vector<std::string>;

SourceScan ScanText(const std::string& text) {
  return ScanDeclarations(CodeTokens(DropDisabledBranches(Lex(text))), 0);
}

std::vector<const Declaration*> Named(const SourceScan& scan, const std::string& name) {
  std::vector<const Declaration*> out;
  for (const Declaration& d : scan.declarations) {
    if (d.name == name) out.push_back(&d);
  }
  return out;
}

Strings Names(const SourceScan& scan) {
  Strings out;
  for (const Declaration& d : scan.declarations) out.push_back(d.name);
  return out;
}

TEST(DeclarationsTest, PrototypeAndDefinition) {
  auto scan =
      ScanText("void f(const Tensor& x, Tensor& y);\nvoid f(const Tensor& x, Tensor& y) {}\n");
  auto found = Named(scan, "f");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_FALSE(found[0]->is_definition);
  EXPECT_TRUE(found[1]->is_definition);
  EXPECT_EQ(found[1]->name_token.line, 2);
  EXPECT_EQ(found[1]->name_token.column, 6);
  EXPECT_EQ(found[1]->params.size(), 2u);
  EXPECT_EQ(found[1]->close_paren.column, 34);
}

TEST(DeclarationsTest, BodiesAreSkipped) {
  auto scan = ScanText(
      "void outer(Tensor o) {\n"
      "  void inner(int);\n"
      "  if (x) { g(1); }\n"
      "  auto l = [](int z) { return z; };\n"
      "}\n"
      "void after(Tensor o) {}\n");
  EXPECT_EQ(Names(scan), (Strings{"outer", "after"}));
}

TEST(DeclarationsTest, ClassBodiesAndInitializersAreSkipped) {
  auto scan = ScanText(
      "struct S { void member(Tensor o); static void smember(int); };\n"
      "class C : public Base { public: C(int); void m() {} } c;\n"
      "enum class E : int { A = 1, B };\n"
      "int x = compute(1, 2);\n"
      "auto lambda = [](Tensor o) { fill(o); };\n"
      "int table[] = {f(1), f(2)};\n"
      "Widget w{make(3)};\n"
      "void real(Tensor o);\n");
  EXPECT_EQ(Names(scan), (Strings{"real"}));
}

TEST(DeclarationsTest, Namespaces) {
  auto scan = ScanText(
      "namespace a { namespace b {\n"
      "void f1(Tensor o);\n"
      "} void f2(Tensor o); }\n"
      "namespace a::b::c { void f3(Tensor o); }\n"
      "inline namespace v1 { void f4(Tensor o); }\n"
      "namespace { void f5(Tensor o); }\n"
      "namespace x { namespace { void f6(Tensor o); } }\n"
      "namespace [[deprecated]] old { void f7(Tensor o); }\n"
      "namespace alias = a::b;\n"
      "void f8(Tensor o);\n");
  auto path = [&](const char* name) { return Named(scan, name).at(0)->namespaces; };
  EXPECT_EQ(path("f1"), (Strings{"a", "b"}));
  EXPECT_EQ(path("f2"), (Strings{"a"}));
  EXPECT_EQ(path("f3"), (Strings{"a", "b", "c"}));
  EXPECT_EQ(path("f4"), (Strings{"v1"}));
  EXPECT_EQ(path("f5"), Strings{});
  EXPECT_TRUE(Named(scan, "f5")[0]->in_anonymous_namespace);
  EXPECT_EQ(path("f6"), (Strings{"x"}));
  EXPECT_TRUE(Named(scan, "f6")[0]->in_anonymous_namespace);
  EXPECT_EQ(path("f7"), (Strings{"old"}));
  EXPECT_EQ(path("f8"), Strings{});
  EXPECT_FALSE(Named(scan, "f8")[0]->in_anonymous_namespace);
}

TEST(DeclarationsTest, QualifiedDefinitions) {
  auto scan = ScanText(
      "namespace ops { void f(Tensor o); }\nvoid ops::f(Tensor o) {}\n"
      "void ::g(Tensor o);\n");
  auto found = Named(scan, "f");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0]->namespaces, (Strings{"ops"}));
  EXPECT_EQ(found[1]->namespaces, (Strings{"ops"}));
  EXPECT_TRUE(found[1]->is_definition);
  EXPECT_EQ(Named(scan, "g").at(0)->namespaces, Strings{});
}

TEST(DeclarationsTest, ExternCAndPrefixes) {
  auto scan = ScanText(
      "extern \"C\" {\n void c1(Tensor o);\n}\n"
      "extern \"C\" void c2(Tensor o) {}\n"
      "static inline void c3(Tensor o) {}\n"
      "__host__ void c4(Tensor o) {}\n"
      "[[nodiscard]] int c5(Tensor o);\n"
      "__attribute__((visibility(\"default\"))) void c6(Tensor o);\n"
      "void __attribute__((noinline)) c7(Tensor o);\n"
      "auto c8(Tensor o) -> void {}\n"
      "std::vector<int> c9(Tensor o);\n"
      "decltype(auto) c10(Tensor o);\n"
      "void c11 [[deprecated]] (Tensor o);\n"
      "const Status* c12(Tensor o) noexcept;\n");
  EXPECT_EQ(Names(scan),
            (Strings{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12"}));
  EXPECT_TRUE(Named(scan, "c2")[0]->is_definition);
  EXPECT_TRUE(Named(scan, "c8")[0]->is_definition);
}

TEST(DeclarationsTest, TemplatesAndKernels) {
  auto scan = ScanText(
      "template <typename T, int N = (3 > 2)> void t1(Tensor o) {}\n"
      "template <> void t1<float>(Tensor o) {}\n"
      "__global__ void k1(float* x) {}\n"
      "template <class T> __global__ void __launch_bounds__(256) k2(T* x) {}\n"
      "void plain(Tensor o);\n");
  EXPECT_TRUE(Named(scan, "t1").at(0)->is_template);
  EXPECT_EQ(Named(scan, "t1").size(), 1u);  // the specialization t1<float> is no new name
  EXPECT_TRUE(Named(scan, "k1").at(0)->is_cuda_kernel);
  EXPECT_TRUE(Named(scan, "k2").at(0)->is_template);
  EXPECT_TRUE(Named(scan, "__launch_bounds__").empty());
  EXPECT_FALSE(Named(scan, "plain").at(0)->is_template);
}

TEST(DeclarationsTest, MacroInvocationsAreNotDeclarations) {
  auto scan = ScanText(
      "GEN(_f32, float)\n"
      "GEN(_f64, double)\n"
      "template <class T> void helper(T) {}\n"
      "DEFINE(vector_add, float)\n"
      "namespace ops { void f(Tensor o); }\n");
  EXPECT_EQ(Names(scan), (Strings{"helper", "f"}));
  EXPECT_TRUE(Named(scan, "helper")[0]->is_template);
  EXPECT_EQ(Named(scan, "f")[0]->namespaces, (Strings{"ops"}));
}

TEST(DeclarationsTest, GtestStyleMacroWithBodyDoesNotHideTheNextFunction) {
  auto scan =
      ScanText("TEST(A, B) { void no(int); }\nvoid yes(Tensor o) {}\nvoid also(Tensor o);\n");
  EXPECT_EQ(Names(scan), (Strings{"yes", "also"}));
}

TEST(DeclarationsTest, TypedefsAndCallsAreNotDeclarations) {
  auto scan = ScanText(
      "typedef void fn_t(int);\n"
      "using g_t = void(int);\n"
      "static_assert(sizeof(int) == 4, \"x\");\n"
      "int (*pointer)(int) = nullptr;\n"
      "void f(Tensor o);\n");
  EXPECT_EQ(Names(scan), (Strings{"f"}));
}

TEST(DeclarationsTest, IfZeroCodeIsIgnored) {
  auto scan = ScanText("#if 0\nvoid f(Tensor a, Tensor b);\n#endif\nvoid f(Tensor o);\n");
  auto found = Named(scan, "f");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->params.size(), 1u);
}

TEST(DeclarationsTest, StrayBracesDoNotCrash) {
  auto scan = ScanText("}\n} void f(Tensor o); {\nvoid g(");
  EXPECT_EQ(Named(scan, "f").size(), 1u);
}

TEST(DeclarationsTest, MultiLineParametersWithComments) {
  auto scan = ScanText(
      "void f(\n"
      "    BE::Tensor a,  // const input, really\n"
      "    /* const */ BE::Tensor o,\n"
      "    float s = 1.0f)\n"
      "{}\n");
  auto found = Named(scan, "f");
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found[0]->params.size(), 3u);
  EXPECT_FALSE(found[0]->params[0].is_const);
  EXPECT_FALSE(found[0]->params[1].is_const);
  EXPECT_EQ(found[0]->params[2].name, "s");
  EXPECT_EQ(found[0]->params[1].tokens.front().line, 3);
  EXPECT_EQ(found[0]->params[1].tokens.front().column, 17);
}

TEST(DeclarationsTest, QualifiedSignature) {
  auto scan = ScanText("namespace a { void f(const Tensor& x, float s = 2); }");
  EXPECT_EQ(scan.declarations.at(0).QualifiedSignature(), "::a::f(const Tensor&, float)");
}

TEST(NamespacesAtTest, InnermostRange) {
  std::string text = "namespace a {\nint x;\nnamespace b { int y; }\nint z;\n}\nint w;";
  auto scan = ScanText(text);
  EXPECT_EQ(NamespacesAt(scan.ranges, text.find("x")), (Strings{"a"}));
  EXPECT_EQ(NamespacesAt(scan.ranges, text.find("y")), (Strings{"a", "b"}));
  EXPECT_EQ(NamespacesAt(scan.ranges, text.find("z")), (Strings{"a"}));
  EXPECT_EQ(NamespacesAt(scan.ranges, text.find("w")), Strings{});
}

// Issue 50: a full specialisation's body was not seen as a function body, so the declaration
// after it inherited its `template` and a plain kernel was refused as a template.
TEST(DeclarationsTest, SpecialisationDoesNotMakeTheNextFunctionATemplate) {
  auto scan = ScanText(
      "template <typename T> T twice(T v) { return 2 * v; }\n"
      "template <> double twice<double>(double v) { return 2.0 * v; }\n"
      "void scale2(const Tensor x, Tensor out) { twice(1.0f); }\n");
  auto kernel = Named(scan, "scale2");
  ASSERT_EQ(kernel.size(), 1u);
  EXPECT_FALSE(kernel[0]->is_template);
  EXPECT_TRUE(kernel[0]->is_definition);
  auto twice = Named(scan, "twice");
  ASSERT_EQ(twice.size(), 1u);  // the specialisation is no new name
  EXPECT_TRUE(twice[0]->is_template);
}

// Every form of template, specialisation and overload before a plain kernel, alone and in pairs,
// in and out of a namespace: the kernel is found once, a definition, not a template.
TEST(DeclarationsTest, NoTemplateFormBeforeAKernelMakesItATemplate) {
  const std::vector<std::string> forms = {
      "template <typename T> T f(T v) { return v; }",
      "template <> double f<double>(double v) { return v; }",
      "template <> inline float f<float>(float v) { return v; }",
      "template <> [[nodiscard]] int f<int>(int v) { return v; }",
      "template <typename T, int N> T g(T v) { return v * N; }",
      "template <> long g<long, 3>(long v) { return v; }",
      "template <> std::vector<int> h<std::vector<int>>(std::vector<int> v) { return v; }",
      "template double f<double>(double);",
      "template <> double f<double>(double v);",
      "float f(float v) { return v; }",
      "int f(int v, int w = k<3>(2)) { return v + w; }",
      "template <class T> struct S { T f(T v) { return v; } };",
      "template <class T> using V = std::vector<T>;",
      // Operator functions (a template one made the kernel after it a template).
      "template <class Out> Out& operator<<(Out& out, const P& p) { return out << p.a; }",
      "template <class T> bool operator==(const T& a, const T& b) { return a.v == b.v; }",
      "inline P operator+(P a, P b) { return a; }",
      "template <class T> P& P::operator()(T v) { return *this; }",
      "template <class T> P::operator T() const { return T(); }",
      "struct P { template <class T> bool operator()(T v) const { return v < 2; } };",
  };
  const std::string kernel = "void kernel(const Tensor x, Tensor out) { f(1); }\n";
  for (size_t a = 0; a < forms.size(); ++a) {
    for (size_t b = 0; b <= forms.size(); ++b) {
      for (bool in_namespace : {false, true}) {
        std::string text = forms[a] + "\n" + (b < forms.size() ? forms[b] + "\n" : "");
        if (in_namespace) text = "namespace ops {\n" + text + "}\n";
        text += kernel;
        const SourceScan scan = ScanText(text);  // outlives the pointers Named returns into it
        auto found = Named(scan, "kernel");
        ASSERT_EQ(found.size(), 1u) << text;
        EXPECT_FALSE(found[0]->is_template) << text;
        EXPECT_TRUE(found[0]->is_definition) << text;
      }
    }
  }
}

}  // namespace
}  // namespace jaxcc::signature

// One function per name: prototypes merge with definitions; templates, kernels, overloads fail.
#include "signature/lookup.h"

#include <gtest/gtest.h>

#include "signature/active_code.h"

namespace jaxcc::signature {
namespace {

struct Fixture {
  explicit Fixture(std::vector<std::string> texts) {
    for (size_t i = 0; i < texts.size(); ++i) {
      sources.push_back({"s" + std::to_string(i) + ".cc", texts[i]});
      SourceScan scan =
          ScanDeclarations(CodeTokens(DropDisabledBranches(Lex(texts[i]))), static_cast<int>(i));
      declarations.insert(declarations.end(), scan.declarations.begin(), scan.declarations.end());
    }
  }
  Result<const Declaration*> Find(const std::string& name) const {
    return FindFunction(name, IndexByName(declarations), sources);
  }
  std::vector<SourceFile> sources;
  std::vector<Declaration> declarations;
};

TEST(FindFunctionTest, NotFoundIsNull) {
  Fixture f({"void g(Tensor o);"});
  auto found = f.Find("f");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, nullptr);
}

TEST(FindFunctionTest, PrototypeThenDefinitionPrefersTheDefinition) {
  Fixture f({"void f(const Tensor&, Tensor&);\nvoid f(const Tensor& x, Tensor& y) {}\n"});
  auto found = f.Find("f");
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_NE(*found, nullptr);
  EXPECT_TRUE((*found)->is_definition);
  EXPECT_EQ((*found)->params[0].name, "x");
}

TEST(FindFunctionTest, DefinitionInAnotherSourceWins) {
  Fixture f({"void f(const Tensor&, Tensor&);", "int pad;\nvoid f(const Tensor& x, Tensor& y) {}"});
  auto found = f.Find("f");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->source_index, 1);
}

TEST(FindFunctionTest, OutOfLineNamespaceDefinitionMerges) {
  Fixture f({"namespace ops { void f(Tensor& o); }\nvoid ops::f(Tensor& out) {}\n"});
  auto found = f.Find("f");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ((*found)->params[0].name, "out");
}

TEST(FindFunctionTest, TemplateIsAnError) {
  Fixture f({"template <typename T>\nvoid f(const Tensor& x, Tensor& y) {}\n"});
  auto found = f.Find("f");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().kind, ErrorKind::kSignature);
  EXPECT_EQ(found.error().message,
            "s0.cc:2:6: error: `f` is a template: jaxcc calls the function with concrete "
            "arguments and cannot choose template arguments; export a non-template wrapper "
            "instead, e.g. `void f_f32(const jaxcc::Tensor& x, jaxcc::Tensor& y) { f<float>(x, "
            "y); }`\n"
            "void f(const Tensor& x, Tensor& y) {}\n"
            "     ^");
}

TEST(FindFunctionTest, OverloadsListEveryLocation) {
  Fixture f({"void f(const Tensor& x, Tensor& y) {}\n",
             "void f(const Tensor& x, Tensor& y, float s) {}\n"});
  auto found = f.Find("f");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().message,
            "s0.cc:1:6: error: `f` is overloaded: `::f(const Tensor&, Tensor&)` here and 1 other "
            "declaration below differ in parameters or namespace; jaxcc exports one C++ function "
            "per name, so rename the others or export a wrapper with a unique name\n"
            "void f(const Tensor& x, Tensor& y) {}\n"
            "     ^\n"
            "s1.cc:1:6: note: `::f(const Tensor&, Tensor&, float)` is declared here\n"
            "void f(const Tensor& x, Tensor& y, float s) {}\n"
            "     ^");
}

TEST(FindFunctionTest, SameNameInTwoNamespacesIsAmbiguous) {
  Fixture f({"namespace a { void f(Tensor& y); }\nnamespace b { void f(Tensor& y); }\n"});
  auto found = f.Find("f");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.error().message.find("note: `::b::f(Tensor&)` is declared here"),
            std::string::npos);
}

TEST(FindFunctionTest, TemplateNextToNonTemplateIsAnOverload) {
  Fixture f({"template <class T> void f(T x);\nvoid f(Tensor& y);\n"});
  auto found = f.Find("f");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.error().message.find("is overloaded"), std::string::npos);
}

TEST(FindFunctionTest, CudaKernelIsAnError) {
  Fixture f({"__global__ void f(float* x) {}\n"});
  auto found = f.Find("f");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.error().message.find("`f` is a `__global__` CUDA kernel"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::signature

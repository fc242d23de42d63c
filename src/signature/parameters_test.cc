// Parameter lists: splitting, names, defaults, attributes, declarator shapes.
#include "signature/parameters.h"

#include <gtest/gtest.h>

namespace jaxcc::signature {
namespace {

std::vector<ParsedParam> Parse(const char* text) { return ParseParameters(Lex(text)); }

ParsedParam One(const char* text) {
  auto params = Parse(text);
  EXPECT_EQ(params.size(), 1u) << text;
  return params.empty() ? ParsedParam{} : params[0];
}

TEST(ParseParametersTest, EmptyAndVoid) {
  EXPECT_TRUE(Parse("").empty());
  EXPECT_TRUE(Parse("void").empty());
  EXPECT_EQ(Parse("void*").size(), 1u);
}

TEST(ParseParametersTest, NamesAndTypes) {
  auto params = Parse("const BE::Tensor& x, BE::Tensor const& y, jaxcc::Tensor out, float s");
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0].name, "x");
  EXPECT_EQ(params[0].type_text, "const BE::Tensor&");
  EXPECT_EQ(params[0].core_type, "BE::Tensor");
  EXPECT_TRUE(params[0].is_const);
  EXPECT_EQ(params[0].ref, RefKind::kLValue);
  EXPECT_EQ(params[1].name, "y");
  EXPECT_EQ(params[1].type_text, "BE::Tensor const&");
  EXPECT_TRUE(params[1].is_const);
  EXPECT_EQ(params[2].core_type, "jaxcc::Tensor");
  EXPECT_FALSE(params[2].is_const);
  EXPECT_EQ(params[2].ref, RefKind::kNone);
  EXPECT_EQ(params[3].name, "s");
  EXPECT_EQ(params[3].core_type, "float");
}

TEST(ParseParametersTest, UnnamedParameters) {
  for (const char* text : {"const Tensor&", "Tensor", "const Tensor", "int", "unsigned long long",
                           "std::int64_t", "BE::Tensor const&", "float*", "struct Foo"}) {
    EXPECT_EQ(One(text).name, "") << text;
  }
  EXPECT_EQ(One("unsigned long long").core_type, "unsigned long long");
  EXPECT_EQ(One("std::int64_t").core_type, "std::int64_t");
}

TEST(ParseParametersTest, BuiltinWordsThenName) {
  ParsedParam p = One("unsigned n");
  EXPECT_EQ(p.name, "n");
  EXPECT_EQ(p.core_type, "unsigned");
  EXPECT_EQ(One("long long int count").core_type, "long long int");
  EXPECT_EQ(One("const int64_t stream").name, "stream");
  EXPECT_EQ(One("::jaxcc::Tensor x").core_type, "::jaxcc::Tensor");
}

TEST(ParseParametersTest, DefaultArguments) {
  // Anchor bug: `float s = 1.0f` gave the "name" 1.0f and the parameter was dropped.
  auto params = Parse("float s = 1.0f, int n = f(1, 2), bool b = a < b, int m = {}");
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0].name, "s");
  EXPECT_TRUE(params[0].has_default);
  EXPECT_EQ(params[0].type_text, "float");
  EXPECT_EQ(params[1].name, "n");
  EXPECT_EQ(params[2].name, "b");
  EXPECT_EQ(params[3].name, "m");
  EXPECT_EQ(params[1].tokens.size(), 2u);  // the default is not part of the declaration
}

TEST(ParseParametersTest, TemplateArgumentCommas) {
  auto params = Parse("std::map<int, std::vector<int>> m, std::array<float, 3> const& a, int z");
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].name, "m");
  EXPECT_EQ(params[0].core_type, "std::map<int, std::vector<int>>");
  EXPECT_EQ(params[1].name, "a");
  EXPECT_TRUE(params[1].is_const);
  EXPECT_EQ(params[2].name, "z");
}

TEST(ParseParametersTest, AttributesAreDropped) {
  auto params = Parse(
      "[[maybe_unused]] const Tensor& x, Tensor& y [[maybe_unused]], "
      "__attribute__((unused)) float s, int n __attribute__((unused))");
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0].name, "x");
  EXPECT_EQ(params[0].type_text, "const Tensor&");
  EXPECT_EQ(params[1].name, "y");
  EXPECT_EQ(params[2].name, "s");
  EXPECT_EQ(params[2].type_text, "float");
  EXPECT_EQ(params[3].name, "n");
}

TEST(ParseParametersTest, PointersReferencesAndRestrict) {
  ParsedParam p = One("const float* __restrict__ data");
  EXPECT_EQ(p.name, "data");
  EXPECT_EQ(p.pointer_depth, 1);
  EXPECT_EQ(p.core_type, "float");
  EXPECT_EQ(p.type_text, "const float* __restrict__");
  EXPECT_EQ(One("Tensor&& t").ref, RefKind::kRValue);
  EXPECT_EQ(One("char** argv").pointer_depth, 2);
}

TEST(ParseParametersTest, FunctionPointersArraysVariadic) {
  ParsedParam fp = One("void (*callback)(int, float)");
  EXPECT_TRUE(fp.is_function_pointer);
  EXPECT_EQ(fp.name, "callback");
  ParsedParam array = One("float values[4]");
  EXPECT_TRUE(array.is_array);
  EXPECT_EQ(array.name, "values");
  EXPECT_EQ(array.type_text, "float[4]");
  auto params = Parse("int n, ...");
  ASSERT_EQ(params.size(), 2u);
  EXPECT_TRUE(params[1].is_variadic);
}

TEST(ParseParametersTest, CommentsCannotMoveBoundaries) {
  // The lexer drops comments before this stage runs; here the tokens have none to begin with,
  // which the signature tests exercise end to end.
  auto params = Parse("BE::Tensor a, BE::Tensor o");
  ASSERT_EQ(params.size(), 2u);
  EXPECT_FALSE(params[0].is_const);
  EXPECT_FALSE(params[1].is_const);
}

TEST(ParsedParamKeyTest, TopLevelConstOfByValueIgnored) {
  EXPECT_EQ(One("const Tensor x").Key(), One("Tensor").Key());
  EXPECT_EQ(One("const float s").Key(), One("float").Key());
  EXPECT_NE(One("const Tensor& x").Key(), One("Tensor&").Key());
  EXPECT_EQ(One("Tensor const& x").Key(), One("const Tensor&").Key());
  EXPECT_NE(One("float* p").Key(), One("float p").Key());
}

TEST(JoinTokensTest, Spacing) {
  EXPECT_EQ(JoinTokens(Lex("const  BE :: Tensor &")), "const BE::Tensor&");
  EXPECT_EQ(JoinTokens(Lex("std::vector< int , 3 >")), "std::vector<int, 3>");
  EXPECT_EQ(JoinTokens(Lex("float * const")), "float* const");
}

}  // namespace
}  // namespace jaxcc::signature

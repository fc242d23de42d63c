// Reading `#define` lines: parameters, variadics, positions, and malformed lines.
#include "signature/macro_definition.h"

#include <gtest/gtest.h>

namespace jaxcc::signature {
namespace {

using Strings = std::vector<std::string>;

std::optional<MacroDefinition> Define(const std::string& text) {
  std::vector<Token> tokens = Lex(text);
  for (const Token& t : tokens) {
    if (t.kind == TokenKind::kPreprocessor) return ParseDefine(t);
  }
  return std::nullopt;
}

std::string Body(const MacroDefinition& m) {
  std::string out;
  for (const Token& t : m.body) out += (out.empty() ? "" : " ") + t.text;
  return out;
}

TEST(ParseDefineTest, ObjectAndFunctionLike) {
  auto object = Define("#define N (4) // why");
  ASSERT_TRUE(object);
  EXPECT_FALSE(object->function_like);
  EXPECT_EQ(Body(*object), "( 4 )");  // a blank before `(`: object-like, comment dropped
  auto function = Define("#  define F(a, b) a ## b");
  ASSERT_TRUE(function);
  EXPECT_TRUE(function->function_like);
  EXPECT_EQ(function->params, (Strings{"a", "b"}));
  EXPECT_EQ(function->ParamIndex("b"), 1);
  EXPECT_EQ(function->ParamIndex("c"), -1);
  EXPECT_EQ(Body(*function), "a ## b");
  auto empty = Define("#define E()");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->function_like && empty->params.empty() && empty->body.empty());
}

TEST(ParseDefineTest, Variadics) {
  auto standard = Define("#define V(f, ...) f(__VA_ARGS__)");
  ASSERT_TRUE(standard);
  EXPECT_TRUE(standard->variadic);
  EXPECT_EQ(standard->params, (Strings{"f", "__VA_ARGS__"}));
  auto gnu = Define("#define G(args...) [args]");
  ASSERT_TRUE(gnu);
  EXPECT_TRUE(gnu->variadic);
  EXPECT_EQ(gnu->params, (Strings{"args"}));
}

TEST(ParseDefineTest, MalformedLinesAreNoDefinitions) {
  for (const char* line : {"#define", "#define 1x", "#define F(a,) a", "#define F(a a) a",
                           "#define F(a, a) a", "#define F(..., b) b", "#define F(a"}) {
    EXPECT_FALSE(Define(line)) << line;
  }
}

TEST(ParseDefineTest, PositionsAreTheSourcesOwnAcrossContinuations) {
  auto m = Define("int x;\n#define LONG(s) \\\n   void f##s()\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name_token.line, 2);
  EXPECT_EQ(m->name_token.column, 9);
  ASSERT_EQ(m->body.size(), 6u);
  EXPECT_EQ(m->body[0].text, "void");
  EXPECT_EQ(m->body[0].line, 3);
  EXPECT_EQ(m->body[0].column, 4);
  EXPECT_EQ(m->body[0].offset, std::string("int x;\n#define LONG(s) \\\n   ").size());
}

TEST(DirectiveMacroNameTest, QuickAndSlowPaths) {
  std::vector<Token> plain = Lex("#define A 1");
  EXPECT_EQ(DirectiveMacroName(plain[0], SplitDirective(plain[0].text).argument), "A");
  std::vector<Token> spliced = Lex("#undef \\\n  B");
  EXPECT_EQ(DirectiveMacroName(spliced[0], SplitDirective(spliced[0].text).argument), "B");
  std::vector<Token> none = Lex("#define 9");
  EXPECT_EQ(DirectiveMacroName(none[0], SplitDirective(none[0].text).argument), "");
}

}  // namespace
}  // namespace jaxcc::signature

// The lexer: every construct that could hide a `void f(` or an annotation is one token.
#include "signature/lexer.h"

#include <gtest/gtest.h>

namespace jaxcc::signature {
namespace {

std::vector<std::string> Texts(const std::vector<Token>& tokens) {
  std::vector<std::string> out;
  for (const Token& t : tokens) out.push_back(t.text);
  return out;
}

std::vector<TokenKind> Kinds(const std::vector<Token>& tokens) {
  std::vector<TokenKind> out;
  for (const Token& t : tokens) out.push_back(t.kind);
  return out;
}

using K = TokenKind;
using Strings = std::vector<std::string>;

TEST(LexerTest, EmptyAndBlank) {
  EXPECT_TRUE(Lex("").empty());
  EXPECT_TRUE(Lex(" \t\r\n\n").empty());
}

TEST(LexerTest, DeclarationTokensAndPositions) {
  auto tokens = Lex("void f(const BE::Tensor& x,\n       float s = 1.0f);");
  EXPECT_EQ(Texts(tokens), (Strings{"void", "f", "(", "const", "BE", "::", "Tensor", "&", "x", ",",
                                    "float", "s", "=", "1.0f", ")", ";"}));
  EXPECT_EQ(tokens[1].line, 1);
  EXPECT_EQ(tokens[1].column, 6);
  EXPECT_EQ(tokens[10].line, 2);
  EXPECT_EQ(tokens[10].column, 8);
  EXPECT_EQ(tokens[10].offset, 35u);
  EXPECT_EQ(tokens[13].kind, K::kNumber);
}

TEST(LexerTest, LongestPunctuators) {
  EXPECT_EQ(Texts(Lex("a::b->c...d<<=e>>=f<=>g->*h##i")),
            (Strings{"a", "::", "b", "->", "c", "...", "d", "<<=", "e", ">>=", "f", "<=>", "g",
                     "->*", "h", "##", "i"}));
  EXPECT_EQ(Texts(Lex("x>>y")), (Strings{"x", ">>", "y"}));
}

TEST(LexerTest, LineAndBlockComments) {
  auto tokens = Lex("a // one, const\nb /* two\n const */ c");
  EXPECT_EQ(Kinds(tokens), (std::vector<K>{K::kIdentifier, K::kLineComment, K::kIdentifier,
                                           K::kBlockComment, K::kIdentifier}));
  EXPECT_EQ(tokens[1].text, "// one, const");
  EXPECT_EQ(tokens[3].text, "/* two\n const */");
  EXPECT_EQ(tokens[4].line, 3);
  EXPECT_EQ(tokens[4].column, 11);
}

TEST(LexerTest, LineCommentContinuedByBackslash) {
  auto tokens = Lex("// a \\\n still comment\nx");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].kind, K::kLineComment);
  EXPECT_EQ(tokens[1].text, "x");
  EXPECT_EQ(tokens[1].line, 3);
}

TEST(LexerTest, CrLfLineEndings) {
  auto tokens = Lex("// note\r\nint x;\r\n");
  EXPECT_EQ(tokens[0].text, "// note");
  EXPECT_EQ(tokens[1].line, 2);
  EXPECT_EQ(tokens[1].column, 1);
}

TEST(LexerTest, UnterminatedBlockCommentRunsToEnd) {
  auto tokens = Lex("a /* void f(");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[1].kind, K::kBlockComment);
}

TEST(LexerTest, StringsWithEscapes) {
  auto tokens = Lex(R"(x = "a \" // not a comment"; y)");
  EXPECT_EQ(Texts(tokens), (Strings{"x", "=", R"("a \" // not a comment")", ";", "y"}));
  EXPECT_EQ(tokens[2].kind, K::kString);
}

TEST(LexerTest, CharLiterals) {
  auto tokens = Lex(R"(c = '\''; d = '"'; e = L'x'; f = u8'a';)");
  EXPECT_EQ(tokens[2].text, R"('\'')");
  EXPECT_EQ(tokens[2].kind, K::kChar);
  EXPECT_EQ(tokens[6].text, "'\"'");
  EXPECT_EQ(tokens[10].text, "L'x'");
  EXPECT_EQ(tokens[10].kind, K::kChar);
  EXPECT_EQ(tokens[14].text, "u8'a'");
}

TEST(LexerTest, EncodingPrefixes) {
  auto tokens = Lex(R"(u8"a" L"b" u"c" U"d" u8 L)");
  EXPECT_EQ(Texts(tokens), (Strings{"u8\"a\"", "L\"b\"", "u\"c\"", "U\"d\"", "u8", "L"}));
  EXPECT_EQ(Kinds(tokens), (std::vector<K>{K::kString, K::kString, K::kString, K::kString,
                                           K::kIdentifier, K::kIdentifier}));
}

TEST(LexerTest, RawStrings) {
  auto tokens = Lex("s = R\"x(void f( \" )\" // @BE f\n)x\"; t");
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[2].kind, K::kString);
  EXPECT_EQ(tokens[2].text, "R\"x(void f( \" )\" // @BE f\n)x\"");
  EXPECT_EQ(tokens[4].text, "t");
  EXPECT_EQ(tokens[4].line, 2);
  auto prefixed = Lex("u8R\"(a)\" LR\"(b)\" uR\"(c)\" UR\"(d)\"");
  EXPECT_EQ(prefixed.size(), 4u);
  for (const Token& t : prefixed) EXPECT_EQ(t.kind, K::kString);
}

TEST(LexerTest, UserDefinedLiteralSuffix) {
  EXPECT_EQ(Texts(Lex("\"abc\"_s 12_km")), (Strings{"\"abc\"_s", "12_km"}));
}

TEST(LexerTest, UnterminatedStringStopsAtLineEnd) {
  auto tokens = Lex("\"abc\nint x;");
  EXPECT_EQ(tokens[0].text, "\"abc");
  EXPECT_EQ(tokens[1].text, "int");
  EXPECT_EQ(tokens[1].line, 2);
}

TEST(LexerTest, Numbers) {
  EXPECT_EQ(Texts(Lex("1 1.5f .5 0x1p-3 1e+10 1'000'000 0b1010u 1.0e-3L")),
            (Strings{"1", "1.5f", ".5", "0x1p-3", "1e+10", "1'000'000", "0b1010u", "1.0e-3L"}));
  EXPECT_EQ(Texts(Lex("a-1")), (Strings{"a", "-", "1"}));
}

TEST(LexerTest, PreprocessorLinesAreSingleTokens) {
  auto tokens = Lex("#define GEN(s) \\\n  void f##s(int x) {}\n  # include <a.h> // @BE f\nint y;");
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[0].kind, K::kPreprocessor);
  EXPECT_EQ(tokens[0].text, "#define GEN(s) \\\n  void f##s(int x) {}");
  EXPECT_EQ(tokens[1].kind, K::kPreprocessor);
  EXPECT_EQ(tokens[1].text, "# include <a.h> // @BE f");
  EXPECT_EQ(tokens[1].column, 3);
  EXPECT_EQ(tokens[2].text, "int");
  EXPECT_EQ(tokens[2].line, 4);
}

TEST(LexerTest, DirectiveWithMultiLineBlockComment) {
  auto tokens = Lex("#if 0 /* spans\nlines */ \nx");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].text, "#if 0 /* spans\nlines */ ");
  EXPECT_EQ(tokens[1].line, 3);
}

TEST(LexerTest, HashInsideALineIsPunctuation) {
  auto tokens = Lex("a # b");
  EXPECT_EQ(Kinds(tokens), (std::vector<K>{K::kIdentifier, K::kPunct, K::kIdentifier}));
  // After a block comment at line start a directive still starts.
  EXPECT_EQ(Lex("/* c */ #define X\n")[1].kind, K::kPreprocessor);
}

TEST(LexerTest, StrayCharactersAreKept) {
  auto tokens = Lex("a @ ` b");
  EXPECT_EQ(Kinds(tokens), (std::vector<K>{K::kIdentifier, K::kOther, K::kOther, K::kIdentifier}));
}

TEST(LexerTest, Utf8Identifiers) {
  auto tokens = Lex("int \xc3\xa9t\xc3\xa9 = 1;");
  EXPECT_EQ(tokens[1].kind, K::kIdentifier);
  EXPECT_EQ(tokens[1].text, "\xc3\xa9t\xc3\xa9");
}

TEST(LexerTest, LineSpliceInCodeIsWhitespace) {
  auto tokens = Lex("int \\\nx;");
  EXPECT_EQ(Texts(tokens), (Strings{"int", "x", ";"}));
}

}  // namespace
}  // namespace jaxcc::signature

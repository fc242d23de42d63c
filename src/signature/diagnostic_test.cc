// The exact diagnostic layout: users and the Python tests rely on it.
#include "signature/diagnostic.h"

#include <gtest/gtest.h>

#include "util/text.h"

namespace jaxcc::signature {
namespace {

TEST(SourceLineTest, PicksLines) {
  EXPECT_EQ(SourceLine("a\nbc\r\nd", 1), "a");
  EXPECT_EQ(SourceLine("a\nbc\r\nd", 2), "bc");
  EXPECT_EQ(SourceLine("a\nbc\r\nd", 3), "d");
  EXPECT_EQ(SourceLine("a\nbc\r\nd", 4), "");
}

TEST(FormatDiagnosticTest, CaretAndUnderline) {
  std::string text = "void f(const Tensor x,\n       float* p) {}\n";
  EXPECT_EQ(FormatDiagnostic("<module>", text, Span{2, 8, 8}, "error", "bad pointer"),
            "<module>:2:8: error: bad pointer\n"
            "       float* p) {}\n"
            "       ^~~~~~~~");
}

TEST(FormatDiagnosticTest, SingleCharacterAndNote) {
  EXPECT_EQ(FormatDiagnostic("k.cc", "int f();", Span{1, 5, 1}, "note", "here"),
            "k.cc:1:5: note: here\n"
            "int f();\n"
            "    ^");
}

TEST(FormatDiagnosticTest, TabsKeepAlignment) {
  EXPECT_EQ(FormatDiagnostic("m", "\tvoid f(int);", Span{1, 7, 1}, "error", "x"),
            "m:1:7: error: x\n"
            "\tvoid f(int);\n"
            "\t     ^");
}

TEST(FormatDiagnosticTest, Utf8TakesOneColumnPerCharacter) {
  // "é" is two bytes; the caret line must hold one blank for it.
  EXPECT_EQ(FormatDiagnostic("m", "/*\xc3\xa9*/ f(x)", Span{1, 8, 4}, "error", "x"),
            "m:1:8: error: x\n"
            "/*\xc3\xa9*/ f(x)\n"
            "      ^~~~");
}

TEST(FormatDiagnosticTest, UnderlineStopsAtLineEnd) {
  EXPECT_EQ(FormatDiagnostic("m", "ab", Span{1, 1, 10}, "error", "x"), "m:1:1: error: x\nab\n^~");
}

TEST(FormatDiagnosticTest, AHugeLineIsQuotedAsAWindowAroundTheCaret) {
  std::string line = "void f(" + std::string(100000, '(') + "int* p) {}";
  std::string text = FormatDiagnostic("m", line, Span{1, 100008, 4}, "error", "pointer");
  EXPECT_LT(text.size(), 600u);
  std::vector<std::string> lines = SplitLines(text);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "m:1:100008: error: pointer");
  EXPECT_EQ(lines[1].substr(lines[2].find('^'), 4), "int*");
}

TEST(SpanOfTest, SameLineAndMultiLine) {
  auto tokens = Lex("const Tensor&\n  x, y");
  Span one = SpanOf(tokens[0], tokens[2]);
  EXPECT_EQ(one.line, 1);
  EXPECT_EQ(one.column, 1);
  EXPECT_EQ(one.length, 13);
  Span cut = SpanOf(tokens[0], tokens[3]);  // ends on the next line: up to the line end
  EXPECT_EQ(cut.length, kToLineEnd);
  EXPECT_EQ(FormatDiagnostic("m", "const Tensor&\n  x, y", cut, "error", "e"),
            "m:1:1: error: e\nconst Tensor&\n^~~~~~~~~~~~~");
  Span single = SpanOf(tokens[3]);
  EXPECT_EQ(single.line, 2);
  EXPECT_EQ(single.column, 3);
  EXPECT_EQ(single.length, 1);
}

}  // namespace
}  // namespace jaxcc::signature

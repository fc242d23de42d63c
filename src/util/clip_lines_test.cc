#include "util/clip_lines.h"

#include <gtest/gtest.h>

#include "util/text.h"

namespace jaxcc {
namespace {

TEST(ClipLongLinesTest, ShortTextIsUnchanged) {
  std::string text = "a.cc:1:2: error: x\nint y = ;\n        ^\n";
  EXPECT_EQ(ClipLongLines(text), text);
}

TEST(ClipLongLinesTest, KeepsAWindowAroundTheCaretOfAQuotedLine) {
  std::string line = std::string(1000, 'a') + "BAD" + std::string(1000, 'b');
  std::string marks = std::string(1000, ' ') + "^~~";
  std::string clipped = ClipLongLines("x:1:1001: error: e\n" + line + "\n" + marks, 40);
  EXPECT_EQ(clipped, "x:1:1001: error: e\n..." + std::string(10, 'a') + "BAD" +
                         std::string(27, 'b') + "...\n" + std::string(13, ' ') + "^~~");
}

TEST(ClipLongLinesTest, KeepsTheGutterOfGccQuotes) {
  std::string quoted = "    3 | " + std::string(500, 'x') + " int y = ;";
  std::string marks = "      | " + std::string(509, ' ') + "^";
  std::vector<std::string> lines = SplitLines(ClipLongLines(quoted + "\n" + marks + "\n", 40));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "    3 | ..." + std::string(1, 'x') + " int y = ;");
  EXPECT_EQ(lines[1], "      |    " + std::string(10, ' ') + "^");
  EXPECT_EQ(lines[0][lines[1].find('^')], ';');
}

TEST(ClipLongLinesTest, TheCaretStaysUnderTheSameCharacterAfterMultibyteText) {
  std::string line = std::string(300, 'x');
  for (int i = 0; i < 100; ++i) line += "\xc3\xa9";  // é: two bytes, one column
  line += "HERE" + std::string(300, 'z');
  std::string marks = std::string(400, ' ') + "^";
  std::vector<std::string> lines = SplitLines(ClipLongLines(line + "\n" + marks, 40));
  ASSERT_EQ(lines.size(), 2u);
  size_t here = lines[0].find("HERE");
  ASSERT_NE(here, std::string::npos);
  size_t columns_before = 0;
  for (size_t i = 0; i < here; ++i) columns_before += (lines[0][i] & 0xC0) != 0x80;
  EXPECT_EQ(lines[1].find('^'), columns_before);
}

TEST(ClipLongLinesTest, CutsOtherLongLinesWithTheirLength) {
  std::string clipped = ClipLongLines("note\n" + std::string(5000, 'q') + "\nend\n", 200, 100);
  EXPECT_EQ(clipped, "note\n" + std::string(100, 'q') + "... (5000 bytes)\nend\n");
}

TEST(ClipLongLinesTest, NeverSplitsAUtf8Character) {
  std::string line;
  for (int i = 0; i < 100; ++i) line += "\xe2\x82\xac";  // €: three bytes
  std::string clipped = ClipLongLines(line, 200, 100);
  EXPECT_EQ(clipped.substr(0, 99), line.substr(0, 99));
  EXPECT_EQ(clipped.substr(99, 4), "... ");
}

TEST(ClipLongLinesTest, AnUnderlineToTheEndOfAHugeLineIsCutToo) {
  std::string line = "abc" + std::string(100000, 'd');
  std::string marks = "^" + std::string(100002, '~');
  std::string clipped = ClipLongLines(line + "\n" + marks, 60);
  EXPECT_LT(clipped.size(), 200u);
  EXPECT_EQ(SplitLines(clipped)[1], "^" + std::string(59, '~'));
}

}  // namespace
}  // namespace jaxcc

// Text helpers: line splitting and the escaping every error message uses for user text.
#include "util/text.h"

#include <gtest/gtest.h>

namespace jaxcc {
namespace {

TEST(SplitLinesTest, KeepsAFinalLineWithoutNewline) {
  EXPECT_EQ(SplitLines("a\nb"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitLines("a\n"), (std::vector<std::string>{"a"}));
}

TEST(EscapeForMessageTest, ControlBytesBecomeHexEscapes) {
  EXPECT_EQ(EscapeForMessage(std::string("a\0b\n\x7f", 5)), "a\\x00b\\x0a\\x7f");
  EXPECT_EQ(EscapeForMessage("plain \xc3\xa9"), "plain \xc3\xa9");  // UTF-8 kept as is
}

TEST(EscapeForMessageTest, LongTextIsCutWithItsLength) {
  EXPECT_EQ(EscapeForMessage(std::string(100, 'x'), 4), "xxxx... (100 bytes)");
  EXPECT_EQ(EscapeForMessage("short", 4 + 1), "short");
}

TEST(EscapeForMessageTest, NeverCutsInsideAUtf8Character) {
  // "aé" is 'a' + two bytes; a cut after 2 bytes would leave half of the é.
  EXPECT_EQ(EscapeForMessage("a\xc3\xa9zzz", 2), "a... (6 bytes)");
  EXPECT_EQ(EscapeForMessage("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9... (4 bytes)");
}

TEST(FindInvalidUtf8Test, WellFormedTextHasNone) {
  EXPECT_EQ(FindInvalidUtf8(""), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("plain ascii, longer than one eight-byte word"),
            std::string_view::npos);
  // Two, three and four bytes, at the edges of their ranges.
  EXPECT_EQ(FindInvalidUtf8("\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xef\xbf\xbf"),
            std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf"), std::string_view::npos);
}

TEST(FindInvalidUtf8Test, IllFormedSequencesAreFoundAtTheirLeadByte) {
  EXPECT_EQ(FindInvalidUtf8("abc\x80"), 3u);                // stray continuation byte
  EXPECT_EQ(FindInvalidUtf8("// caf\xe9\n"), 6u);           // Latin-1
  EXPECT_EQ(FindInvalidUtf8("\xc0\xaf"), 0u);               // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("x\xe0\x80\xaf"), 1u);          // overlong three-byte form
  EXPECT_EQ(FindInvalidUtf8("xy\xed\xa0\x80"), 2u);         // a surrogate
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);       // past U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xf5\x80\x80\x80"), 0u);       // no such lead byte
  EXPECT_EQ(FindInvalidUtf8("twelve bytes\xe2\x82"), 12u);  // truncated at the end
  EXPECT_EQ(FindInvalidUtf8("\xe2\x28\xa1"), 0u);           // continuation missing
  // The eight-byte skip must not jump over a bad byte in the middle of a word.
  EXPECT_EQ(FindInvalidUtf8("0123456789ab\xffxyz0123456789"), 12u);
}

TEST(LineColumnAtTest, CountsLinesAndBytesFromOne) {
  EXPECT_EQ(LineColumnAt("abc", 0).line, 1u);
  EXPECT_EQ(LineColumnAt("abc", 2).column, 3u);
  LineColumn at = LineColumnAt("a\nbc\ndef", 7);
  EXPECT_EQ(at.line, 3u);
  EXPECT_EQ(at.column, 3u);
  EXPECT_EQ(LineColumnAt("a\n", 2).column, 1u);
}

}  // namespace
}  // namespace jaxcc

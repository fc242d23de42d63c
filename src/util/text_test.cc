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

}  // namespace
}  // namespace jaxcc

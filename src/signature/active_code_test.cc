// `#if 0` branches and the comment/directive filter.
#include "signature/active_code.h"

#include <gtest/gtest.h>

namespace jaxcc::signature {
namespace {

std::string Joined(const std::vector<Token>& tokens) {
  std::string out;
  for (const Token& t : tokens) {
    if (t.kind == TokenKind::kPreprocessor) continue;
    out += (out.empty() ? "" : " ") + t.text;
  }
  return out;
}

std::string Active(const char* source) { return Joined(DropDisabledBranches(Lex(source))); }

TEST(DropDisabledBranchesTest, IfZeroIsDropped) {
  EXPECT_EQ(Active("a\n#if 0\nb // @BE f\n#endif\nc"), "a c");
  EXPECT_EQ(Active("#if 0 // old code\nb\n#endif\n"), "");
}

TEST(DropDisabledBranchesTest, ElseOfIfZeroIsKept) {
  EXPECT_EQ(Active("#if 0\nb\n#else\nc\n#endif\n"), "c");
  EXPECT_EQ(Active("#if 1\nb\n#else\nc\n#endif\n"), "b");
  EXPECT_EQ(Active("#if 0\nb\n#elif 1\nc\n#else\nd\n#endif\n"), "c");
  EXPECT_EQ(Active("#if 0\nb\n#elif X\nc\n#else\nd\n#endif\n"), "c d");
}

TEST(DropDisabledBranchesTest, UnknownConditionsKeepBothBranches) {
  EXPECT_EQ(Active("#ifdef __CUDACC__\na\n#else\nb\n#endif\n"), "a b");
  EXPECT_EQ(Active("#if defined(X) && Y > 2\na\n#endif\n"), "a");
}

TEST(DropDisabledBranchesTest, NestedGroupsInsideDisabledCode) {
  EXPECT_EQ(Active("#if 0\n#ifdef X\na\n#else\nb\n#endif\nc\n#endif\nd"), "d");
  EXPECT_EQ(Active("#ifdef X\n#if 0\na\n#endif\nb\n#endif\n"), "b");
}

TEST(DropDisabledBranchesTest, StrayDirectivesAreHarmless) {
  EXPECT_EQ(Active("#endif\na\n#else\nb"), "a b");
}

TEST(CodeTokensTest, DropsCommentsAndDirectives) {
  auto code = CodeTokens(Lex("#include <x>\n// c\nint /* d */ x;"));
  ASSERT_EQ(code.size(), 3u);
  EXPECT_EQ(code[0].text, "int");
  EXPECT_EQ(code[1].text, "x");
}

}  // namespace
}  // namespace jaxcc::signature

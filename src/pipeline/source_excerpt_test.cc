#include "pipeline/source_excerpt.h"

#include <gtest/gtest.h>

namespace jaxcc::pipeline {
namespace {

TEST(SourceExcerpt, QuotesTheInlineLineWithACaret) {
  std::vector<signature::SourceFile> sources = {
      {"<mod>", "int a;\nvoid f() {\n  int y = \"s\";\n}\n"}};
  std::string error = "<mod>: In function 'void f()':\n<mod>:3:11: error: invalid conversion";
  EXPECT_EQ(AddSourceExcerpt(error, sources),
            "<mod>: In function 'void f()':\n"
            "<mod>:3:11: error: invalid conversion\n"
            "    3 |   int y = \"s\";\n"
            "      |           ^");
}

TEST(SourceExcerpt, LeavesQuotedFilesAndUnknownLabelsAlone) {
  std::vector<signature::SourceFile> sources = {{"/tmp/k.cc", "x\n"}, {"<mod>", "a\n"}};
  std::string quoted = "<mod>:1:1: error: e\n    1 | a\n      | ^";
  EXPECT_EQ(AddSourceExcerpt(quoted, sources), quoted);
  EXPECT_EQ(AddSourceExcerpt("/tmp/k.cc:1:1: error: e", sources), "/tmp/k.cc:1:1: error: e");
  EXPECT_EQ(AddSourceExcerpt("<other>:1:1: error: e", sources), "<other>:1:1: error: e");
  EXPECT_EQ(AddSourceExcerpt("<mod>:99:1: error: e", sources), "<mod>:99:1: error: e");
}

}  // namespace
}  // namespace jaxcc::pipeline

#include "toolchain/cuda_arch.h"

#include <gtest/gtest.h>

namespace jaxcc::toolchain {
namespace {

TEST(NormalizeArch, AcceptsEveryCommonSpelling) {
  for (const char* text : {"8.0", "80", "sm_80", "compute_80", " SM_80 "}) {
    auto arch = NormalizeArch(text);
    ASSERT_TRUE(arch.ok()) << text << ": " << arch.error().message;
    EXPECT_EQ(*arch, "80") << text;
  }
  EXPECT_EQ(NormalizeArch("9.0a").value(), "90a");
  EXPECT_EQ(NormalizeArch("sm_90a").value(), "90a");
  EXPECT_EQ(NormalizeArch("100").value(), "100");
  EXPECT_EQ(NormalizeArch("sm_120").value(), "120");
}

TEST(NormalizeArch, RejectsWithTheAcceptedForms) {
  for (const char* text : {"", "8", "sm_", "ampere", "2.0", "8.0.1", "9.0b"}) {
    auto arch = NormalizeArch(text);
    ASSERT_FALSE(arch.ok()) << text;
    EXPECT_EQ(arch.error().kind, ErrorKind::kSpec);
    EXPECT_NE(arch.error().message.find("sm_90a"), std::string::npos) << arch.error().message;
  }
}

TEST(ParseArchList, SplitsDeduplicatesAndSorts) {
  auto arches = ParseArchList({"9.0, 8.0", "sm_90a;80", "100"});
  ASSERT_TRUE(arches.ok()) << arches.error().message;
  EXPECT_EQ(*arches, (std::vector<std::string>{"80", "90", "90a", "100"}));
  EXPECT_FALSE(ParseArchList({" , "}).ok());
}

TEST(GencodeFlags, SassForEachAndPortablePtxForTheHighest) {
  EXPECT_EQ(GencodeFlags({"80", "90a"}),
            (std::vector<std::string>{"-gencode=arch=compute_80,code=sm_80",
                                      "-gencode=arch=compute_90a,code=sm_90a",
                                      "-gencode=arch=compute_90,code=compute_90"}));
  EXPECT_TRUE(GencodeFlags({}).empty());
}

}  // namespace
}  // namespace jaxcc::toolchain

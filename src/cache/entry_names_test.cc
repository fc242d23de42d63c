#include "cache/entry_names.h"

#include <gtest/gtest.h>

#include <vector>

namespace jaxcc::cache {
namespace {

const std::string kHex24 = "0123456789abcdef01234567";

TEST(EntryNames, EntryDirRoundTrip) {
  EXPECT_EQ(EntryDirName("my-mod", kHex24 + "ffff"), "my-mod-" + kHex24);
  EXPECT_EQ(ModuleOfEntryDir("my-mod-" + kHex24), "my-mod");
  EXPECT_EQ(ModuleOfEntryDir("a.b_c-" + kHex24), "a.b_c");
  EXPECT_FALSE(ModuleOfEntryDir("-" + kHex24));
  EXPECT_FALSE(ModuleOfEntryDir(".x-" + kHex24));
  EXPECT_FALSE(ModuleOfEntryDir("x_" + kHex24));
  EXPECT_FALSE(ModuleOfEntryDir("x-" + kHex24.substr(1)));
  EXPECT_FALSE(ModuleOfEntryDir("x-0" + kHex24));  // 25 hex digits after the dash
  EXPECT_FALSE(ModuleOfEntryDir("x-0123456789ABCDEF01234567"));
}

TEST(EntryNames, LibraryFileName) {
  EXPECT_EQ(LibraryFileName("m", std::string(64, 'e')), "m.eeeeeeeeeeee.so");
}

TEST(EntryNames, BuildDirRoundTrip) {
  auto parsed = ParseBuildDirName(BuildDirName("a-b-1", 4242, "node_7.lab", "00ff"));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->module, "a-b-1");
  EXPECT_EQ(parsed->pid, 4242);
  EXPECT_EQ(parsed->host, "node_7.lab");
  // The older form without a host still parses (its directories are judged as this host's).
  auto legacy = ParseBuildDirName("a-4242-00ff");
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->pid, 4242);
  EXPECT_EQ(legacy->host, "");
  EXPECT_FALSE(ParseBuildDirName("a-4242@-00ff"));
  EXPECT_FALSE(ParseBuildDirName("a-4242"));
  EXPECT_FALSE(ParseBuildDirName("a-x-00ff"));
  EXPECT_FALSE(ParseBuildDirName("-4242-00ff"));
  EXPECT_FALSE(ParseBuildDirName("a-0-00ff"));
  EXPECT_FALSE(ParseBuildDirName("a-99999999999-00ff"));
  EXPECT_FALSE(ParseBuildDirName("a-12-"));
}

TEST(EntryNames, TempFilesNeverMatchRealFiles) {
  EXPECT_TRUE(IsTempFileName(".tmp-12-ab.so"));
  EXPECT_TRUE(IsTempFileName("manifest.json.tmp-12-ab"));
  EXPECT_FALSE(IsTempFileName("manifest.json"));
  EXPECT_FALSE(IsTempFileName("x.tmp-y.0123456789ab.so"));  // a module named "x.tmp-y"
}

TEST(EntryNames, ValidateModuleName) {
  EXPECT_TRUE(ValidateModuleName("ok_name-1.2", "module name").ok());
  EXPECT_TRUE(ValidateModuleName("_private", "module name").ok());
  for (std::string bad : {std::string(""), std::string("a/b"), std::string(".."),
                          std::string("a\0b", 3), std::string("1mod"), std::string("my module"),
                          std::string("a..b"), std::string(129, 'a')}) {
    Status status = ValidateModuleName(bad, "target_prefix");
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_EQ(status.error().kind, ErrorKind::kSpec);
    EXPECT_NE(status.error().message.find("invalid target_prefix"), std::string::npos);
  }
}

TEST(EntryNames, ModuleNameFromPathIsAlwaysValid) {
  EXPECT_EQ(ModuleNameFromPath("/src/my_ops.cc"), "my_ops");
  EXPECT_EQ(ModuleNameFromPath("/src/2024 ops.cu"), "_2024_ops");
  EXPECT_EQ(ModuleNameFromPath("/src/.hidden.cc"), "_.hidden");
  EXPECT_EQ(ModuleNameFromPath("/src/kernels"), "kernels");
  EXPECT_EQ(ModuleNameFromPath("/src/m\xc3\xbc"
                               "d.cc"),
            "m__d");
  for (const std::string& path : std::vector<std::string>{"/x/", "/x/..cc", "/x/a..b.cc",
                                                          "/x/" + std::string(300, 'z') + ".cc"}) {
    EXPECT_TRUE(ValidateModuleName(ModuleNameFromPath(path), "module name").ok()) << path;
  }
}

}  // namespace
}  // namespace jaxcc::cache

#include "toolchain/linker.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>

#include "toolchain/scoped_env_for_test.h"
#include "util/subprocess.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::toolchain {
namespace {

std::string TempDir() { return testing_util::MakeTestTempDir("jaxcc-linker"); }

// The fake linkers below cannot link: the probe is the test's to decide.
Result<bool> AlwaysLinks(const LinkerChoice&, const std::string&) { return true; }

// A directory that holds only the fake linkers named, each answering --version.
std::string DirWithLinkers(std::initializer_list<const char*> names) {
  std::string dir = TempDir();
  for (const char* name : names) {
    std::string path = dir + "/ld." + name;
    std::ofstream(path) << "#!/bin/sh\necho 'fake " << name << " 1.0'\n";
    ::chmod(path.c_str(), 0755);
  }
  return dir;
}

TEST(Linker, AutoTakesTheFastestInstalledInOrderGoldLldMold) {
  ScopedEnv choice("JAXCC_LINKER", nullptr);
  {
    ScopedEnv path("PATH", DirWithLinkers({"mold", "lld", "gold"}).c_str());
    auto linker = ChooseLinker("", AlwaysLinks);
    ASSERT_TRUE(linker.ok()) << linker.error().message;
    EXPECT_EQ(linker->name, "gold");
    EXPECT_EQ(linker->flags, std::vector<std::string>{"-fuse-ld=gold"});
    EXPECT_EQ(linker->version, "fake gold 1.0");
  }
  {
    ScopedEnv path("PATH", DirWithLinkers({"mold", "lld"}).c_str());
    EXPECT_EQ(ChooseLinker("", AlwaysLinks)->name, "lld");
  }
  {
    ScopedEnv path("PATH", DirWithLinkers({"mold"}).c_str());
    EXPECT_EQ(ChooseLinker("", AlwaysLinks)->name, "mold");
  }
}

TEST(Linker, NoneInstalledIsTheDriversOwnNotAnError) {
  ScopedEnv choice("JAXCC_LINKER", "auto");
  ScopedEnv path("PATH", DirWithLinkers({}).c_str());
  auto linker = ChooseLinker("", AlwaysLinks);
  ASSERT_TRUE(linker.ok());
  EXPECT_EQ(linker->name, "system");
  EXPECT_TRUE(linker->flags.empty());
}

TEST(Linker, SystemAndNamedChoicesAreHonoured) {
  ScopedEnv path("PATH", DirWithLinkers({"gold", "lld"}).c_str());
  {
    ScopedEnv choice("JAXCC_LINKER", "system");
    auto linker = ChooseLinker("", AlwaysLinks);
    ASSERT_TRUE(linker.ok());
    EXPECT_TRUE(linker->flags.empty());
  }
  {
    ScopedEnv choice("JAXCC_LINKER", "lld");
    auto linker = ChooseLinker("", AlwaysLinks);
    ASSERT_TRUE(linker.ok());
    EXPECT_EQ(linker->flags, std::vector<std::string>{"-fuse-ld=lld"});
    EXPECT_EQ(linker->found_by, "$JAXCC_LINKER=lld");
  }
}

TEST(Linker, AMissingOrUnknownChoiceIsAToolchainErrorWithTheFix) {
  ScopedEnv path("PATH", DirWithLinkers({"gold"}).c_str());
  {
    ScopedEnv choice("JAXCC_LINKER", "mold");
    auto linker = ChooseLinker("", AlwaysLinks);
    ASSERT_FALSE(linker.ok());
    EXPECT_EQ(linker.error().kind, ErrorKind::kToolchain);
    EXPECT_NE(linker.error().message.find("apt-get install mold"), std::string::npos)
        << linker.error().message;
  }
  {
    ScopedEnv choice("JAXCC_LINKER", "bfd2");
    auto linker = ChooseLinker("", AlwaysLinks);
    ASSERT_FALSE(linker.ok());
    EXPECT_NE(linker.error().message.find("auto, system, gold, lld or mold"), std::string::npos);
  }
}

TEST(Linker, ALinkerThatDoesNotRunIsPassedOver) {
  ScopedEnv choice("JAXCC_LINKER", nullptr);
  std::string dir = DirWithLinkers({"lld"});
  std::ofstream(dir + "/ld.gold") << "#!/bin/sh\nexit 1\n";
  ::chmod((dir + "/ld.gold").c_str(), 0755);
  ScopedEnv path("PATH", dir.c_str());
  EXPECT_EQ(ChooseLinker("", AlwaysLinks)->name, "lld");
}

TEST(Linker, AnInstalledLinkerThatCannotLinkIsPassedOverWithTheReason) {
  ScopedEnv choice("JAXCC_LINKER", nullptr);
  ScopedEnv path("PATH", DirWithLinkers({"gold", "lld"}).c_str());
  auto gold_fails = [](const LinkerChoice& linker, const std::string&) -> Result<bool> {
    if (linker.name == "gold")
      return MakeError(ErrorKind::kToolchain, "undefined __gxx_personality_v0");
    return true;
  };
  EXPECT_EQ(ChooseLinker("", gold_fails)->name, "lld");
  ResetLinkerMemo();
  auto none_links = [](const LinkerChoice&, const std::string&) -> Result<bool> {
    return MakeError(ErrorKind::kToolchain, "cannot link");
  };
  auto fallback = ChooseLinker("", none_links);
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->name, "system");
  EXPECT_TRUE(fallback->flags.empty());
  EXPECT_NE(fallback->found_by.find("gold: cannot link; lld: cannot link"), std::string::npos)
      << fallback->found_by;
  ResetLinkerMemo();
  ScopedEnv named("JAXCC_LINKER", "gold");
  auto refused = ChooseLinker("", gold_fails);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("undefined __gxx_personality_v0"), std::string::npos);
}

TEST(Linker, TheRealProbeLinksWithTheInstalledCompilerAndRemembersTheOutcome) {
  const std::string gold = FindExecutable("ld.gold");
  const std::string compiler = FindExecutable("g++");
  if (gold.empty() || compiler.empty()) GTEST_SKIP() << "needs g++ and ld.gold";
  const std::string memo = TempDir() + "/memo.json";
  LinkerChoice choice{{"-fuse-ld=gold"}, "gold", "", ""};
  EXPECT_TRUE(LinkWithCompiler(compiler, memo)(choice, gold).ok());
  // A linker the driver cannot use fails the link, and the outcome is remembered.
  LinkerChoice bogus{{"-fuse-ld=jaxcc-no-such-linker"}, "bogus", "", ""};
  auto failed = LinkWithCompiler(compiler, memo)(bogus, "/bin/sh");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("a C++ library's link failed"), std::string::npos);
  std::ifstream in(memo);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("link-probe|"), std::string::npos);
  EXPECT_NE(text.find("\"links\""), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::toolchain

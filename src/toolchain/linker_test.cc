#include "toolchain/linker.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "toolchain/scoped_env_for_test.h"

namespace jaxcc::toolchain {
namespace {

std::string TempDir() {
  char pattern[] = "/tmp/jaxcc-linker-XXXXXX";
  return ::mkdtemp(pattern);
}

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
    auto linker = ChooseLinker("");
    ASSERT_TRUE(linker.ok()) << linker.error().message;
    EXPECT_EQ(linker->name, "gold");
    EXPECT_EQ(linker->flags, std::vector<std::string>{"-fuse-ld=gold"});
    EXPECT_EQ(linker->version, "fake gold 1.0");
  }
  {
    ScopedEnv path("PATH", DirWithLinkers({"mold", "lld"}).c_str());
    EXPECT_EQ(ChooseLinker("")->name, "lld");
  }
  {
    ScopedEnv path("PATH", DirWithLinkers({"mold"}).c_str());
    EXPECT_EQ(ChooseLinker("")->name, "mold");
  }
}

TEST(Linker, NoneInstalledIsTheDriversOwnNotAnError) {
  ScopedEnv choice("JAXCC_LINKER", "auto");
  ScopedEnv path("PATH", DirWithLinkers({}).c_str());
  auto linker = ChooseLinker("");
  ASSERT_TRUE(linker.ok());
  EXPECT_EQ(linker->name, "system");
  EXPECT_TRUE(linker->flags.empty());
}

TEST(Linker, SystemAndNamedChoicesAreHonoured) {
  ScopedEnv path("PATH", DirWithLinkers({"gold", "lld"}).c_str());
  {
    ScopedEnv choice("JAXCC_LINKER", "system");
    auto linker = ChooseLinker("");
    ASSERT_TRUE(linker.ok());
    EXPECT_TRUE(linker->flags.empty());
  }
  {
    ScopedEnv choice("JAXCC_LINKER", "lld");
    auto linker = ChooseLinker("");
    ASSERT_TRUE(linker.ok());
    EXPECT_EQ(linker->flags, std::vector<std::string>{"-fuse-ld=lld"});
    EXPECT_EQ(linker->found_by, "$JAXCC_LINKER=lld");
  }
}

TEST(Linker, AMissingOrUnknownChoiceIsAToolchainErrorWithTheFix) {
  ScopedEnv path("PATH", DirWithLinkers({"gold"}).c_str());
  {
    ScopedEnv choice("JAXCC_LINKER", "mold");
    auto linker = ChooseLinker("");
    ASSERT_FALSE(linker.ok());
    EXPECT_EQ(linker.error().kind, ErrorKind::kToolchain);
    EXPECT_NE(linker.error().message.find("apt-get install mold"), std::string::npos)
        << linker.error().message;
  }
  {
    ScopedEnv choice("JAXCC_LINKER", "bfd2");
    auto linker = ChooseLinker("");
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
  EXPECT_EQ(ChooseLinker("")->name, "lld");
}

}  // namespace
}  // namespace jaxcc::toolchain

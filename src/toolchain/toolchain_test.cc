#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "toolchain/host_compiler.h"
#include "toolchain/ninja.h"
#include "toolchain/scoped_env_for_test.h"
#include "toolchain/version_memo.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::toolchain {
namespace {

std::string TempDir() { return testing_util::MakeTestTempDir("jaxcc-toolchain"); }

// A fake compiler that counts how often --version runs, to prove the memo avoids subprocesses.
std::string WriteFakeCompiler(const std::string& dir) {
  std::string path = dir + "/fake-g++";
  // Only `--version` counts: the linker's probe link (linker_probe.cc) runs the compiler too.
  std::ofstream(path) << "#!/bin/sh\n[ \"$1\" = --version ] && echo run >> " << dir
                      << "/runs\necho 'fake-g++ 1.0'\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

int CountRuns(const std::string& dir) {
  std::ifstream in(dir + "/runs");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(HostCompiler, CxxWinsAndVersionIsMemoisedAcrossProcessesByStat) {
  std::string dir = TempDir();
  std::string fake = WriteFakeCompiler(dir);
  std::string memo = dir + "/memo.json";
  ScopedEnv cxx("CXX", fake.c_str());
  auto first = FindHostCompiler(memo);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->path, fake);
  EXPECT_EQ(first->version, "fake-g++ 1.0");
  EXPECT_EQ(CountRuns(dir), 1);
  ResetHostCompilerMemo();  // a "new process": only the file memo remains
  auto second = FindHostCompiler(memo);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->version, "fake-g++ 1.0");
  EXPECT_EQ(CountRuns(dir), 1) << "the memo file should have answered without running it";
}

TEST(HostCompiler, LauncherPrefixIsKept) {
  std::string dir = TempDir();
  std::string fake = WriteFakeCompiler(dir);
  std::string value = "env " + fake;
  ScopedEnv cxx("CXX", value.c_str());
  auto found = FindHostCompiler("");
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->command.size(), 2u);
  EXPECT_EQ(found->command[1], fake);
  EXPECT_EQ(found->path, fake);
}

TEST(HostCompiler, NothingFoundListsWhatWasTriedAndTheFix) {
  ScopedEnv cxx("CXX", nullptr);
  ScopedEnv path("PATH", "/nonexistent-dir");
  auto found = FindHostCompiler("");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().kind, ErrorKind::kToolchain);
  const std::string& m = found.error().message;
  EXPECT_NE(m.find("g++: not found"), std::string::npos) << m;
  EXPECT_NE(m.find("clang++: not found"), std::string::npos) << m;
  EXPECT_NE(m.find("How to fix"), std::string::npos) << m;
}

// Decision 252: CXX naming no compiler was passed over for g++ on PATH, silently.
TEST(HostCompiler, CxxNamingNoCompilerIsAnErrorNotAFallBack) {
  std::string dir = TempDir();
  std::string fake = WriteFakeCompiler(dir);
  std::string path = dir + ":/nonexistent-dir";
  ScopedEnv search("PATH", path.c_str());  // a usable compiler on PATH, to fall back to
  for (const char* value : {"notacompiler", "/nonexistent/g++", "/bin/false"}) {
    ScopedEnv cxx("CXX", value);
    auto found = FindHostCompiler("");
    ASSERT_FALSE(found.ok()) << value << " gave " << found->path;
    EXPECT_EQ(found.error().kind, ErrorKind::kToolchain);
    const std::string& m = found.error().message;
    EXPECT_NE(m.find(std::string("$CXX=") + value + " names no usable C++ compiler"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("How to fix: unset CXX"), std::string::npos) << m;
  }
  ScopedEnv cxx("CXX", "fake-g++");  // a name resolvable on PATH still works
  auto found = FindHostCompiler("");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->path, fake);
}

TEST(Ninja, EnvOverrideAndMissingNinjaError) {
  {
    ScopedEnv env("JAXCC_NINJA", "/bin/true");
    auto found = FindNinja({});
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(*found, "/bin/true");
  }
  ScopedEnv env("JAXCC_NINJA", nullptr);
  ScopedEnv path("PATH", "/nonexistent-dir");
  auto missing = FindNinja({"/also-missing"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("pip install ninja"), std::string::npos);
  EXPECT_NE(missing.error().message.find("/also-missing/ninja: not found"), std::string::npos);
}

TEST(Ninja, WheelDirsFollowImportOrderThenTheInterpreter) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  auto dirs = NinjaWheelDirs({"/site/a", "", "rel/b", "/site/c/../d"}, "/venv/bin/python3");
  std::vector<std::string> want = {"/site/a/ninja/data/bin",
                                   std::string(cwd) + "/rel/b/ninja/data/bin",
                                   "/site/d/ninja/data/bin", "/venv/bin"};
  EXPECT_EQ(dirs, want);
  EXPECT_TRUE(NinjaWheelDirs({}, "").empty());
}

TEST(VersionMemo, CorruptMemoIsAMissNotAnError) {
  std::string dir = TempDir();
  std::ofstream(dir + "/memo.json") << "{not json";
  EXPECT_FALSE(LookupVersion(dir + "/memo.json", "x|1|2|3").has_value());
  RememberVersion(dir + "/memo.json", "x|1|2|3", "v1");
  EXPECT_EQ(LookupVersion(dir + "/memo.json", "x|1|2|3").value_or(""), "v1");
}

}  // namespace
}  // namespace jaxcc::toolchain

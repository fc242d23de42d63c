// The precompiled wrapper prelude (decision 122): built once into the cache, found and used by
// GCC when a wrapper compiles, and never a reason for a build to fail.
#include "pipeline/wrapper_pch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cache/test_scratch_dir.h"
#include "codegen/ffi_wrapper.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace jaxcc::pipeline {
namespace {

using cache::testing_util::ScratchDir;

TEST(IsGccVersion, TellsGccFromClang) {
  EXPECT_TRUE(IsGccVersion("g++ (Debian 12.2.0-14) 12.2.0"));
  EXPECT_TRUE(IsGccVersion("c++ (Debian 12.2.0-14) 12.2.0"));
  EXPECT_TRUE(IsGccVersion("x86_64-linux-gnu-g++-12 (GCC) 12.2.0"));
  EXPECT_FALSE(IsGccVersion("Debian clang version 14.0.6"));
  EXPECT_FALSE(IsGccVersion("clang version 17.0.0 (https://github.com/llvm/llvm-project)"));
  EXPECT_FALSE(IsGccVersion("Apple clang version 15.0.0 (clang-1500.3.9.4)"));
  EXPECT_FALSE(IsGccVersion(""));
}

class WrapperPchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(JAXCC_TEST_FFI_INCLUDE_DIR).empty()) {
      GTEST_SKIP() << "configure with -DJAXCC_FFI_INCLUDE_DIR (scripts/test.sh does)";
    }
    ASSERT_FALSE(cache_.path().empty());
  }

  // The wrapper's command as build_plan.cc makes it, for this project's compiler.
  std::vector<std::string> Command(const std::string& level = "-O1") const {
    return {JAXCC_TEST_CXX,
            "-std=c++17",
            level,
            "-fPIC",
            "-fvisibility=hidden",
            "-fvisibility-inlines-hidden",
            "-DNDEBUG",
            "-isystem",
            JAXCC_TEST_FFI_INCLUDE_DIR,
            "-isystem",
            std::string(JAXCC_SOURCE_DIR) + "/include"};
  }

  // Builds the prelude when it is missing, then asks for the wrapper's flags.
  std::vector<std::string> Flags(const std::vector<std::string>& command,
                                 const std::string& version = "g++ (Debian 12.2.0-14) 12.2.0") {
    bool built = BuildWrapperPch(cache_.path(), command, version, "toolchain", "headers", 120);
    std::vector<std::string> flags =
        WrapperPchFlags(cache_.path(), command, version, "toolchain", "headers");
    EXPECT_EQ(built, !flags.empty());
    return flags;
  }

  // Compiles a wrapper-like unit (the prelude's includes, then code using them) with `flags`
  // added and -H, which names every header read: "! <path>.gch" when GCC took the PCH.
  std::string CompileShowingHeaders(const std::vector<std::string>& flags) {
    std::string source = cache_ / "ffi_wrapper.cc";
    EXPECT_TRUE(WriteFile(source, codegen::WrapperPrelude() +
                                      "int f(jaxcc::Tensor* t) { return t->ndim(); }\n")
                    .ok());
    std::vector<std::string> argv = Command();
    argv.insert(argv.end(), flags.begin(), flags.end());
    for (const std::string& arg : {std::string("-H"), std::string("-c"), source, std::string("-o"),
                                   cache_ / "ffi_wrapper.o"}) {
      argv.push_back(arg);
    }
    auto run = RunProcess(argv);
    EXPECT_TRUE(run.ok());
    EXPECT_EQ(run->exit_code, 0) << run->output;
    return run->output;
  }

  ScratchDir cache_;
};

TEST_F(WrapperPchTest, BuiltOnceIntoTheCacheAndTakenByGcc) {
  // Asking never builds (a build does not wait for the prelude).
  EXPECT_TRUE(WrapperPchFlags(cache_.path(), Command(), "g++ 12", "toolchain", "headers").empty());
  EXPECT_FALSE(StatPath(cache_ / ".pch").exists);
  std::vector<std::string> flags = Flags(Command());
  ASSERT_EQ(flags.size(), 4u);
  EXPECT_EQ(flags[0], "-isystem");
  EXPECT_EQ(flags[2], "-include");
  std::string gch = JoinPath(flags[1], "wrapper_prelude.h.gch");
  FileInfo built = StatPath(gch);
  ASSERT_TRUE(built.exists);
  EXPECT_EQ(DirName(flags[1]), cache_ / ".pch");
  // Private to this user, like every cache entry.
  struct stat st;
  ASSERT_EQ(::stat(gch.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 022, 0u);

  // -H marks a header read at depth n with n dots: with the PCH, the unit's own includes of the
  // prelude's headers are guarded no-ops and nothing below them is opened.
  std::string headers = CompileShowingHeaders(flags);
  EXPECT_NE(headers.find("! " + gch), std::string::npos) << headers;
  EXPECT_EQ(headers.find("\n.. "), std::string::npos) << headers;
  // Without the flags the same unit parses its headers itself.
  EXPECT_NE(CompileShowingHeaders({}).find("\n.. "), std::string::npos);

  // The second wrapper finds it: same flags, nothing rebuilt.
  EXPECT_EQ(Flags(Command()), flags);
  FileInfo again = StatPath(gch);
  EXPECT_EQ(again.mtime_ns, built.mtime_ns);
  EXPECT_EQ(again.inode, built.inode);
}

TEST_F(WrapperPchTest, OtherFlagsGetAPrecompiledPreludeOfTheirOwn) {
  std::vector<std::string> o1 = Flags(Command("-O1"));
  std::vector<std::string> o0 = Flags(Command("-O0"));
  ASSERT_EQ(o1.size(), 4u);
  ASSERT_EQ(o0.size(), 4u);
  EXPECT_NE(o1[1], o0[1]);
  EXPECT_TRUE(
      WrapperPchFlags(cache_.path(), Command(), "g++ 12", "toolchain", "other headers").empty());
}

TEST_F(WrapperPchTest, NoneForClangOrWhenGccCannotBuildIt) {
  EXPECT_TRUE(Flags(Command(), "Debian clang version 14.0.6").empty());
  EXPECT_FALSE(StatPath(cache_ / ".pch").exists);
  std::vector<std::string> broken = Command();
  broken.push_back("-fno-such-option-for-jaxcc");
  EXPECT_TRUE(Flags(broken).empty());
  // Remembered: the next wrapper does not run the failing compile again.
  bool failed_marker = false;
  for (const std::string& dir : ListDir(cache_ / ".pch")) {
    failed_marker |= StatPath(JoinPath(cache_ / ".pch", dir + "/wrapper_prelude.failed")).exists;
  }
  EXPECT_TRUE(failed_marker);
  EXPECT_TRUE(Flags(broken).empty());
}

TEST_F(WrapperPchTest, ADamagedPrecompiledHeaderIsBuiltAgainNeverRead) {
  std::vector<std::string> flags = Flags(Command());
  ASSERT_EQ(flags.size(), 4u);
  std::string gch = JoinPath(flags[1], "wrapper_prelude.h.gch");
  auto bytes = ReadFile(gch);
  ASSERT_TRUE(bytes.ok());
  std::string damaged = *bytes;
  damaged[damaged.size() / 2] ^= 0x5A;
  ASSERT_TRUE(WriteFile(gch, damaged).ok());
  FileInfo before = StatPath(gch);
  EXPECT_EQ(Flags(Command()), flags);
  FileInfo after = StatPath(gch);
  EXPECT_NE(after.inode, before.inode);  // replaced by a fresh build (temporary name, rename)
  EXPECT_TRUE(*ReadFile(gch) != damaged);
}

TEST_F(WrapperPchTest, ABuilderThatDiedLeavesNoTemporaryFileBehindTheNextBuild) {
  std::vector<std::string> flags = Flags(Command());
  ASSERT_EQ(flags.size(), 4u);
  std::string gch = JoinPath(flags[1], "wrapper_prelude.h.gch");
  // What a builder killed before its rename leaves: a temporary file and no intact .gch.
  ASSERT_TRUE(WriteFile(gch + ".tmp-deadbeef0000", "half a header").ok());
  ASSERT_TRUE(WriteFile(gch, "damaged").ok());
  EXPECT_EQ(Flags(Command()), flags);
  for (const std::string& name : ListDir(flags[1])) {
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
  }
}

TEST_F(WrapperPchTest, AFileOthersCanWriteIsNotUsed) {
  std::vector<std::string> flags = Flags(Command());
  ASSERT_EQ(flags.size(), 4u);
  std::string gch = JoinPath(flags[1], "wrapper_prelude.h.gch");
  ASSERT_EQ(::chmod(gch.c_str(), 0666), 0);
  // Not trusted, so rebuilt under the lock (a fresh file of this user's) rather than read.
  std::vector<std::string> again = Flags(Command());
  ASSERT_EQ(again, flags);
  struct stat st;
  ASSERT_EQ(::stat(gch.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 022, 0u);
}

}  // namespace
}  // namespace jaxcc::pipeline

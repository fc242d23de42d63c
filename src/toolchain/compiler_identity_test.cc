#include "toolchain/compiler_identity.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "util/fs.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::toolchain {
namespace {

std::string TempDir() { return testing_util::MakeTestTempDir("jaxcc-identity"); }

TEST(CompilerIdentity, AWrapperScriptRewrittenUnderItsPathIsAnotherCompiler) {
  const std::string dir = TempDir();
  const std::string wrapper = dir + "/cxx";
  const std::string memo = dir + "/memo.json";
  std::ofstream(wrapper) << "#!/bin/sh\nexec g++ \"$@\" -DVALUE=1\n";
  auto first = ExecutableDigest(wrapper, memo);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->rfind("sha256:", 0), 0u);
  EXPECT_EQ(*ExecutableDigest(wrapper, memo), *first);                 // memoised, same answer
  std::ofstream(wrapper) << "#!/bin/sh\nexec g++ \"$@\" -DVALUE=2\n";  // same size
  auto second = ExecutableDigest(wrapper, memo);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*second, *first);
}

TEST(CompilerIdentity, AMissingCompilerIsATypedError) {
  auto digest = ExecutableDigest("/nonexistent/g++", "");
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.error().kind, ErrorKind::kToolchain);
}

TEST(CompilerIdentity, ParsesTheIncludeAndLibrarySearchLists) {
  const std::string verbose =
      "#include \"...\" search starts here:\n"
      "#include <...> search starts here:\n"
      " /usr/include/c++/12\n"
      " /usr/include/../include\n"
      " /nonexistent/dir\n"
      " /usr/include (framework directory)\n"
      "End of search list.\n";
  const std::string search =
      "install: /usr/lib/gcc/x86_64-linux-gnu/12/\n"
      "libraries: =/usr/lib/gcc/x86_64-linux-gnu/12/:/lib/../lib/:/nonexistent\n";
  std::vector<std::string> dirs = ParseBuiltinSearchDirs(verbose, search);
  EXPECT_EQ(dirs, (std::vector<std::string>{"/usr/include/c++/12", "/usr/include",
                                            "/usr/lib/gcc/x86_64-linux-gnu/12", "/lib"}));
}

TEST(CompilerIdentity, TheRealCompilersDirectoriesExcludeCpath) {
  ::setenv("CPATH", "/tmp", 1);
  std::vector<std::string> dirs = BuiltinSearchDirs("/usr/bin/g++", "");
  ::unsetenv("CPATH");
  EXPECT_FALSE(dirs.empty());
  for (const std::string& dir : dirs) EXPECT_NE(dir, "/tmp");
}

}  // namespace
}  // namespace jaxcc::toolchain

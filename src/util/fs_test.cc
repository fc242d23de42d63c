#include "util/fs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

namespace jaxcc {
namespace {

class FsTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "fs_testXXXXXX";
    ASSERT_NE(::mkdtemp(dir_.data()), nullptr);
  }
  void TearDown() override { ASSERT_TRUE(RemoveTree(dir_).ok()); }
  std::string dir_;
};

TEST_F(FsTest, WriteFileAtomicLeavesNoTempFile) {
  std::string path = JoinPath(dir_, "out.json");
  ASSERT_TRUE(WriteFileAtomic(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second", 0600).ok());
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"out.json"});
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "second");
}

TEST_F(FsTest, WriteFileAtomicFailsCleanlyInAMissingDirectory) {
  Status status = WriteFileAtomic(JoinPath(dir_, "missing/out"), "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kIo);
  EXPECT_NE(status.error().message.find("missing/out"), std::string::npos);
  EXPECT_TRUE(ListDir(dir_).empty());
}

TEST_F(FsTest, ReadFileOfMissingPathFails) {
  auto text = ReadFile(JoinPath(dir_, "nope"));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("nope"), std::string::npos);
}

TEST_F(FsTest, MakeDirsCreatesEveryLevelWithTheMode) {
  std::string deep = JoinPath(dir_, "a/b/c");
  ASSERT_TRUE(MakeDirs(deep, 0700).ok());
  ASSERT_TRUE(MakeDirs(deep, 0700).ok());  // existing is fine
  for (const std::string& path : {JoinPath(dir_, "a"), JoinPath(dir_, "a/b"), deep}) {
    FileInfo info = StatPath(path);
    EXPECT_TRUE(info.is_dir);
    EXPECT_EQ(info.mode & 0777, 0700u) << path;
  }
}

TEST_F(FsTest, MakeDirsReportsAFileInTheWay) {
  ASSERT_TRUE(WriteFile(JoinPath(dir_, "file"), "x").ok());
  Status status = MakeDirs(JoinPath(dir_, "file/sub"));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("file"), std::string::npos);
}

TEST_F(FsTest, RemoveTreeDoesNotFollowSymlinks) {
  std::string outside = JoinPath(dir_, "outside");
  ASSERT_TRUE(MakeDirs(outside).ok());
  ASSERT_TRUE(WriteFile(JoinPath(outside, "keep"), "x").ok());
  std::string tree = JoinPath(dir_, "tree");
  ASSERT_TRUE(MakeDirs(JoinPath(tree, "sub")).ok());
  ASSERT_TRUE(WriteFile(JoinPath(tree, "sub/file"), "x").ok());
  ASSERT_EQ(::symlink(outside.c_str(), JoinPath(tree, "link").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), JoinPath(dir_, "top-link").c_str()), 0);

  ASSERT_TRUE(RemoveTree(tree).ok());
  EXPECT_FALSE(StatPath(tree).exists);
  ASSERT_TRUE(RemoveTree(JoinPath(dir_, "top-link") + "/").ok());  // trailing slash too
  EXPECT_TRUE(StatPath(JoinPath(outside, "keep")).exists);
  EXPECT_TRUE(RemoveTree(JoinPath(dir_, "never-existed")).ok());
}

TEST_F(FsTest, StatAndListDir) {
  ASSERT_TRUE(WriteFile(JoinPath(dir_, "b"), "12345").ok());
  ASSERT_TRUE(WriteFile(JoinPath(dir_, "a"), "").ok());
  EXPECT_EQ(ListDir(dir_), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(ListDir(JoinPath(dir_, "missing")).empty());
  FileInfo info = StatPath(JoinPath(dir_, "b"));
  EXPECT_TRUE(info.exists);
  EXPECT_FALSE(info.is_dir);
  EXPECT_EQ(info.size, 5);
  EXPECT_GT(info.mtime_ns, 0);
  EXPECT_EQ(info.owner, ::getuid());
  EXPECT_FALSE(StatPath(JoinPath(dir_, "missing")).exists);
}

TEST(Paths, JoinDirBase) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "/b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("a", ""), "a");
  EXPECT_EQ(DirName("/a/b"), "/a");
  EXPECT_EQ(DirName("/a/b/"), "/a");
  EXPECT_EQ(DirName("/a"), "/");
  EXPECT_EQ(DirName("a"), ".");
  EXPECT_EQ(DirName("/"), "/");
  EXPECT_EQ(BaseName("/a/b"), "b");
  EXPECT_EQ(BaseName("/a/b/"), "b");
  EXPECT_EQ(BaseName("b"), "b");
  EXPECT_EQ(BaseName("/"), "/");
}

TEST(Paths, AbsolutePathIsLexical) {
  EXPECT_EQ(AbsolutePath("/a/./b/../c//d/"), "/a/c/d");
  EXPECT_EQ(AbsolutePath("/.."), "/");
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(AbsolutePath("x/y"), AbsolutePath(std::string(cwd) + "/x/y"));
}

TEST(RandomHex, LengthAndAlphabet) {
  std::string a = RandomHex(13);
  EXPECT_EQ(a.size(), 13u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(RandomHex(16), RandomHex(16));
  EXPECT_EQ(RandomHex(0), "");
}

TEST(RandomHex, DiffersAcrossFork) {
  // A PRNG state copied by fork() would give parent and child the same names.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string mine = RandomHex(16);
    (void)!::write(fds[1], mine.data(), mine.size());
    ::_exit(0);
  }
  std::string parent = RandomHex(16);
  char buffer[16];
  ASSERT_EQ(::read(fds[0], buffer, sizeof(buffer)), 16);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_NE(parent, std::string(buffer, 16));
}

TEST(TimestampSettled, CountsFractionsOfASecond) {
  const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  EXPECT_FALSE(TimestampSettled(now_ns));
  EXPECT_FALSE(TimestampSettled(now_ns - 2'500'000'000LL));
  // 3.2 s old is settled at any fraction of the current second; whole-second clocks said no in
  // up to a fifth of the cases and made a warm hit hash its library again.
  EXPECT_TRUE(TimestampSettled(now_ns - 3'200'000'000LL));
  EXPECT_TRUE(TimestampSettled(0));
}

}  // namespace
}  // namespace jaxcc

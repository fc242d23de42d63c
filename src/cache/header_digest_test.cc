#include "cache/header_digest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cache/test_scratch_dir.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

using testing_util::Age;
using testing_util::ScratchDir;

class HeaderDigestTest : public testing::Test {
 protected:
  void SetUp() override {
    Write("ffi/api/ffi.h", "struct Ffi {};\n");
    Write("ffi/api/c_api.h", "typedef int X;\n");
    Write("jaxcc/jaxcc/tensor.h", "template <class T> struct Tensor;\n");
  }

  // Headers are aged past the racy-timestamp window so they are memoised.
  void Write(const std::string& relative, const std::string& contents, int age_seconds = 100) {
    std::string path = scratch_ / relative;
    ASSERT_TRUE(MakeDirs(DirName(path)).ok());
    ASSERT_TRUE(WriteFile(path, contents).ok());
    Age(path, age_seconds);
  }

  std::vector<std::string> Dirs() const { return {scratch_ / "ffi/api", scratch_ / "jaxcc"}; }
  std::string Memo() const { return scratch_ / "memo/headers.json"; }

  std::string Digest(const std::string& memo) {
    auto digest = DigestDirectories(Dirs(), memo);
    EXPECT_TRUE(digest.ok());
    return digest.ok() ? *digest : "";
  }

  nlohmann::json ReadMemo() {
    auto text = ReadFile(Memo());
    return text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  }

  ScratchDir scratch_;
};

TEST_F(HeaderDigestTest, MemoDoesNotChangeTheDigest) {
  std::string plain = Digest("");
  EXPECT_EQ(plain.size(), 64u);
  EXPECT_FALSE(StatPath(Memo()).exists);
  EXPECT_EQ(Digest(Memo()), plain);
  EXPECT_EQ(Digest(Memo()), plain);
  nlohmann::json memo = ReadMemo();
  ASSERT_TRUE(memo.is_object());
  EXPECT_EQ(memo.size(), 3u);
  EXPECT_EQ(StatPath(Memo()).mode & 0777, 0600u);
}

TEST_F(HeaderDigestTest, SecondCallUsesTheMemoInsteadOfReadingFiles) {
  std::string real = Digest(Memo());
  // Poison every memo entry: if the second call read the files, it would not notice.
  nlohmann::json memo = ReadMemo();
  ASSERT_EQ(memo.size(), 3u);
  for (auto& [key, sha] : memo.items()) sha = Sha256Hex("poison");
  ASSERT_TRUE(WriteFileAtomic(Memo(), memo.dump()).ok());
  ASSERT_EQ(::unlink((Memo() + ".last").c_str()), 0);  // the one-record fast path, tested below
  EXPECT_NE(Digest(Memo()), real);
  // With the memo out of the way the real digest comes back.
  EXPECT_EQ(Digest(""), real);
}

TEST_F(HeaderDigestTest, LastRecordAnswersWhileNoFileStatChanged) {
  std::string real = Digest(Memo());
  auto last = ReadFile(Memo() + ".last");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->substr(0, 64), real);
  // Poison the record's digest: while every stat matches, the record answers (no memo, no file
  // read), which is what makes a warm load cheap.
  std::string poisoned = Sha256Hex("poison");
  ASSERT_TRUE(WriteFileAtomic(Memo() + ".last", poisoned + last->substr(64)).ok());
  EXPECT_EQ(Digest(Memo()), poisoned);
  // Any stat change (here: new content, so size and mtime) misses it and the files decide again.
  Write("jaxcc/jaxcc/tensor.h", "template <class T> struct Tensor { T* p; };\n");
  std::string changed = Digest(Memo());
  EXPECT_NE(changed, poisoned);
  EXPECT_EQ(changed, Digest(""));
  // A recently written file keeps the record from being written (racy timestamps).
  Write("jaxcc/jaxcc/fresh.h", "// just written\n", /*age_seconds=*/0);
  std::string with_fresh = Digest(Memo());
  EXPECT_NE(ReadFile(Memo() + ".last")->substr(0, 64), with_fresh);
}

TEST_F(HeaderDigestTest, ChangedHeaderChangesTheDigestAndTheMemo) {
  std::string before = Digest(Memo());
  Write("jaxcc/jaxcc/tensor.h", "template <class T> struct Tensor {};\n");
  std::string after = Digest(Memo());
  EXPECT_NE(after, before);
  EXPECT_EQ(after, Digest(""));
  nlohmann::json memo = ReadMemo();
  EXPECT_EQ(memo.size(), 3u);  // the superseded entry is gone
  bool found = false;
  for (auto& [key, sha] : memo.items()) {
    found = found || sha == Sha256Hex("template <class T> struct Tensor {};\n");
  }
  EXPECT_TRUE(found);
}

TEST_F(HeaderDigestTest, AddedRemovedAndRenamedFilesChangeTheDigest) {
  std::string base = Digest(Memo());
  Write("jaxcc/jaxcc/extra.h", "");
  std::string added = Digest(Memo());
  EXPECT_NE(added, base);
  ASSERT_EQ(::unlink((scratch_ / "jaxcc/jaxcc/extra.h").c_str()), 0);
  EXPECT_EQ(Digest(Memo()), base);
  ASSERT_EQ(
      ::rename((scratch_ / "ffi/api/c_api.h").c_str(), (scratch_ / "ffi/api/c_api2.h").c_str()), 0);
  EXPECT_NE(Digest(Memo()), base);
}

TEST_F(HeaderDigestTest, RecentlyModifiedFilesAreNotMemoised) {
  Write("jaxcc/jaxcc/fresh.h", "// just written\n", /*age_seconds=*/0);
  std::string digest = Digest(Memo());
  EXPECT_EQ(ReadMemo().size(), 3u);  // fresh.h hashed but not remembered
  EXPECT_EQ(Digest(Memo()), digest);
}

TEST_F(HeaderDigestTest, CorruptMemoIsIgnoredAndRebuilt) {
  std::string real = Digest("");
  ASSERT_TRUE(MakeDirs(DirName(Memo())).ok());
  ASSERT_TRUE(WriteFile(Memo(), "{ corrupt").ok());
  EXPECT_EQ(Digest(Memo()), real);
  EXPECT_EQ(ReadMemo().size(), 3u);
  ASSERT_TRUE(WriteFile(Memo(), "[1, 2, 3]").ok());
  EXPECT_EQ(Digest(Memo()), real);
}

TEST_F(HeaderDigestTest, MissingDirectoryAndOrderMatter) {
  std::string base = Digest("");
  auto swapped = DigestDirectories({Dirs()[1], Dirs()[0]}, "");
  ASSERT_TRUE(swapped.ok());
  EXPECT_NE(*swapped, base);
  auto missing = DigestDirectories({scratch_ / "nope"}, Memo());
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->size(), 64u);
}

TEST_F(HeaderDigestTest, OtherHeaderSetsSharingTheMemoAreKept) {
  Write("other/x.h", "x");
  Digest(Memo());
  ASSERT_TRUE(DigestDirectories({scratch_ / "other"}, Memo()).ok());
  EXPECT_EQ(ReadMemo().size(), 4u);
}

}  // namespace
}  // namespace jaxcc::cache

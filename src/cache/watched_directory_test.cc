#include "cache/watched_directory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "cache/test_scratch_dir.h"
#include "util/fs.h"

namespace jaxcc::cache {
namespace {

using testing_util::Age;
using testing_util::ScratchDir;

constexpr std::int64_t kFarFuture = INT64_MAX;

TEST(WatchedDirectory, ANewNameInASearchDirectoryIsAChangeAnEditorSwapFileIsNot) {
  ScratchDir scratch;
  const std::string dir = scratch / "inc";
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFile(JoinPath(dir, "a.h"), "a").ok());
  Age(dir, 100);
  WatchedDirectory watched = WatchDirectory(dir, /*names_matter=*/true, {}, kFarFuture);
  EXPECT_TRUE(DirectoryUnchanged(watched));
  ASSERT_TRUE(WriteFile(JoinPath(dir, ".a.h.swp"), "x").ok());  // moves the stamp only
  EXPECT_TRUE(DirectoryUnchanged(watched));
  ASSERT_TRUE(WriteFile(JoinPath(dir, "results.npy"), "x").ok());  // a notebook's output
  ASSERT_TRUE(WriteFile(JoinPath(dir, "run.log"), "x").ok());
  EXPECT_TRUE(DirectoryUnchanged(watched));
  ASSERT_TRUE(WriteFile(JoinPath(dir, "tuning.h"), "#define X 1").ok());  // __has_include's
  EXPECT_FALSE(DirectoryUnchanged(watched));
}

// The warm path leaves out a shadow stat only where the directory's own check would see the
// file appear (decision 250): each "true" below is backed by DirectoryUnchanged turning false.
TEST(WatchedDirectory, SeesANewFileOnlyForNamesItsDigestCounts) {
  ScratchDir scratch;
  const std::string dir = scratch / "vendor";
  ASSERT_TRUE(MakeDirs(dir).ok());
  Age(dir, 100);
  const WatchedDirectory by_names = WatchDirectory(dir, /*names_matter=*/true, {}, kFarFuture);
  EXPECT_TRUE(WatchSeesNewFile(by_names, JoinPath(dir, "k.h")));
  EXPECT_FALSE(WatchSeesNewFile(by_names, JoinPath(dir, "sub/k.h")));  // not directly in it
  EXPECT_FALSE(WatchSeesNewFile(by_names, scratch / "k.h"));
  EXPECT_FALSE(WatchSeesNewFile(by_names, JoinPath(dir, "table.npy")));  // an ignored name
  const WatchedDirectory by_stamp = WatchDirectory(dir, /*names_matter=*/false, {}, kFarFuture);
  EXPECT_FALSE(WatchSeesNewFile(by_stamp, JoinPath(dir, "k.h")));
  WatchedDirectory changed = by_names;
  changed.names_sha256 = kDirectoryUnknown;
  EXPECT_FALSE(WatchSeesNewFile(changed, JoinPath(dir, "k.h")));
  const std::string missing = scratch / "not-yet";
  const WatchedDirectory absent = WatchDirectory(missing, /*names_matter=*/true, {}, kFarFuture);
  EXPECT_TRUE(WatchSeesNewFile(absent, JoinPath(missing, "k.h")));
  const std::vector<std::string> left = ShadowsNoWatchSees(
      {JoinPath(dir, "k.h"), JoinPath(dir, "t.npy"), JoinPath(missing, "k.h"), scratch / "k.h"},
      {by_names, absent});
  EXPECT_EQ(left, (std::vector<std::string>{JoinPath(dir, "t.npy"), scratch / "k.h"}));
  // What "sees" promises, for the names kind and the missing kind alike.
  ASSERT_TRUE(WriteFile(JoinPath(dir, "k.h"), "#define K 1").ok());
  EXPECT_FALSE(DirectoryUnchanged(by_names));
  ASSERT_TRUE(MakeDirs(missing).ok());
  ASSERT_TRUE(WriteFile(JoinPath(missing, "k.h"), "#define K 1").ok());
  EXPECT_FALSE(DirectoryUnchanged(absent));
}

TEST(WatchedDirectory, AReplacedFileAmongTheCompilersOwnIsSeenByItsBytes) {
  ScratchDir scratch;
  const std::string dir = scratch / "sys";
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFile(JoinPath(dir, "stdio.h"), "one").ok());
  ASSERT_TRUE(WriteFile(JoinPath(dir, "unread.h"), "u").ok());
  Age(dir, 100);
  WatchedDirectory watched = WatchDirectory(dir, /*names_matter=*/false, {"stdio.h"}, kFarFuture);
  EXPECT_FALSE(watched.files_sha256.empty());
  EXPECT_TRUE(DirectoryUnchanged(watched));
  // A package manager writes a new file and renames it over the old one: the stamp moves.
  ASSERT_TRUE(WriteFile(JoinPath(dir, "stdio.h.new"), "two").ok());
  ASSERT_EQ(::rename(JoinPath(dir, "stdio.h.new").c_str(), JoinPath(dir, "stdio.h").c_str()), 0);
  EXPECT_FALSE(DirectoryUnchanged(watched));
  // The same bytes under a moved stamp still hold, and the new stamp is handed back.
  WatchedDirectory again = WatchDirectory(dir, false, {"stdio.h"}, kFarFuture);
  ASSERT_TRUE(WriteFile(JoinPath(dir, "other.h"), "o").ok());
  WatchedDirectory checked;
  EXPECT_TRUE(DirectoryUnchanged(again, &checked));
  // The warm index keeps no file list: a moved stamp sends the load to the full path.
  WatchedDirectory copy = again;
  copy.files.clear();
  EXPECT_FALSE(DirectoryUnchanged(copy));
}

TEST(WatchedDirectory, ChangedDuringTheBuildNeverMatchesAndAMissingOneMustStayMissing) {
  ScratchDir scratch;
  const std::string dir = scratch / "young";
  ASSERT_TRUE(MakeDirs(dir).ok());
  WatchedDirectory young = WatchDirectory(dir, true, {}, /*build_start_ns=*/0);
  EXPECT_EQ(young.names_sha256, kDirectoryUnknown);
  EXPECT_FALSE(DirectoryUnchanged(young));
  const std::string missing = scratch / "later";
  WatchedDirectory absent = WatchDirectory(missing, true, {}, kFarFuture);
  EXPECT_TRUE(DirectoryUnchanged(absent));
  ASSERT_TRUE(MakeDirs(missing).ok());
  EXPECT_FALSE(DirectoryUnchanged(absent));
}

}  // namespace
}  // namespace jaxcc::cache

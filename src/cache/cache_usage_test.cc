#include "cache/cache_usage.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/cache_dir.h"
#include "cache/file_lock.h"
#include "cache/ownership.h"
#include "cache/test_scratch_dir.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

using testing_util::Age;
using testing_util::ScratchDir;

class CacheUsageTest : public testing::Test {
 protected:
  CacheUsageTest() : cache_(scratch_ / "cache") {}

  // Publishes an entry whose library has `bytes` bytes and whose last use was `seconds_ago`.
  std::string Publish(const std::string& name, const std::string& seed, size_t bytes,
                      int seconds_ago) {
    std::string library = scratch_ / "built.so";
    std::string content(bytes, 'x');
    content.replace(0, std::min(seed.size(), bytes), seed.substr(0, bytes));
    EXPECT_TRUE(WriteFile(library, content).ok());
    Manifest manifest;
    manifest.function_names = {"f_" + seed};
    auto entry = cache_.Publish(name, Sha256Hex(seed), library, manifest);
    EXPECT_TRUE(entry.ok());
    Age(entry->dir, seconds_ago);
    return entry->dir;
  }

  ScratchDir scratch_;
  CacheDir cache_;
};

TEST_F(CacheUsageTest, ListsEntriesMostRecentlyUsedFirstWithSizes) {
  Publish("old", "1", 1000, 3000);
  Publish("new", "2", 2000, 10);
  Publish("mid", "3", 3000, 600);
  auto entries = ListEntries(cache_.root());
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].module_name, "new");
  EXPECT_EQ(entries[1].module_name, "mid");
  EXPECT_EQ(entries[2].module_name, "old");
  EXPECT_TRUE(entries[0].complete);
  EXPECT_EQ(entries[0].key, Sha256Hex("2"));
  EXPECT_EQ(entries[0].function_names, std::vector<std::string>{"f_2"});
  // The library plus its manifest.
  EXPECT_GT(entries[0].bytes, 2000);
  EXPECT_LT(entries[0].bytes, 4000);
}

TEST_F(CacheUsageTest, IgnoresHiddenDirectoriesAndForeignNames) {
  Publish("a", "1", 10, 0);
  ASSERT_TRUE(MakeDirs(cache_.root() + "/.build/a-1-00000000").ok());
  ASSERT_TRUE(MakeDirs(cache_.root() + "/not-an-entry").ok());
  EXPECT_EQ(ListEntries(cache_.root()).size(), 1u);
}

TEST_F(CacheUsageTest, MarkUsedRefreshesAStaleUseTimeOnly) {
  std::string dir = Publish("a", "1", 10, 7200);
  std::int64_t before = StatPath(dir).mtime_ns;
  MarkUsed(dir);
  std::int64_t after = StatPath(dir).mtime_ns;
  EXPECT_GT(after - before, 7000LL * 1000000000);
  // A fresh use time is left alone (the warm path writes nothing in a hot loop).
  Age(dir, 5);
  std::int64_t recent = StatPath(dir).mtime_ns;
  MarkUsed(dir);
  EXPECT_EQ(StatPath(dir).mtime_ns, recent);
}

TEST_F(CacheUsageTest, PruneEvictsLeastRecentlyUsedUntilUnderTheCap) {
  Publish("oldest", "1", 10000, 4000);
  Publish("older", "2", 10000, 3000);
  Publish("newer", "3", 10000, 2000);
  Publish("newest", "4", 10000, 1000);
  PruneOptions options;
  options.max_bytes = 25000;  // room for two entries
  auto report = Prune(cache_, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->entries_removed, 2);
  EXPECT_EQ(report->entries_kept, 2);
  EXPECT_GE(report->bytes_freed, 20000);
  EXPECT_LE(report->bytes_kept, 25000);
  EXPECT_FALSE(cache_.Lookup("oldest", Sha256Hex("1")));
  EXPECT_FALSE(cache_.Lookup("older", Sha256Hex("2")));
  EXPECT_TRUE(cache_.Lookup("newer", Sha256Hex("3")));
  EXPECT_TRUE(cache_.Lookup("newest", Sha256Hex("4")));
}

// Issue 49 item 18: an entry directory whose mtime lies ahead (restored from a host whose clock
// ran ahead) stayed the most recently used for ever and outlived every entry used after it.
TEST_F(CacheUsageTest, AnEntryWithAFutureMtimeDoesNotDefeatTheLruOrder) {
  Publish("from_the_future", "1", 10000, -86400);
  ::usleep(1'100'000);  // its ctime, set now by the kernel, is older than the next use
  Publish("used_later", "2", 10000, 0);
  PruneOptions options;
  options.max_bytes = 15000;  // room for one entry
  auto report = Prune(cache_, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(cache_.Lookup("from_the_future", Sha256Hex("1")));
  EXPECT_TRUE(cache_.Lookup("used_later", Sha256Hex("2")));
}

TEST_F(CacheUsageTest, MarkUsedBringsAFutureMtimeBackToNow) {
  std::string dir = Publish("ahead", "1", 100, -86400);
  MarkUsed(dir);
  EXPECT_LE(StatPath(dir).mtime_ns, WallClockNs());
}

TEST_F(CacheUsageTest, PruneNeverEvictsTheKeptEntry) {
  std::string keep = Publish("just_built", "1", 50000, 9000);
  Publish("other", "2", 100, 10);
  PruneOptions options;
  options.max_bytes = 1000;
  options.keep_dir = keep;
  auto report = Prune(cache_, options);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(cache_.Lookup("just_built", Sha256Hex("1")));
  EXPECT_FALSE(cache_.Lookup("other", Sha256Hex("2")));
}

TEST_F(CacheUsageTest, PruneSkipsAnEntryWhoseBuilderHoldsTheLock) {
  Publish("busy", "1", 10000, 5000);
  Publish("idle", "2", 10000, 4000);
  auto lock = FileLock::Acquire(cache_.LockPath("busy", Sha256Hex("1")), 5);
  ASSERT_TRUE(lock.ok());
  PruneOptions options;
  options.max_bytes = 0;
  auto report = Prune(cache_, options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->busy_skipped, 1);
  EXPECT_EQ(report->entries_removed, 1);
  EXPECT_TRUE(cache_.Lookup("busy", Sha256Hex("1")));
}

TEST_F(CacheUsageTest, PruneByAgeKeepsRecentEntries) {
  Publish("stale", "1", 10, 40 * 86400);
  Publish("fresh", "2", 10, 60);
  PruneOptions options;
  options.older_than_seconds = 30 * 86400;
  auto report = Prune(cache_, options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->entries_removed, 1);
  EXPECT_TRUE(cache_.Lookup("fresh", Sha256Hex("2")));
}

TEST_F(CacheUsageTest, PruneRemovesIncompleteEntriesAndOrphanBuildDirectories) {
  Publish("good", "1", 10, 0);
  // An entry directory a killed publisher left without its manifest.
  std::string half = cache_.EntryDir("half", Sha256Hex("9"));
  ASSERT_TRUE(MakeDirs(half).ok());
  ASSERT_TRUE(WriteFile(half + "/half.0123456789ab.so", "partial").ok());
  // A build directory of a process that no longer exists.
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::string orphan = cache_.root() + "/.build/x-" + std::to_string(pid) + "-0a1b2c3d";
  ASSERT_TRUE(MakeDirs(orphan).ok());

  auto report = Prune(cache_, PruneOptions{});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->entries_removed, 0);
  EXPECT_EQ(report->orphans_removed, 2);
  EXPECT_FALSE(StatPath(half).exists);
  EXPECT_FALSE(StatPath(orphan).exists);
  EXPECT_TRUE(cache_.Lookup("good", Sha256Hex("1")));
}

TEST_F(CacheUsageTest, LookupRefusesAnEntryOthersCanWrite) {
  std::string dir = Publish("shared", "1", 10, 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache_.Lookup("shared", Sha256Hex("1"), &miss));
  EXPECT_EQ(miss, LookupMiss::kUnsafe);
  Status trusted = cache_.CheckEntryIsTrusted("shared", Sha256Hex("1"));
  ASSERT_FALSE(trusted.ok());
  EXPECT_EQ(trusted.error().kind, ErrorKind::kCache);
  EXPECT_NE(trusted.error().message.find("0777"), std::string::npos);
  EXPECT_NE(trusted.error().message.find("jaxcc cache clear shared"), std::string::npos);
}

TEST_F(CacheUsageTest, LookupRefusesALibraryOthersCanWrite) {
  std::string dir = Publish("lib", "1", 10, 0);
  auto entry = cache_.Lookup("lib", Sha256Hex("1"));
  ASSERT_TRUE(entry);
  ASSERT_EQ(::chmod(entry->library_path.c_str(), 0666), 0);
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache_.Lookup("lib", Sha256Hex("1"), &miss));
  EXPECT_EQ(miss, LookupMiss::kUnsafe);
}

TEST_F(CacheUsageTest, LookupRefusesAnEntryOwnedByAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  std::string dir = Publish("foreign", "1", 10, 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache_.Lookup("foreign", Sha256Hex("1"), &miss));
  EXPECT_EQ(miss, LookupMiss::kUnsafe);
  Status trusted = CheckPrivatePath(dir, "the cache entry", "fix it");
  ASSERT_FALSE(trusted.ok());
  EXPECT_NE(trusted.error().message.find("uid 65534"), std::string::npos);
}

TEST(ParseByteSize, AcceptsPlainNumbersAndBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("0"), 0);
  EXPECT_EQ(*ParseByteSize("123456"), 123456);
  EXPECT_EQ(*ParseByteSize("4K"), 4096);
  EXPECT_EQ(*ParseByteSize("512M"), 512LL << 20);
  EXPECT_EQ(*ParseByteSize("4G"), 4LL << 30);
  EXPECT_EQ(*ParseByteSize("2gb"), 2LL << 30);
  EXPECT_EQ(*ParseByteSize("1T"), 1LL << 40);
}

TEST(ParseByteSize, RejectsGarbageWithTheFix) {
  for (const char* bad : {"", "G", "-5", "4X", "1.5G", "4 G", "99999999999999999", "4GiB"}) {
    auto parsed = ParseByteSize(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("for example 4G"), std::string::npos);
  }
  EXPECT_FALSE(ParseByteSize("99999999T").ok());  // would overflow
}

}  // namespace
}  // namespace jaxcc::cache

#include "cache/cache_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cache/cache_dir_test_fixture.h"
#include "cache/file_lock.h"
#include "cache/test_scratch_dir.h"
#include "util/fs.h"
#include "util/host_identity.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

TEST_F(CacheDirTest, ConstructorCreatesNothing) {
  CacheDir cache(root());
  EXPECT_FALSE(StatPath(root()).exists);
  LookupMiss miss = LookupMiss::kDamaged;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kAbsent);
  EXPECT_FALSE(StatPath(root()).exists);
}

TEST_F(CacheDirTest, LayoutAndPaths) {
  CacheDir cache(root());
  EXPECT_EQ(cache.root(), root());
  EXPECT_EQ(cache.EntryDir("m", kKey), root() + "/m-" + kKey.substr(0, 24));
  EXPECT_EQ(cache.LockPath("m", kKey), root() + "/.locks/m-" + kKey.substr(0, 24) + ".lock");
}

TEST_F(CacheDirTest, PublishThenLookupHits) {
  CacheDir cache(root());
  auto published = PublishSample(cache, "m", kKey, "library bytes");
  ASSERT_TRUE(published.ok()) << published.error().message;
  EXPECT_EQ(StatPath(root()).mode & 0777, 0700u);
  std::string sha = Sha256Hex("library bytes");
  EXPECT_EQ(published->library_path, cache.EntryDir("m", kKey) + "/m." + sha.substr(0, 12) + ".so");
  EXPECT_EQ(ListDir(published->dir),
            (std::vector<std::string>{"m." + sha.substr(0, 12) + ".so", "manifest.json"}));

  auto entry = cache.Lookup("m", kKey);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->library_path, published->library_path);
  EXPECT_EQ(entry->dir, published->dir);
  EXPECT_EQ(entry->manifest.key, kKey);
  EXPECT_EQ(entry->manifest.module_name, "m");
  EXPECT_EQ(entry->manifest.library_sha256, sha);
  EXPECT_EQ(entry->manifest.function_names, std::vector<std::string>{"add"});
  EXPECT_EQ(*ReadFile(entry->library_path), "library bytes");

  LookupMiss miss;
  EXPECT_FALSE(cache.Lookup("m", kOtherKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kAbsent);
  EXPECT_FALSE(cache.Lookup("other", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kAbsent);
}

TEST_F(CacheDirTest, NewContentGetsANewFileNameAndOldFilesStay) {
  CacheDir cache(root());
  auto first = PublishSample(cache, "m", kKey, "version 1");
  auto second = PublishSample(cache, "m", kKey, "version 2");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->library_path, second->library_path);
  EXPECT_TRUE(StatPath(first->library_path).exists);  // may be mapped by a live process
  auto entry = cache.Lookup("m", kKey);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->library_path, second->library_path);

  // Same content again: same file, same inode (not replaced under a process that mapped it).
  std::uint64_t inode = StatPath(second->library_path).inode;
  auto third = PublishSample(cache, "m", kKey, "version 2");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->library_path, second->library_path);
  EXPECT_EQ(StatPath(third->library_path).inode, inode);
}

TEST_F(CacheDirTest, TruncatedTamperedOrMissingLibraryIsDamaged) {
  CacheDir cache(root());
  auto published = PublishSample(cache, "m", kKey, "0123456789");
  ASSERT_TRUE(published.ok());
  const std::string& lib = published->library_path;
  LookupMiss miss = LookupMiss::kAbsent;

  ASSERT_EQ(::truncate(lib.c_str(), 4), 0);
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kDamaged);

  ASSERT_TRUE(WriteFile(lib, "0123456788").ok());  // same size, one byte changed
  miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kDamaged);

  ASSERT_EQ(::unlink(lib.c_str()), 0);
  miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kDamaged);

  // Publishing again repairs the entry.
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "0123456789").ok());
  EXPECT_TRUE(cache.Lookup("m", kKey));
}

// A warm record's stamp spares hashing the library only while the file's stat is the one it
// was hashed under; any write moves the ctime and the bytes are hashed again (decision 90).
TEST_F(CacheDirTest, LibraryStampSkipsTheHashOnlyWhileTheStatIsUnchanged) {
  CacheDir cache(root());
  auto published = PublishSample(cache, "m", kKey, "0123456789");
  ASSERT_TRUE(published.ok());
  const std::string& lib = published->library_path;
  // Hashed just now, within the 3 s tick guard: the lookup vouches for no stamp.
  auto fresh = cache.Lookup("m", kKey);
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->library_stamp.known);
  // It still says which file it hashed, for holding that file open at once (decision 138).
  FileInfo info = StatPath(lib);
  EXPECT_TRUE(fresh->checked_stamp.known);
  EXPECT_EQ(fresh->checked_stamp.inode, info.inode);
  EXPECT_EQ(fresh->checked_stamp.ctime_ns, info.ctime_ns);

  EntryFacts facts = FactsOf(published->manifest);
  facts.library_stamp = {true, info.size, info.mtime_ns, info.ctime_ns, info.inode};
  // With the stamp current the bytes are not read: even a digest that would not match passes,
  // which is how this test sees that no hash ran.
  facts.library_sha256 = Sha256Hex("not the library");
  auto stamped = cache.LookupKnown("m", kKey, facts);
  ASSERT_TRUE(stamped);
  EXPECT_TRUE(stamped->library_stamp == facts.library_stamp);
  EXPECT_TRUE(stamped->checked_stamp == facts.library_stamp);

  // Same size, one byte changed: the ctime moves, the hash runs and refuses the bytes.
  ASSERT_TRUE(WriteFile(lib, "0123456788").ok());
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.LookupKnown("m", kKey, facts, &miss));
  EXPECT_EQ(miss, LookupMiss::kDamaged);
  // And with the right digest but a stale stamp, the hash decides as before.
  facts.library_sha256 = Sha256Hex("0123456788");
  EXPECT_TRUE(cache.LookupKnown("m", kKey, facts));
}

TEST_F(CacheDirTest, TamperedLibraryWithTheSameNameIsReplacedOnRepublish) {
  CacheDir cache(root());
  auto published = PublishSample(cache, "m", kKey, "good");
  ASSERT_TRUE(published.ok());
  ASSERT_TRUE(WriteFile(published->library_path, "evil").ok());
  ASSERT_FALSE(cache.Lookup("m", kKey));
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "good").ok());
  auto entry = cache.Lookup("m", kKey);
  ASSERT_TRUE(entry);
  EXPECT_EQ(*ReadFile(entry->library_path), "good");
}

TEST_F(CacheDirTest, BadManifestIsDamaged) {
  CacheDir cache(root());
  auto published = PublishSample(cache, "m", kKey, "lib");
  ASSERT_TRUE(published.ok());
  std::string manifest_path = published->dir + "/manifest.json";
  std::string good = *ReadFile(manifest_path);
  LookupMiss miss;

  for (const std::string& bad : {std::string("{not json"), std::string("{}")}) {
    ASSERT_TRUE(WriteFile(manifest_path, bad).ok());
    miss = LookupMiss::kAbsent;
    EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
    EXPECT_EQ(miss, LookupMiss::kDamaged) << bad;
  }

  // A library file name that escapes the entry directory.
  Manifest escaped = published->manifest;
  escaped.library_file = "../" + escaped.library_file;
  ASSERT_TRUE(WriteFile(manifest_path, ManifestToJson(escaped)).ok());
  miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kDamaged);

  // Another key sharing the 24-hex prefix: the directory matches, the full key does not.
  std::string colliding = kKey.substr(0, 24) + std::string(40, '0');
  ASSERT_TRUE(WriteFile(manifest_path, good).ok());
  miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", colliding, &miss));
  EXPECT_EQ(miss, LookupMiss::kDamaged);
  EXPECT_TRUE(cache.Lookup("m", kKey));
}

TEST_F(CacheDirTest, PublishRemovesOnlyStaleTempFiles) {
  CacheDir cache(root());
  std::string dir = cache.EntryDir("m", kKey);
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFile(dir + "/.tmp-1-aaaa.so", "old").ok());
  ASSERT_TRUE(WriteFile(dir + "/manifest.json.tmp-1-bbbb", "old").ok());
  ASSERT_TRUE(WriteFile(dir + "/.tmp-2-cccc.so", "in progress").ok());
  Age(dir + "/.tmp-1-aaaa.so", 7200);
  Age(dir + "/manifest.json.tmp-1-bbbb", 7200);
  auto published = PublishSample(cache, "m", kKey, "lib");
  ASSERT_TRUE(published.ok());
  std::vector<std::string> names = ListDir(dir);
  EXPECT_EQ(names.size(), 3u);
  EXPECT_TRUE(StatPath(dir + "/.tmp-2-cccc.so").exists);
  EXPECT_FALSE(StatPath(dir + "/.tmp-1-aaaa.so").exists);
  EXPECT_FALSE(StatPath(dir + "/manifest.json.tmp-1-bbbb").exists);
}

TEST_F(CacheDirTest, PublishErrors) {
  CacheDir cache(root());
  auto missing = cache.Publish("m", kKey, scratch_ / "no-such.so", Manifest{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no-such.so"), std::string::npos);
  for (const std::string& name : {std::string("a/b"), std::string(".hidden"), std::string()}) {
    auto bad = cache.Publish(name, kKey, MakeLibrary("x"), Manifest{});
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_EQ(bad.error().kind, ErrorKind::kSpec);
  }
  EXPECT_FALSE(StatPath(root()).exists);  // nothing created for a failed publish
  // A file where the root should be.
  ASSERT_TRUE(WriteFile(root(), "not a directory").ok());
  CacheDir blocked_cache(root() + "/sub");
  auto blocked = PublishSample(blocked_cache, "m", kKey, "lib");
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.error().kind, ErrorKind::kCache);
  EXPECT_NE(blocked.error().message.find("JAXCC_CACHE_DIR"), std::string::npos);
}

TEST_F(CacheDirTest, MakeBuildDirIsPrivateAndUnique) {
  CacheDir cache(root());
  auto a = cache.MakeBuildDir("my-mod");
  auto b = cache.MakeBuildDir("my-mod");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(DirName(*a), root() + "/.build");
  EXPECT_EQ(
      BaseName(*a).rfind("my-mod-" + std::to_string(::getpid()) + "@" + ThisHostName() + "-", 0),
      0u);
  EXPECT_EQ(StatPath(*a).mode & 0777, 0700u);
  EXPECT_EQ(StatPath(root()).mode & 0777, 0700u);
  EXPECT_FALSE(cache.MakeBuildDir("../x").ok());
}

TEST_F(CacheDirTest, OrphanBuildDirsOfAnotherHostGoByAgeNotByPid) {
  CacheDir cache(root());
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  std::string build_root = root() + "/.build";
  std::string mine = build_root + "/m-" + std::to_string(dead) + "@" + ThisHostName() + "-00aa";
  std::string theirs = build_root + "/m-" + std::to_string(dead) + "@other_host-00bb";
  std::string old_theirs = build_root + "/m-" + std::to_string(dead) + "@other_host-00cc";
  for (const std::string& dir : {mine, theirs, old_theirs}) ASSERT_TRUE(MakeDirs(dir).ok());
  Age(old_theirs, 2 * 24 * 3600);
  EXPECT_EQ(cache.RemoveOrphans(std::nullopt, false), 2);
  EXPECT_FALSE(StatPath(mine).exists);        // this host, dead pid
  EXPECT_TRUE(StatPath(theirs).exists);       // its pid means nothing here
  EXPECT_FALSE(StatPath(old_theirs).exists);  // a day old: no build lives that long
  // Lock-file temporaries of a holder killed mid-acquire go after an hour; fresh ones stay.
  std::string locks = root() + "/.locks";
  ASSERT_TRUE(MakeDirs(locks).ok());
  ASSERT_TRUE(WriteFile(locks + "/m-0.lock.tmp-h-1-aa", "x").ok());
  ASSERT_TRUE(WriteFile(locks + "/m-0.lock.tmp-h-2-bb", "x").ok());
  ASSERT_TRUE(WriteFile(locks + "/m-0.lock", "x").ok());
  Age(locks + "/m-0.lock.tmp-h-1-aa", 7200);
  Age(locks + "/m-0.lock", 7200);
  cache.RemoveOrphans(std::nullopt, false);
  EXPECT_FALSE(StatPath(locks + "/m-0.lock.tmp-h-1-aa").exists);
  EXPECT_TRUE(StatPath(locks + "/m-0.lock.tmp-h-2-bb").exists);
  EXPECT_TRUE(StatPath(locks + "/m-0.lock").exists);  // a lock is judged by its holder, not here
}

TEST_F(CacheDirTest, ConcurrentProcessesPublishExactlyOnce) {
  // Each child does what the pipeline does on a miss: lock, look again, else build + publish.
  constexpr int kChildren = 4;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char byte;
      (void)!::read(go[0], &byte, 1);  // all start together when the pipe closes
      CacheDir cache(root());
      if (cache.Lookup("m", kKey)) ::_exit(0);
      auto lock = FileLock::Acquire(cache.LockPath("m", kKey), 30);
      if (!lock.ok()) ::_exit(2);
      if (cache.Lookup("m", kKey)) ::_exit(0);
      auto build_dir = cache.MakeBuildDir("m");
      if (!build_dir.ok()) ::_exit(3);
      std::string library = *build_dir + "/m.so";
      if (!WriteFile(library, "built by " + std::to_string(::getpid())).ok()) ::_exit(4);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a slow "compile"
      Manifest manifest;
      if (!cache.Publish("m", kKey, library, manifest).ok()) ::_exit(5);
      (void)RemoveTree(*build_dir);
      ::_exit(10);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  int published = 0, hits = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    int code = WEXITSTATUS(status);
    ASSERT_TRUE(code == 0 || code == 10) << "child failed with " << code;
    (code == 10 ? published : hits)++;
  }
  EXPECT_EQ(published, 1);
  EXPECT_EQ(hits, kChildren - 1);
  CacheDir cache(root());
  EXPECT_TRUE(cache.Lookup("m", kKey));
  EXPECT_TRUE(ListDir(root() + "/.build").empty());
}

}  // namespace
}  // namespace jaxcc::cache

// The cache directory's dependency rules: a tracked header is stale when its bytes changed,
// whatever its stat says (ctime and inode stamps behind the hash, decision 146), and when a file
// appears where the compiler would have found it first (a shadow path).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "cache/cache_dir.h"
#include "cache/cache_dir_test_fixture.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

TEST_F(CacheDirTest, ChangedOrMissingDependencyIsStale) {
  CacheDir cache(root());
  Dependency dep = MakeDependency("user.h", "#define N 1\n");
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "lib", {dep}).ok());
  ASSERT_TRUE(cache.Lookup("m", kKey));

  ASSERT_TRUE(WriteFile(dep.path, "#define N 2\n").ok());  // same size, new content
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kStaleDependency);

  ASSERT_EQ(::unlink(dep.path.c_str()), 0);
  miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kStaleDependency);
}

TEST_F(CacheDirTest, TouchedDependencyWithSameContentIsStillAHit) {
  CacheDir cache(root());
  Dependency dep = MakeDependency("user.h", "#define N 1\n");
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "lib", {dep}).ok());
  FileInfo touched = Age(dep.path, 5);
  ASSERT_NE(touched.mtime_ns, dep.mtime_ns);
  EXPECT_TRUE(cache.Lookup("m", kKey));  // re-hashed, same bytes
}

TEST_F(CacheDirTest, DependencyIsReadOnlyWhenItsStatChanged) {
  // The recorded digest is deliberately wrong: while the stat matches it is never checked
  // (no read on the warm path); once the mtime moves, the bytes are hashed and disagree.
  CacheDir cache(root());
  Dependency dep = MakeDependency("user.h", "#define N 1\n");
  dep.sha256 = Sha256Hex("something else");
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "lib", {dep}).ok());
  EXPECT_TRUE(cache.Lookup("m", kKey));
  Age(dep.path, 5);
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kStaleDependency);
}

// Issue 37 bug 1: `cp -p`, `tar x`, `rsync -t` and `touch -r` put the old mtime back on a
// same-size edit; only ctime (and the inode, for a rename over it) shows the change.
TEST_F(CacheDirTest, HeaderEditKeepingSizeAndMtimeIsStale) {
  CacheDir cache(root());
  Dependency dep = MakeDependency("user.h", "#define N 1\n");
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "lib", {dep}).ok());
  ASSERT_TRUE(cache.Lookup("m", kKey));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a new ctime tick
  ASSERT_TRUE(WriteFile(dep.path, "#define N 2\n").ok());
  struct timespec times[2] = {{0, UTIME_OMIT},
                              {dep.mtime_ns / 1000000000, dep.mtime_ns % 1000000000}};
  ASSERT_EQ(::utimensat(AT_FDCWD, dep.path.c_str(), times, 0), 0);
  FileInfo now = StatPath(dep.path);
  ASSERT_EQ(now.size, dep.size);
  ASSERT_EQ(now.mtime_ns, dep.mtime_ns);
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kStaleDependency);
}

TEST_F(CacheDirTest, AStampThatMovedIsHashedAndAYoungOneIsNotKept) {
  CacheDir cache(root());
  Dependency dep = MakeDependency("user.h", "#define N 1\n");
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "lib", {dep}).ok());
  auto hit = cache.Lookup("m", kKey);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->checked_dependencies, std::vector<Dependency>{dep});  // stats only
  ASSERT_TRUE(WriteFile(dep.path, "#define N 1\n").ok());              // same bytes, new ctime
  hit = cache.Lookup("m", kKey);
  ASSERT_TRUE(hit);  // hashed, the same
  ASSERT_EQ(hit->checked_dependencies.size(), 1u);
  // Written just now: the new stamp could still be kept by an edit within the same tick.
  EXPECT_EQ(hit->checked_dependencies[0].ctime_ns, 0);
  EXPECT_EQ(hit->checked_dependencies[0].sha256, dep.sha256);
}

TEST_F(CacheDirTest, AStampWithoutCtimeIsNeverTrusted) {
  // A manifest written before ctime and inode were kept: the digest (wrong here on purpose) is
  // checked on every lookup.
  CacheDir cache(root());
  Dependency dep = MakeDependency("user.h", "#define N 1\n");
  dep.ctime_ns = 0;
  dep.sha256 = Sha256Hex("something else");
  ASSERT_TRUE(PublishSample(cache, "m", kKey, "lib", {dep}).ok());
  EXPECT_FALSE(cache.Lookup("m", kKey));
}

// Issue 37 bug 2: a header created earlier on the include search than the one the build read.
TEST_F(CacheDirTest, AShadowPathThatAppearsMakesTheEntryStale) {
  CacheDir cache(root());
  std::string shadow = scratch_ / "vendored/user.h";
  Manifest manifest;
  manifest.function_names = {"add"};
  manifest.shadows = {shadow};
  ASSERT_TRUE(cache.Publish("m", kKey, MakeLibrary("lib"), manifest).ok());
  ASSERT_TRUE(cache.Lookup("m", kKey));
  ASSERT_TRUE(MakeDirs(scratch_ / "vendored").ok());
  ASSERT_TRUE(WriteFile(shadow, "#define N 3\n").ok());
  LookupMiss miss = LookupMiss::kAbsent;
  EXPECT_FALSE(cache.Lookup("m", kKey, &miss));
  EXPECT_EQ(miss, LookupMiss::kStaleDependency);
}

}  // namespace
}  // namespace jaxcc::cache

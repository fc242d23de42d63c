#include "cache/object_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "cache/test_scratch_dir.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

using testing_util::ScratchDir;

std::string Hex(char c) { return std::string(64, c); }

class ObjectCacheTest : public testing::Test {
 protected:
  std::string WriteObject(const std::string& name, const std::string& contents) {
    std::string path = scratch_ / name;
    EXPECT_TRUE(WriteFile(path, contents).ok());
    return path;
  }
  bool Has(const ObjectCache& cache, const std::string& key, const std::string& destination) {
    return cache.Fetch(key, destination).has_value();
  }
  ScratchDir scratch_;
};

TEST_F(ObjectCacheTest, KeyChangesWithEveryInput) {
  std::string base = ObjectCache::Key("src", {"g++", "-O1"}, "g++ 12", "d1");
  EXPECT_EQ(base, ObjectCache::Key("src", {"g++", "-O1"}, "g++ 12", "d1"));
  EXPECT_NE(base, ObjectCache::Key("src2", {"g++", "-O1"}, "g++ 12", "d1"));
  EXPECT_NE(base, ObjectCache::Key("src", {"g++", "-O2"}, "g++ 12", "d1"));
  EXPECT_NE(base, ObjectCache::Key("src", {"g++", "-O1"}, "g++ 13", "d1"));
  EXPECT_NE(base, ObjectCache::Key("src", {"g++", "-O1"}, "g++ 12", "d2"));
  // Word boundaries count: {"a b"} is not {"a", "b"}.
  EXPECT_NE(ObjectCache::Key("s", {"a b"}, "v", "d"), ObjectCache::Key("s", {"a", "b"}, "v", "d"));
}

TEST_F(ObjectCacheTest, StoredObjectsComeBackByteForByte) {
  ObjectCache cache(scratch_.path());
  std::string key = ObjectCache::Key("src", {"g++"}, "v", "d");
  EXPECT_FALSE(Has(cache, key, scratch_ / "out.o"));
  cache.Store(key, WriteObject("built.o", std::string("\x7f"
                                                      "ELF object",
                                                      11)));
  ASSERT_TRUE(Has(cache, key, scratch_ / "out.o"));
  EXPECT_EQ(*ReadFile(scratch_ / "out.o"), std::string("\x7f"
                                                       "ELF object",
                                                       11));
  EXPECT_EQ(StatPath(cache.dir()).mode & 0777, 0700u);
}

TEST_F(ObjectCacheTest, ADamagedObjectIsAMissAndIsRemoved) {
  ObjectCache cache(scratch_.path());
  cache.Store("k1", WriteObject("built.o", "object bytes"));
  ASSERT_TRUE(WriteFile(JoinPath(cache.dir(), "k1.o"), "object byteZ").ok());
  EXPECT_FALSE(Has(cache, "k1", scratch_ / "out.o"));
  EXPECT_FALSE(StatPath(JoinPath(cache.dir(), "k1.o")).exists);
  EXPECT_FALSE(StatPath(scratch_ / "out.o").exists);
  // Nor is an object whose dependency list was altered: the digest covers both.
  cache.Store("k3", WriteObject("built3.o", "bytes"), {{WriteObject("h.h", "int x;"), Hex('a')}});
  std::string deps = JoinPath(cache.dir(), "k3.deps");
  ASSERT_TRUE(WriteFile(deps, "").ok());
  EXPECT_FALSE(Has(cache, "k3", scratch_ / "out.o"));
  EXPECT_FALSE(StatPath(JoinPath(cache.dir(), "k3.o")).exists);
  // Without its digest an object never verifies.
  cache.Store("k2", WriteObject("built2.o", "more bytes"));
  ASSERT_EQ(::unlink(JoinPath(cache.dir(), "k2.sha256").c_str()), 0);
  EXPECT_FALSE(Has(cache, "k2", scratch_ / "out.o"));
}

// Stores are not fsynced (Durability::kVerifiedOnRead): after a crash any of the three files can
// be empty or hold zeros where its data never reached the disk. Each such state is a miss.
TEST_F(ObjectCacheTest, WhatALostUnsyncedWriteLeavesIsAMissNeverAWrongObject) {
  ObjectCache cache(scratch_.path());
  for (const char* suffix : {".o", ".sha256", ".deps"}) {
    for (bool zeros : {false, true}) {
      const std::string header = WriteObject("h.h", "int x;");
      cache.Store("k", WriteObject("built.o", "object bytes"), {{header, *Sha256FileHex(header)}});
      ASSERT_TRUE(Has(cache, "k", scratch_ / "out.o"));  // whole, it verifies
      ASSERT_EQ(::unlink((scratch_ / "out.o").c_str()), 0);
      const std::string file = JoinPath(cache.dir(), std::string("k") + suffix);
      const auto size = StatPath(file).size;
      ASSERT_TRUE(WriteFile(file, zeros ? std::string(size, '\0') : "").ok());
      EXPECT_FALSE(Has(cache, "k", scratch_ / "out.o")) << suffix << (zeros ? " zeros" : " empty");
      EXPECT_FALSE(StatPath(scratch_ / "out.o").exists);
    }
  }
}

TEST_F(ObjectCacheTest, AnEditedHeaderMakesAMissAndTheStoredListComesBack) {
  ObjectCache cache(scratch_.path());
  std::string header = WriteObject("user.h", "#define N 1\n");
  std::string digest = *Sha256FileHex(header);
  cache.Store("k", WriteObject("built.o", "object"), {{header, digest}});
  auto deps = cache.Fetch("k", scratch_ / "out.o");
  ASSERT_TRUE(deps.has_value());
  ASSERT_EQ(deps->size(), 1u);
  EXPECT_EQ((*deps)[0].path, header);
  EXPECT_EQ((*deps)[0].sha256, digest);
  ASSERT_TRUE(WriteFile(header, "#define N 2\n").ok());
  EXPECT_FALSE(Has(cache, "k", scratch_ / "out2.o"));
  EXPECT_FALSE(StatPath(scratch_ / "out2.o").exists);
  ASSERT_TRUE(::unlink(header.c_str()) == 0);
  EXPECT_FALSE(Has(cache, "k", scratch_ / "out2.o"));
  // Stale is not damaged: the object stays until a new build replaces it.
  EXPECT_TRUE(StatPath(JoinPath(cache.dir(), "k.o")).exists);
}

// Issue 37 bug 2 in the object cache: a header created where the compiler looks first.
TEST_F(ObjectCacheTest, AFileWhereAShadowingHeaderWouldBeMakesAMiss) {
  ObjectCache cache(scratch_.path());
  std::string header = WriteObject("user.h", "#define N 1\n");
  std::string shadow = scratch_ / "vendor_user.h";
  cache.Store("k", WriteObject("built.o", "object"),
              {{header, *Sha256FileHex(header)}, {shadow, kAbsentFile}});
  EXPECT_TRUE(Has(cache, "k", scratch_ / "out.o"));
  ASSERT_TRUE(WriteFile(shadow, "#define N 2\n").ok());
  EXPECT_FALSE(Has(cache, "k", scratch_ / "out2.o"));
  ASSERT_EQ(::unlink(shadow.c_str()), 0);
  EXPECT_TRUE(Has(cache, "k", scratch_ / "out3.o"));
}

TEST_F(ObjectCacheTest, KeepsWithinItsByteBudget) {
  ObjectCache cache(scratch_.path(), /*max_objects=*/100, /*max_bytes=*/250);
  std::string object = WriteObject("built.o", std::string(100, 'x'));
  struct timespec times[2] = {{1000, 0}, {1000, 0}};
  cache.Store("a", object);
  ASSERT_EQ(::utimensat(AT_FDCWD, JoinPath(cache.dir(), "a.o").c_str(), times, 0), 0);
  cache.Store("b", object);
  cache.Store("c", object);  // 300 bytes: the oldest goes
  EXPECT_FALSE(Has(cache, "a", scratch_ / "out.o"));
  EXPECT_FALSE(StatPath(JoinPath(cache.dir(), "a.deps")).exists);
  EXPECT_TRUE(Has(cache, "b", scratch_ / "out.o"));
  EXPECT_TRUE(Has(cache, "c", scratch_ / "out.o"));
}

TEST_F(ObjectCacheTest, EmptyObjectsAreNotStored) {
  ObjectCache cache(scratch_.path());
  cache.Store("k", WriteObject("empty.o", ""));
  EXPECT_FALSE(Has(cache, "k", scratch_ / "out.o"));
}

TEST_F(ObjectCacheTest, KeepsOnlyTheMostRecentlyUsed) {
  ObjectCache cache(scratch_.path(), /*max_objects=*/2);
  std::string object = WriteObject("built.o", "bytes");
  cache.Store("old", object);
  // Age "old" so that eviction order does not depend on timestamp granularity.
  struct timespec times[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, JoinPath(cache.dir(), "old.o").c_str(), times, 0), 0);
  cache.Store("middle", object);
  ASSERT_EQ(::utimensat(AT_FDCWD, JoinPath(cache.dir(), "middle.o").c_str(), times, 0), 0);
  ASSERT_TRUE(Has(cache, "old", scratch_ / "out.o"));  // used now: the newest of the two
  cache.Store("new", object);
  EXPECT_TRUE(Has(cache, "old", scratch_ / "out.o"));
  EXPECT_TRUE(Has(cache, "new", scratch_ / "out.o"));
  EXPECT_FALSE(Has(cache, "middle", scratch_ / "out.o"));
}

}  // namespace
}  // namespace jaxcc::cache

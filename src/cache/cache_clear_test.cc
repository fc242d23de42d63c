#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/cache_dir.h"
#include "cache/file_lock.h"
#include "cache/object_cache.h"
#include "cache/test_scratch_dir.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

using testing_util::ScratchDir;

class CacheClearTest : public testing::Test {
 protected:
  CacheClearTest() : cache_(scratch_ / "cache") {}

  void Publish(const std::string& name, const std::string& key) {
    std::string library = scratch_ / "built.so";
    ASSERT_TRUE(WriteFile(library, name + key).ok());
    ASSERT_TRUE(cache_.Publish(name, key, library, Manifest{}).ok());
  }

  std::string BuildDir(const std::string& name, pid_t pid) {
    std::string dir = cache_.root() + "/.build/" + name + "-" + std::to_string(pid) + "-0a1b2c3d";
    EXPECT_TRUE(MakeDirs(dir + "/obj").ok());
    EXPECT_TRUE(WriteFile(dir + "/obj/x.o", "obj").ok());
    return dir;
  }

  // A pid that certainly belonged to a process that has exited (and been reaped).
  static pid_t DeadPid() {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
  }

  ScratchDir scratch_;
  CacheDir cache_;
};

const std::string kKey1 = Sha256Hex("1");
const std::string kKey2 = Sha256Hex("2");
const std::string kKey3 = Sha256Hex("3");

// Issue 37 bug 4: clearing a module left the objects its library linked, and the next build
// linked them again.
TEST_F(CacheClearTest, ClearingAModuleRemovesTheObjectsItsEntryLinked) {
  ObjectCache objects(cache_.root());
  const std::string object = scratch_ / "unit.o";
  ASSERT_TRUE(WriteFile(object, "object bytes").ok());
  const std::string mine = Sha256Hex("unit of add"), theirs = Sha256Hex("unit of other");
  objects.Store(mine, object);
  objects.Store(theirs, object);
  std::string library = scratch_ / "built.so";
  ASSERT_TRUE(WriteFile(library, "add").ok());
  Manifest manifest;
  // A list entry that is not a key is data, never a path to delete.
  manifest.objects = {mine, "../../outside"};
  ASSERT_TRUE(WriteFile(scratch_ / "outside", "keep").ok());
  ASSERT_TRUE(cache_.Publish("add", kKey1, library, manifest).ok());
  auto removed = cache_.Clear("add");
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_EQ(*removed, 1);
  EXPECT_FALSE(objects.Fetch(mine, scratch_ / "fetched.o"));
  EXPECT_TRUE(objects.Fetch(theirs, scratch_ / "fetched.o"));
  EXPECT_TRUE(StatPath(scratch_ / "outside").exists);
}

TEST_F(CacheClearTest, ClearsOnlyTheNamedModule) {
  Publish("add", kKey1);
  Publish("add", kKey2);
  Publish("add_fast", kKey1);
  Publish("add-x", kKey1);
  auto removed = cache_.Clear("add");
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_EQ(*removed, 2);
  EXPECT_FALSE(cache_.Lookup("add", kKey1));
  EXPECT_FALSE(cache_.Lookup("add", kKey2));
  EXPECT_TRUE(cache_.Lookup("add_fast", kKey1));
  EXPECT_TRUE(cache_.Lookup("add-x", kKey1));
  // Nothing is left behind in .build by the removal itself.
  EXPECT_TRUE(ListDir(cache_.root() + "/.build").empty());
}

TEST_F(CacheClearTest, SkipsAnEntryWhoseLockIsHeld) {
  Publish("add", kKey1);
  Publish("add", kKey2);
  Publish("mul", kKey3);
  auto lock = FileLock::Acquire(cache_.LockPath("add", kKey1), 1);
  ASSERT_TRUE(lock.ok());
  auto removed = cache_.Clear(std::nullopt);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 2);
  EXPECT_TRUE(cache_.Lookup("add", kKey1));
  EXPECT_FALSE(cache_.Lookup("add", kKey2));
  EXPECT_FALSE(cache_.Lookup("mul", kKey3));

  lock->Release();
  removed = cache_.Clear(std::nullopt);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 1);
  EXPECT_FALSE(cache_.Lookup("add", kKey1));
}

TEST_F(CacheClearTest, LeavesHiddenAndUnrelatedNamesAlone) {
  Publish("add", kKey1);
  ASSERT_TRUE(MakeDirs(cache_.root() + "/.memo").ok());
  ASSERT_TRUE(MakeDirs(cache_.root() + "/notes").ok());
  ASSERT_TRUE(MakeDirs(cache_.root() + "/add-" + kKey1.substr(0, 23)).ok());  // too short
  ASSERT_TRUE(WriteFile(cache_.root() + "/add-" + kKey2.substr(0, 24), "a file").ok());
  auto removed = cache_.Clear(std::nullopt);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 1);
  EXPECT_EQ(ListDir(cache_.root()),
            (std::vector<std::string>{".build", ".locks", ".memo", "add-" + kKey1.substr(0, 23),
                                      "add-" + kKey2.substr(0, 24), "notes"}));
}

TEST_F(CacheClearTest, ClearingEverythingRemovesSharedWrapperObjectsNamingAModuleDoesNot) {
  Publish("add", kKey1);
  ASSERT_TRUE(MakeDirs(cache_.root() + "/.objects").ok());
  ASSERT_TRUE(WriteFile(cache_.root() + "/.objects/k.o", "object").ok());
  // The warm index's records belong to no module either (their names are request fingerprints).
  ASSERT_TRUE(MakeDirs(cache_.root() + "/.index").ok());
  ASSERT_TRUE(WriteFile(cache_.root() + "/.index/" + std::string(64, 'a'), "record").ok());
  ASSERT_TRUE(cache_.Clear(std::string("add")).ok());
  EXPECT_TRUE(StatPath(cache_.root() + "/.objects/k.o").exists);
  EXPECT_TRUE(StatPath(cache_.root() + "/.index/" + std::string(64, 'a')).exists);
  ASSERT_TRUE(cache_.Clear(std::nullopt).ok());
  EXPECT_FALSE(StatPath(cache_.root() + "/.objects").exists);
  EXPECT_FALSE(StatPath(cache_.root() + "/.index").exists);
}

TEST_F(CacheClearTest, RemovesDeadBuildDirsAndKeepsLiveOnes) {
  std::string dead = BuildDir("add", DeadPid());
  std::string live = BuildDir("add", ::getppid());
  std::string mine = BuildDir("add", ::getpid());
  std::string other_module = BuildDir("mul", DeadPid());
  std::string unparsable = cache_.root() + "/.build/garbage";
  ASSERT_TRUE(MakeDirs(unparsable).ok());

  auto removed = cache_.Clear("add");
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 0);  // build directories are not entries
  EXPECT_FALSE(StatPath(dead).exists);
  EXPECT_TRUE(StatPath(live).exists);
  EXPECT_TRUE(StatPath(mine).exists);
  EXPECT_TRUE(StatPath(other_module).exists);  // belongs to another module
  EXPECT_TRUE(StatPath(unparsable).exists);

  ASSERT_TRUE(cache_.Clear(std::nullopt).ok());
  EXPECT_FALSE(StatPath(other_module).exists);
  EXPECT_TRUE(StatPath(live).exists);
}

TEST_F(CacheClearTest, RemovesKeptFailedBuildsUnlessLocked) {
  std::string failed = cache_.root() + "/.failed/add-" + kKey1.substr(0, 24);
  std::string busy = cache_.root() + "/.failed/add-" + kKey2.substr(0, 24);
  ASSERT_TRUE(MakeDirs(failed).ok());
  ASSERT_TRUE(MakeDirs(busy).ok());
  auto lock = FileLock::Acquire(cache_.LockPath("add", kKey2), 1);
  ASSERT_TRUE(lock.ok());
  ASSERT_TRUE(cache_.Clear("add").ok());
  EXPECT_FALSE(StatPath(failed).exists);
  EXPECT_TRUE(StatPath(busy).exists);
}

TEST_F(CacheClearTest, RejectsNamesThatEscape) {
  for (const std::string& name : {std::string("../x"), std::string(".hidden"), std::string("")}) {
    auto removed = cache_.Clear(name);
    ASSERT_FALSE(removed.ok()) << name;
    // The one name rule (entry_names.h): a bad name is the caller's input, not a cache fault.
    EXPECT_EQ(removed.error().kind, ErrorKind::kSpec);
    EXPECT_NE(removed.error().message.find("invalid module name"), std::string::npos);
  }
}

TEST_F(CacheClearTest, MissingRootClearsNothing) {
  auto removed = cache_.Clear(std::nullopt);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 0);
  EXPECT_FALSE(StatPath(cache_.root()).exists);
}

}  // namespace
}  // namespace jaxcc::cache

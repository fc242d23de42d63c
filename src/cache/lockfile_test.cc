// FileLock's lockfile mode (caches shared by several hosts) and the lock mode setting. Other
// hosts are simulated with $JAXCC_TEST_HOST / $JAXCC_TEST_BOOT_ID and hand-written lock files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cache/file_lock.h"
#include "cache/lock_mode.h"
#include "cache/test_scratch_dir.h"
#include "util/host_identity.h"

namespace jaxcc::cache {
namespace {

using testing_util::Age;
using testing_util::ScratchDir;

constexpr LockMode kLockfile = LockMode::kLockfile;

// A pid that no process has now: a child that has exited and been reaped.
pid_t DeadPid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::string HolderText(const std::string& host, const std::string& boot, long pid) {
  return "jaxcc-lock 1\nhost=" + host + "\nboot=" + boot + "\npid=" + std::to_string(pid) +
         "\nnonce=0123\n";
}

bool HeldElsewhere(const std::string& path) {
  bool held = false;
  std::thread([&] {
    auto other = FileLock::TryAcquire(path, kLockfile);
    held = other.ok() && other->held();
  }).join();
  return !held;
}

class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~EnvVar() { had_ ? (void)::setenv(name_, old_.c_str(), 1) : (void)::unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(Lockfile, HolderNamesHostBootAndPid) {
  ScratchDir scratch;
  std::string path = scratch / "locks/x.lock";
  auto lock = FileLock::Acquire(path, 1, kLockfile);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_TRUE(lock->held());
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  HostIdentity me = ThisHost();
  EXPECT_NE(text->find("host=" + me.host + "\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("boot=" + me.boot_id + "\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("pid=" + std::to_string(::getpid()) + "\n"), std::string::npos);
  EXPECT_EQ(StatPath(scratch / "locks").mode & 0777, 0700u);
  lock->Release();
  EXPECT_FALSE(StatPath(path).exists);  // released: the file is the lock, so it goes
  // No temporary files stay behind.
  EXPECT_TRUE(ListDir(scratch / "locks").empty());
}

TEST(Lockfile, ExcludesAnotherThreadUntilReleased) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  auto lock = FileLock::Acquire(path, 1, kLockfile);
  ASSERT_TRUE(lock.ok());
  EXPECT_TRUE(HeldElsewhere(path));
  lock->Release();
  EXPECT_FALSE(HeldElsewhere(path));
}

TEST(Lockfile, ThreadsTakeTurns) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto lock = FileLock::Acquire(path, 10, kLockfile);
        ASSERT_TRUE(lock.ok()) << lock.error().message;
        if (inside.fetch_add(1) != 0) overlap = true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        inside.fetch_sub(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(overlap);
}

TEST(Lockfile, DeadPidOnThisHostIsBroken) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  HostIdentity me = ThisHost();
  ASSERT_TRUE(WriteFile(path, HolderText(me.host, me.boot_id, DeadPid())).ok());
  auto start = std::chrono::steady_clock::now();
  auto lock = FileLock::Acquire(path, 30, kLockfile);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(ReadFile(path)->find("pid=" + std::to_string(::getpid())), std::string::npos);
}

TEST(Lockfile, LivePidOnThisHostIsNotBroken) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  HostIdentity me = ThisHost();
  ASSERT_TRUE(WriteFile(path, HolderText(me.host, me.boot_id, ::getppid())).ok());
  auto lock = FileLock::Acquire(path, 0.3, kLockfile);
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().kind, ErrorKind::kCache);
  EXPECT_NE(lock.error().message.find("(this host)"), std::string::npos) << lock.error().message;
}

TEST(Lockfile, LockFromBeforeThisHostsBootIsBroken) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  // The live parent's pid, but a different boot: that pid belonged to another life of the host.
  ASSERT_TRUE(WriteFile(path, HolderText(ThisHostName(), "old-boot", ::getppid())).ok());
  auto lock = FileLock::TryAcquire(path, kLockfile);
  ASSERT_TRUE(lock.ok());
  EXPECT_TRUE(lock->held());
}

TEST(Lockfile, AnotherHostsLockIsNotBrokenByPidButByAge) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  // A pid that is dead here says nothing about the host that wrote it.
  ASSERT_TRUE(WriteFile(path, HolderText("other_host", "b", DeadPid())).ok());
  EXPECT_TRUE(HeldElsewhere(path));  // TryAcquire: another host's lock is stale after 660 s
  // Acquire breaks another host's lock once it is older than the wait itself (in the pipeline:
  // the build timeout plus a minute), so date it ahead to outlive this short wait.
  Age(path, -60);
  auto busy = FileLock::Acquire(path, 0.3, kLockfile);
  ASSERT_FALSE(busy.ok());
  EXPECT_NE(busy.error().message.find("on host other_host (another host)"), std::string::npos)
      << busy.error().message;
  EXPECT_TRUE(HeldElsewhere(path));
  // Older than the waiter's timeout (build timeout plus a minute in the pipeline): broken.
  Age(path, 7200);
  auto lock = FileLock::Acquire(path, 5, kLockfile);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_NE(ReadFile(path)->find("host=" + ThisHostName()), std::string::npos);
}

TEST(Lockfile, SimulatedSecondHostSeesTheLockAsForeign) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  auto lock = FileLock::Acquire(path, 1, kLockfile);
  ASSERT_TRUE(lock.ok());
  Age(path, -60);  // see above: outlive the short wait below
  std::string message;
  {
    EnvVar host("JAXCC_TEST_HOST", "node-b");
    EXPECT_TRUE(HeldElsewhere(path));
    auto other = FileLock::Acquire(path, 0.2, kLockfile);
    ASSERT_FALSE(other.ok());
    message = other.error().message;
  }
  EXPECT_NE(message.find("(another host)"), std::string::npos) << message;
}

TEST(Lockfile, ReleaseLeavesALockThatIsNoLongerOurs) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  auto lock = FileLock::Acquire(path, 1, kLockfile);
  ASSERT_TRUE(lock.ok());
  std::string theirs = HolderText("other_host", "b", 7);
  ASSERT_TRUE(WriteFileAtomic(path, theirs).ok());  // e.g. broken as stale and taken again
  lock->Release();
  EXPECT_EQ(*ReadFile(path), theirs);
}

TEST(LockMode, SettingAndErrors) {
  ScratchDir scratch;
  {
    EnvVar mode("JAXCC_CACHE_LOCK", "lockfile");
    EXPECT_EQ(*ResolveLockMode(scratch.path()), LockMode::kLockfile);
    EXPECT_EQ(*DescribeLockMode(scratch.path()), "lockfile ($JAXCC_CACHE_LOCK)");
  }
  {
    EnvVar mode("JAXCC_CACHE_LOCK", "flock");
    EXPECT_EQ(*ResolveLockMode(scratch.path()), LockMode::kFlock);
  }
  {
    EnvVar mode("JAXCC_CACHE_LOCK", "fcntl");
    auto bad = ResolveLockMode(scratch.path());
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().kind, ErrorKind::kSpec);
    EXPECT_NE(bad.error().message.find("'fcntl'"), std::string::npos);
    auto lock = FileLock::Acquire(scratch / "x.lock", 1);
    ASSERT_FALSE(lock.ok());
    EXPECT_EQ(lock.error().kind, ErrorKind::kSpec);
  }
  {
    EnvVar mode("JAXCC_CACHE_LOCK", "auto");
    std::string kind = FilesystemKind(scratch.path());
    auto expected = IsSharedFilesystem(kind) ? LockMode::kLockfile : LockMode::kFlock;
    EXPECT_EQ(*ResolveLockMode(scratch.path()), expected);
    EXPECT_NE(DescribeLockMode(scratch.path())->find("(auto: "), std::string::npos);
  }
  // A path that does not exist yet is judged by its nearest existing parent.
  EXPECT_EQ(FilesystemKind(scratch / "not/yet"), FilesystemKind(scratch.path()));
  EXPECT_TRUE(IsSharedFilesystem("nfs"));
  EXPECT_FALSE(IsSharedFilesystem("local"));
}

TEST(HostIdentity, TestOverridesAndSafeNames) {
  EXPECT_EQ(SafeHostName("a-b@c.d"), "a_b_c.d");
  EXPECT_EQ(SafeHostName(""), "unknown");
  EXPECT_EQ(SafeHostName(std::string(100, 'x')).size(), 64u);
  EnvVar host("JAXCC_TEST_HOST", "node-b");
  EnvVar boot("JAXCC_TEST_BOOT_ID", "boot-2");
  HostIdentity id = ThisHost();
  EXPECT_EQ(id.host, "node_b");
  EXPECT_EQ(id.boot_id, "boot-2");
  EXPECT_EQ(UniqueTempTag().rfind("node_b-" + std::to_string(::getpid()) + "-", 0), 0u);
}

}  // namespace
}  // namespace jaxcc::cache

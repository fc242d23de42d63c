#include "cache/file_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cache/test_scratch_dir.h"

namespace jaxcc::cache {
namespace {

using testing_util::ScratchDir;

TEST(FileLock, CreatesDirectoryAndFile) {
  ScratchDir scratch;
  std::string path = scratch / "locks/deep/x.lock";
  auto lock = FileLock::Acquire(path, 1);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_TRUE(lock->held());
  EXPECT_TRUE(StatPath(path).exists);
  EXPECT_EQ(StatPath(scratch / "locks").mode & 0777, 0700u);
}

TEST(FileLock, ExcludesAnotherThreadUntilReleased) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  auto lock = FileLock::Acquire(path, 1);
  ASSERT_TRUE(lock.ok());

  bool held_in_thread = true;
  std::thread([&] {
    auto other = FileLock::TryAcquire(path);
    held_in_thread = other.ok() && other->held();
  }).join();
  EXPECT_FALSE(held_in_thread);

  lock->Release();
  EXPECT_FALSE(lock->held());
  std::thread([&] {
    auto other = FileLock::TryAcquire(path);
    held_in_thread = other.ok() && other->held();
  }).join();
  EXPECT_TRUE(held_in_thread);
}

TEST(FileLock, ThreadsTakeTurns) {
  // Many threads incrementing a non-atomic counter under the lock must not interleave.
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto lock = FileLock::Acquire(path, 10);
        if (!lock.ok()) {
          overlap = true;
          return;
        }
        if (inside.fetch_add(1) != 0) overlap = true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        inside.fetch_sub(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(overlap);
}

TEST(FileLock, MovedLockStaysHeldUntilTheNewOwnerReleases) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  auto first = FileLock::Acquire(path, 1);
  ASSERT_TRUE(first.ok());
  FileLock moved = std::move(*first);
  EXPECT_FALSE(first->held());
  EXPECT_TRUE(moved.held());
  EXPECT_FALSE(FileLock::TryAcquire(path)->held());
  moved = FileLock::TryAcquire(scratch / "other.lock").value();  // releases the first lock
  EXPECT_TRUE(FileLock::TryAcquire(path)->held());
}

TEST(FileLock, AcquireTimesOutWithAnActionableMessage) {
  ScratchDir scratch;
  std::string path = scratch / "busy.lock";
  auto holder = FileLock::Acquire(path, 1);
  ASSERT_TRUE(holder.ok());
  auto start = std::chrono::steady_clock::now();
  auto waiter = FileLock::Acquire(path, 0.3);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(waiter.ok());
  EXPECT_GE(waited, 0.29);
  EXPECT_LT(waited, 5.0);
  const Error& error = waiter.error();
  EXPECT_EQ(error.kind, ErrorKind::kCache);
  EXPECT_NE(error.message.find(path), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("still building"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("another thread of this process"), std::string::npos)
      << error.message;
  EXPECT_NE(error.message.find("Wait for it to finish"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("different cache directory"), std::string::npos) << error.message;
}

TEST(FileLock, SigkilledHolderLeavesNoStaleLock) {
  ScratchDir scratch;
  std::string path = scratch / "x.lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = FileLock::Acquire(path, 5);
    char byte = lock.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &byte, 1);
    while (true) ::pause();
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'y');
  auto busy = FileLock::TryAcquire(path);
  ASSERT_TRUE(busy.ok());
  EXPECT_FALSE(busy->held());
  auto timeout = FileLock::Acquire(path, 0.1);
  ASSERT_FALSE(timeout.ok());
  EXPECT_NE(timeout.error().message.find("pid " + std::to_string(child)), std::string::npos)
      << timeout.error().message;

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  ::close(ready[0]);
  ::close(ready[1]);

  auto start = std::chrono::steady_clock::now();
  auto lock = FileLock::Acquire(path, 5);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.5);
  EXPECT_TRUE(StatPath(path).exists);  // the file stays, harmlessly
}

TEST(FileLock, UnusableDirectoryIsACacheError) {
  // A regular file where the lock directory should be (permissions would not stop root).
  ScratchDir scratch;
  ASSERT_TRUE(WriteFile(scratch / "locks", "not a directory").ok());
  for (bool blocking : {false, true}) {
    auto lock = blocking ? FileLock::Acquire(scratch / "locks/x.lock", 1)
                         : FileLock::TryAcquire(scratch / "locks/x.lock");
    ASSERT_FALSE(lock.ok());
    EXPECT_EQ(lock.error().kind, ErrorKind::kCache);
    EXPECT_NE(lock.error().message.find("locks"), std::string::npos) << lock.error().message;
    EXPECT_NE(lock.error().message.find("JAXCC_CACHE_DIR"), std::string::npos);
  }
}

}  // namespace
}  // namespace jaxcc::cache

// flock(2)-based entry locks. Each Acquire opens the lock file anew, so every holder has its own
// open file description: that is what makes two threads of one process exclude each other too.
#include "cache/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "util/fs.h"

namespace jaxcc::cache {
namespace {

Result<int> OpenLockFile(const std::string& path) {
  Status dirs = MakeDirs(DirName(path), 0700);
  if (!dirs.ok()) {
    return MakeError(ErrorKind::kCache, dirs.error().message +
                                            "; check the permissions of the cache directory or "
                                            "set a different one (jaxcc.set_cache_dir or "
                                            "$JAXCC_CACHE_DIR)");
  }
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return MakeError(ErrorKind::kCache, "cannot open the lock file " + path + ": " +
                                            std::strerror(errno) +
                                            "; check the permissions of the cache directory or "
                                            "set a different one (jaxcc.set_cache_dir or "
                                            "$JAXCC_CACHE_DIR)");
  }
  return fd;
}

// One LOCK_NB attempt: 1 = locked, 0 = busy, -1 = error (errno set).
int TryLock(int fd) {
  while (true) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return 1;
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? 0 : -1;
  }
}

// The holder's pid, for the timeout message only: it is informative, never trusted for
// correctness (the kernel, not this text, decides who holds the lock).
void RecordHolder(int fd) {
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  }
}

std::string DescribeHolder(const std::string& path) {
  auto text = ReadFile(path);
  long pid = text.ok() ? std::strtol(text->c_str(), nullptr, 10) : 0;
  if (pid <= 0) return "another process";
  if (pid == ::getpid()) return "another thread of this process";
  return "another process (pid " + std::to_string(pid) + ")";
}

}  // namespace

Result<FileLock> FileLock::Acquire(const std::string& path, double timeout_seconds) {
  auto fd = OpenLockFile(path);
  if (!fd.ok()) return fd.error();
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(0.0, timeout_seconds)));
  // Polling instead of a blocking flock keeps the timeout exact without signals or threads;
  // the backoff caps at 50 ms so a released lock is noticed quickly.
  auto sleep = std::chrono::milliseconds(1);
  while (true) {
    int locked = TryLock(*fd);
    if (locked == 1) {
      RecordHolder(*fd);
      return FileLock(*fd);
    }
    if (locked < 0) {
      int saved = errno;
      ::close(*fd);
      return MakeError(ErrorKind::kCache,
                       "cannot lock " + path + ": " + std::strerror(saved) +
                           " (the cache directory's file system may not support flock; set a "
                           "cache directory on a local disk with jaxcc.set_cache_dir or "
                           "$JAXCC_CACHE_DIR)");
    }
    auto now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(sleep, deadline - now));
    sleep = std::min(sleep * 2, std::chrono::milliseconds(50));
  }
  ::close(*fd);
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", timeout_seconds);
  return MakeError(
      ErrorKind::kCache,
      std::string("timed out after ") + seconds + " s waiting for the build lock " + path + ": " +
          DescribeHolder(path) +
          " is still building this module with the same inputs. Wait for it to finish and "
          "try again, or set a different cache directory (jaxcc.set_cache_dir or "
          "$JAXCC_CACHE_DIR) to build independently. The lock is released by the kernel when "
          "its holder exits, so there is no lock file to delete.");
}

Result<FileLock> FileLock::TryAcquire(const std::string& path) {
  auto fd = OpenLockFile(path);
  if (!fd.ok()) return fd.error();
  int locked = TryLock(*fd);
  if (locked == 1) {
    RecordHolder(*fd);
    return FileLock(*fd);
  }
  int saved = errno;
  ::close(*fd);
  if (locked == 0) return FileLock(-1);
  return MakeError(ErrorKind::kCache, "cannot lock " + path + ": " + std::strerror(saved));
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() { Release(); }

void FileLock::Release() {
  // Closing the only descriptor of this open file description drops the flock. The file stays:
  // deleting it would let a waiter that already opened it lock an orphaned inode while a newcomer
  // locks a fresh one.
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace jaxcc::cache

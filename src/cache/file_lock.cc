// Entry locks. flock mode: each Acquire opens the lock file anew, so every holder has its own open
// file description: that is what makes two threads of one process exclude each other too.
// Lockfile mode: lockfile.cc; every holder writes its own token, so threads exclude each other too.
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

#include "cache/lockfile.h"
#include "util/fs.h"

namespace jaxcc::cache {
namespace {

Status MakeLockDir(const std::string& path) {
  Status dirs = MakeDirs(DirName(path), 0700);
  if (dirs.ok()) return dirs;
  return MakeError(ErrorKind::kCache, dirs.error().message +
                                          "; check the permissions of the cache directory or "
                                          "set a different one (jaxcc.set_cache_dir or "
                                          "$JAXCC_CACHE_DIR)");
}

Result<int> OpenLockFile(const std::string& path) {
  JAXCC_RETURN_IF_ERROR(MakeLockDir(path));
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

std::string TimeoutMessage(const std::string& path, double timeout_seconds,
                           const std::string& holder, bool lockfile) {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", timeout_seconds);
  std::string tail =
      lockfile ? " A lock file of a dead process on its own host is removed by the next waiter "
                 "there; one of another host is removed once it is older than the build timeout "
                 "plus a minute. If that host is gone for good, delete " +
                     path + "."
               : " The lock is released by the kernel when its holder exits, so there is no "
                 "lock file to delete.";
  return std::string("timed out after ") + seconds + " s waiting for the build lock " + path +
         ": " + holder +
         " is still building this module with the same inputs. Wait for it to finish and "
         "try again, or set a different cache directory (jaxcc.set_cache_dir or "
         "$JAXCC_CACHE_DIR) to build independently." +
         tail;
}

Error LockfileError(const std::string& path, int err) {
  // The fix depends on the errno: hard links are to blame only when link(2) is refused as such
  // (issue 49 item 19: a full disk was told to switch lock modes).
  std::string fix;
  if (err == EPERM || err == ENOTSUP || err == EOPNOTSUPP || err == EMLINK || err == ENOSYS) {
    fix =
        " (lock files need hard links, link(2); on a filesystem without them set "
        "JAXCC_CACHE_LOCK=flock, or set a cache directory on a local disk with "
        "jaxcc.set_cache_dir or $JAXCC_CACHE_DIR)";
  } else if (err == ENOSPC || err == EDQUOT) {
    fix =
        " (ENOSPC: the disk holding the cache is full; free space there or point "
        "$JAXCC_CACHE_DIR at a disk with room)";
  } else if (err == EACCES || err == EROFS) {
    fix =
        " (the cache directory cannot be written; point jaxcc.set_cache_dir or "
        "$JAXCC_CACHE_DIR at a directory you can write)";
  }
  return MakeError(ErrorKind::kCache,
                   "cannot create the lock file " + path + ": " + std::strerror(err) + fix);
}

// Sleeps for the next poll; the backoff caps at 50 ms so a released lock is noticed quickly.
template <class Clock>
bool WaitMore(typename Clock::time_point deadline, std::chrono::milliseconds& sleep) {
  auto now = Clock::now();
  if (now >= deadline) return false;
  std::this_thread::sleep_for(std::min<typename Clock::duration>(sleep, deadline - now));
  sleep = std::min(sleep * 2, std::chrono::milliseconds(50));
  return true;
}

}  // namespace

Result<FileLock> FileLock::Acquire(const std::string& path, double timeout_seconds) {
  JAXCC_RETURN_IF_ERROR(MakeLockDir(path));
  auto mode = ResolveLockMode(DirName(path));
  if (!mode.ok()) return mode.error();
  return Acquire(path, timeout_seconds, *mode);
}

Result<FileLock> FileLock::Acquire(const std::string& path, double timeout_seconds, LockMode mode) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(0.0, timeout_seconds)));
  // Polling instead of a blocking flock keeps the timeout exact without signals or threads.
  auto sleep = std::chrono::milliseconds(1);
  if (mode == LockMode::kLockfile) {
    JAXCC_RETURN_IF_ERROR(MakeLockDir(path));
    std::string token = lockfile::MakeToken();
    do {
      int locked = lockfile::TryLock(path, token, std::max(0.0, timeout_seconds));
      if (locked == 1) return FileLock(path, token);
      if (locked < 0) return LockfileError(path, errno);
    } while (WaitMore<Clock>(deadline, sleep));
    return MakeError(ErrorKind::kCache,
                     TimeoutMessage(path, timeout_seconds, lockfile::DescribeHolder(path), true));
  }
  auto fd = OpenLockFile(path);
  if (!fd.ok()) return fd.error();
  do {
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
                           " (the cache directory's file system may not support flock; set "
                           "JAXCC_CACHE_LOCK=lockfile, or a cache directory on a local disk with "
                           "jaxcc.set_cache_dir or $JAXCC_CACHE_DIR)");
    }
  } while (WaitMore<Clock>(deadline, sleep));
  ::close(*fd);
  return MakeError(ErrorKind::kCache,
                   TimeoutMessage(path, timeout_seconds, DescribeHolder(path), false));
}

Result<FileLock> FileLock::TryAcquire(const std::string& path) {
  JAXCC_RETURN_IF_ERROR(MakeLockDir(path));
  auto mode = ResolveLockMode(DirName(path));
  if (!mode.ok()) return mode.error();
  return TryAcquire(path, *mode);
}

Result<FileLock> FileLock::TryAcquire(const std::string& path, LockMode mode) {
  if (mode == LockMode::kLockfile) {
    JAXCC_RETURN_IF_ERROR(MakeLockDir(path));
    std::string token = lockfile::MakeToken();
    int locked = lockfile::TryLock(path, token, kForeignLockStaleSeconds);
    if (locked == 1) return FileLock(path, token);
    if (locked == 0) return FileLock();
    return LockfileError(path, errno);
  }
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

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(other.fd_), lock_path_(std::move(other.lock_path_)), token_(std::move(other.token_)) {
  other.fd_ = -1;
  other.token_.clear();
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    lock_path_ = std::move(other.lock_path_);
    token_ = std::move(other.token_);
    other.fd_ = -1;
    other.token_.clear();
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
  // A lock file, in contrast, is the lock itself: removing it (if it is still ours) releases it.
  if (!token_.empty()) {
    lockfile::Unlock(lock_path_, token_);
    token_.clear();
  }
}

}  // namespace jaxcc::cache

// An exclusive inter-process lock on a cache entry, taken one of two ways (lock_mode.h):
// - flock(2): the kernel drops it when the holder dies (even by SIGKILL); exact on a local disk.
// - a lock file created with link(2) that names its holder's host, boot id and pid, for caches
//   shared by several hosts (NFS), where flock may exclude only the processes of one node.
#pragma once

#include <string>

#include "cache/lock_mode.h"
#include "util/result.h"

namespace jaxcc::cache {

class FileLock {
 public:
  /// Blocks until the lock is held or `timeout_seconds` pass (then ErrorKind::kCache naming the
  /// path and how to proceed). Creates the lock file's directory (mode 0700) if needed. The mode
  /// comes from $JAXCC_CACHE_LOCK and the directory's filesystem (ResolveLockMode). In lockfile
  /// mode a lock of a dead process on this host is broken at once, and one of another host once
  /// it is older than `timeout_seconds` (no build outlives the build timeout the caller adds to).
  static Result<FileLock> Acquire(const std::string& path, double timeout_seconds);
  static Result<FileLock> Acquire(const std::string& path, double timeout_seconds, LockMode mode);
  /// Non-blocking attempt: an empty optional-like result (ok() with held()==false) if busy. In
  /// lockfile mode another host's lock counts as stale after kForeignLockStaleSeconds.
  static Result<FileLock> TryAcquire(const std::string& path);
  static Result<FileLock> TryAcquire(const std::string& path, LockMode mode);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  bool held() const { return fd_ >= 0 || !token_.empty(); }
  void Release();

 private:
  FileLock() = default;
  explicit FileLock(int fd) : fd_(fd) {}
  FileLock(std::string path, std::string token)
      : lock_path_(std::move(path)), token_(std::move(token)) {}
  int fd_ = -1;            // flock mode: the descriptor that holds the lock
  std::string lock_path_;  // lockfile mode: the lock file and the text this holder wrote in it
  std::string token_;
};

/// How old another host's lock file must be before TryAcquire (cache clear) treats it as stale:
/// the default build timeout (600 s) plus the minute Acquire's callers add.
inline constexpr double kForeignLockStaleSeconds = 660;

}  // namespace jaxcc::cache

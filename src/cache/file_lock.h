// An exclusive inter-process lock on a file, via flock(2): the kernel drops it when the holder
// dies (even by SIGKILL), so no lock can outlive its builder.
#pragma once

#include <string>

#include "util/result.h"

namespace jaxcc::cache {

class FileLock {
 public:
  /// Blocks until the lock is held or `timeout_seconds` pass (then ErrorKind::kCache naming the
  /// path and how to proceed). Creates the lock file (and its directory, mode 0700) if needed.
  static Result<FileLock> Acquire(const std::string& path, double timeout_seconds);
  /// Non-blocking attempt: an empty optional-like result (ok() with held()==false) if busy.
  static Result<FileLock> TryAcquire(const std::string& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  bool held() const { return fd_ >= 0; }
  void Release();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace jaxcc::cache

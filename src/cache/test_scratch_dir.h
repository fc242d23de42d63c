// A fresh temporary directory per test, removed afterwards (cache tests only).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "util/fs.h"

namespace jaxcc::cache::testing_util {

class ScratchDir {
 public:
  ScratchDir() {
    path_ = ::testing::TempDir() + "jaxcc_cache_testXXXXXX";
    if (::mkdtemp(path_.data()) == nullptr) path_.clear();
  }
  ~ScratchDir() {
    if (!path_.empty()) (void)RemoveTree(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return JoinPath(path_, name); }

 private:
  std::string path_;
};

/// Sets a file's mtime `seconds_ago` in the past (and returns its new stat).
inline FileInfo Age(const std::string& path, int seconds_ago) {
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds_ago;
  times[1] = times[0];
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
  return StatPath(path);
}

}  // namespace jaxcc::cache::testing_util

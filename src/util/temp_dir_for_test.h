// Temporary directories for the C++ tests, each removed when the test process that made it
// exits (issue 48): a run of the suite leaves nothing in $TMPDIR, even when an assertion returns
// before a test's own clean-up. Tests that pass a directory to a child process keep it until
// their own process ends, which outlives the child.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "util/fs.h"

namespace jaxcc::testing_util {

class TestTempDirs {
 public:
  ~TestTempDirs() {
    // A forked child that returns through exit() must not remove its parent's directories.
    if (::getpid() != owner_) return;
    for (const std::string& dir : dirs_) (void)RemoveTree(dir);
  }
  void Add(const std::string& dir) {
    std::lock_guard<std::mutex> hold(mutex_);
    dirs_.push_back(dir);
  }

 private:
  pid_t owner_ = ::getpid();
  std::mutex mutex_;
  std::vector<std::string> dirs_;
};

/// A fresh directory `$TMPDIR/<prefix>-XXXXXX` (or under /tmp), removed at the process's exit.
/// Returns "" if it cannot be made (the test's own ASSERT on the path then fails).
inline std::string MakeTestTempDir(const std::string& prefix) {
  static TestTempDirs dirs;
  auto made = MakeTempDir(prefix);
  if (!made.ok()) return "";
  dirs.Add(*made);
  return *made;
}

}  // namespace jaxcc::testing_util

// Test helper: sets (or unsets) an environment variable for one scope and forgets the toolchain
// memos on entry and exit, since they are keyed on the environment.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "toolchain/host_compiler.h"
#include "toolchain/linker.h"
#include "toolchain/nvcc.h"

namespace jaxcc::toolchain {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
    ResetMemos();
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
    ResetMemos();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void ResetMemos() {
    ResetHostCompilerMemo();
    ResetNvccMemo();
    ResetLinkerMemo();
  }
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace jaxcc::toolchain

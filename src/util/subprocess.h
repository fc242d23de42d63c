// Runs a child process with its output captured, a deadline, and no shell in between.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace jaxcc {

struct ProcessResult {
  int exit_code = -1;  ///< exit status, or 128 + signal number when killed by a signal
  bool timed_out = false;
  std::string output;  ///< stdout and stderr interleaved as the child wrote them
};

struct ProcessOptions {
  double timeout_seconds = 600;
  /// Called with each chunk of output as it arrives (for verbose builds); may be empty.
  std::function<void(std::string_view)> on_output;
  /// "NAME=value" entries added to (or replacing those of) this process's environment.
  std::vector<std::string> environment;
};

/// Spawns argv[0] (searched on PATH when it has no '/') in its own process group; on timeout
/// the whole group is killed so no compiler outlives the call. Fails (ErrorKind::kIo) only when
/// the program cannot be started; a non-zero exit is reported in ProcessResult.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const ProcessOptions& options = {});

/// Finds an executable by name on PATH (or checks a path containing '/'); "" when absent.
std::string FindExecutable(const std::string& name);

/// Quotes an argument for display in logs and error messages (POSIX shell rules).
std::string ShellQuote(std::string_view arg);
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace jaxcc

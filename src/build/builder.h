// Writes a build directory (sources + build.ninja) and runs ninja over it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "build/build_graph.h"
#include "build/ninja_log.h"
#include "util/result.h"

namespace jaxcc::build {

/// The compile database's file name, in a build directory and in a cache entry.
inline constexpr const char* kCompileDatabaseName = "compile_commands.json";

struct BuildRequest {
  std::string build_dir;
  /// (file name relative to build_dir, contents). A file whose contents are unchanged is not
  /// rewritten, so ninja's timestamps stay valid and an incremental rebuild skips it.
  std::vector<std::pair<std::string, std::string>> files;
  BuildGraph graph;
  std::string ninja;
  int workers = 0;  ///< 0 = let ninja choose (cores + 2)
  double timeout_seconds = 600;
  /// Receives ninja's output live (verbose mode); the full output is also in build.log.
  std::function<void(std::string_view)> on_output;
  bool verbose = false;  ///< ninja -v: print every command line
  /// Called with (steps finished, steps in the build) as ninja starts each step: compiles and
  /// the link, on the thread that runs the build.
  std::function<void(int, int)> on_progress;
};

struct BuildOutcome {
  std::string library_path;
  std::string log;
  double seconds = 0;
  /// Every file the compilers read, from the depfiles (absolute paths as the compiler wrote them).
  std::vector<std::string> dependencies;
  /// What each compile and the link of this run took (ninja's log; empty if unreadable).
  std::vector<BuildStep> steps;
};

/// Fails with ErrorKind::kCompile when ninja reports a failure (message = the first error plus
/// the path of build.log) or ErrorKind::kIo/kToolchain when ninja cannot run or times out.
Result<BuildOutcome> RunBuild(const BuildRequest& request);

}  // namespace jaxcc::build

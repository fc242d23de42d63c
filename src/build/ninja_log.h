// What each step of a build took, read from ninja's own log (`.ninja_log`): the compiles and the
// link with their start and end, so a slow edit-to-result can be taken apart (issue 39 item 5)
// without re-timing anything.
#pragma once

#include <string>
#include <vector>

namespace jaxcc::build {

struct BuildStep {
  std::string output;        ///< the step's output file, relative to the build directory
  double start_seconds = 0;  ///< since ninja started
  double end_seconds = 0;
};

/// The steps recorded in `log_text` (".ninja_log", format v5 or later: one tab-separated
/// "start_ms end_ms mtime output hash" line per step) after byte `from_offset`, i.e. those of the
/// run that appended them; malformed lines are skipped (the log is ninja's, never ours to trust).
std::vector<BuildStep> ParseNinjaLogSince(const std::string& log_text, size_t from_offset);

}  // namespace jaxcc::build

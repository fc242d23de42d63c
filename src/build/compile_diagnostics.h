// Picking the first real error out of compiler and linker output, for a short message.
#pragma once

#include <string>
#include <vector>

namespace jaxcc::build {

/// What jaxcc sets NINJA_STATUS to: ninja prints it, with the finished and total step counts,
/// before each step's description, so the build's progress can be read from its output.
inline constexpr const char* kNinjaStatusPrefix = "[jaxcc-step ";
inline constexpr const char* kNinjaStatus = "[jaxcc-step %f/%t] ";

/// (finished, total) from a line that begins with the status ninja printed; false otherwise.
bool ParseNinjaStatus(const std::string& line, int* finished, int* total);

/// The output of each step that failed, in order: from ninja's "FAILED: " line up to the next
/// status line, "FAILED: " line or "ninja: " line (ninja runs with -k 0, so every unit that
/// fails is there, not only the first).
std::vector<std::string> FailedStepOutputs(const std::string& output);

/// The message of a failed build: FirstError of the one failed step, or, when several failed,
/// how many and each one's first error, in order.
std::string FailedBuildMessage(const std::string& output);

/// The first `file:line:col: error:` (or `fatal error:`) diagnostic with the source line and caret
/// lines the compiler printed under it; else the first linker error ("undefined reference",
/// "ld: ..."); else the last lines of the output. Never longer than about 40 lines.
std::string FirstError(const std::string& output);

/// "How to fix: ..." for a failure that one of the load options fixes (a missing header or
/// library, an unknown compiler flag, an undefined symbol), for `first_error` as FirstError
/// returns it; "" when there is no such advice.
std::string FixHint(const std::string& first_error);

}  // namespace jaxcc::build

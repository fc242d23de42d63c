// A small JSON file remembering `<tool> --version` per (path, size, mtime, inode) across processes.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "util/result.h"

namespace jaxcc::toolchain {

/// The memo key of an executable: "<path>|<size>|<mtime_ns>|<ctime_ns>|<inode>", or "" when it
/// cannot be stat'ed. ctime moves on every write, so a script rewritten with its old mtime put
/// back is another executable.
std::string ExecutableIdentity(const std::string& path);

/// Reads a remembered version; a missing or corrupt memo file is simply a miss.
std::optional<std::string> LookupVersion(const std::string& memo_path, const std::string& identity);

/// Adds or replaces an entry (atomic rewrite). Failures are ignored: the memo is an optimisation.
void RememberVersion(const std::string& memo_path, const std::string& identity,
                     const std::string& version);

/// Picks the line of a tool's `--version` output that names its version; an error when none does.
using VersionLinePicker = std::function<Result<std::string>(const std::string& output)>;

/// The first line of the output: how compilers name themselves ("g++ (Debian 12.2.0-14) 12.2.0").
Result<std::string> FirstLineOf(const std::string& output);

/// `<path> --version` (30 s limit), its line chosen by `pick`, remembered in `memo_path` by
/// ExecutableIdentity so later processes skip the subprocess. The one probe of every tool.
Result<std::string> ProbeVersion(const std::string& path, const std::string& memo_path,
                                 const VersionLinePicker& pick);

}  // namespace jaxcc::toolchain

// A small JSON file remembering `<tool> --version` per (path, size, mtime, inode) across processes.
#pragma once

#include <optional>
#include <string>

namespace jaxcc::toolchain {

/// The memo key of an executable: "<path>|<size>|<mtime_ns>|<inode>", or "" when it cannot be
/// stat'ed.
std::string ExecutableIdentity(const std::string& path);

/// Reads a remembered version; a missing or corrupt memo file is simply a miss.
std::optional<std::string> LookupVersion(const std::string& memo_path, const std::string& identity);

/// Adds or replaces an entry (atomic rewrite). Failures are ignored: the memo is an optimisation.
void RememberVersion(const std::string& memo_path, const std::string& identity,
                     const std::string& version);

}  // namespace jaxcc::toolchain

// Names of the things inside a cache directory, in one place so that creating, parsing and
// clearing them cannot disagree.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "util/result.h"

namespace jaxcc::cache {

/// Hex characters of the key in an entry directory name (96 bits: collisions are negligible, and
/// Lookup compares the full key from the manifest anyway).
inline constexpr size_t kEntryKeyChars = 24;
/// Hex characters of the library's SHA-256 in its file name.
inline constexpr size_t kLibraryHashChars = 12;

inline constexpr size_t kMaxModuleNameChars = 128;

/// The one rule for module names and target prefixes (ErrorKind::kSpec, `what` names the thing):
/// they name files in the cache and FFI targets, so they start with a letter or '_', hold only
/// letters, digits, '_', '-' and '.', never "..", and have at most 128 characters.
Status ValidateModuleName(const std::string& name, const char* what);

/// A valid module name made from a file or directory path: its stem with every other character
/// replaced by '_', prefixed with '_' where it does not start with a letter, clipped to 128.
std::string ModuleNameFromPath(const std::string& path);

/// "<name>-<first 24 hex of key>".
std::string EntryDirName(const std::string& name, const std::string& key);

/// "<name>.<first 12 hex of library sha256>.so": a new file name whenever the content changes,
/// because dlopen of a path that is already loaded returns the old image.
std::string LibraryFileName(const std::string& name, const std::string& library_sha256);

/// The module name of an entry directory name "<name>-<24 lowercase hex>", or nullopt when
/// `dir_name` is anything else (hidden directories, other files, longer or shorter suffixes).
std::optional<std::string> ModuleOfEntryDir(const std::string& dir_name);

/// "<name>-<pid>@<host>-<random>", the name of a private build directory under .build/; `host` is
/// a SafeHostName (no '-' or '@'), so that on a cache shared by several hosts only the owning
/// host judges whether the pid is alive.
std::string BuildDirName(const std::string& name, pid_t pid, const std::string& host,
                         const std::string& random);

struct ParsedBuildDir {
  std::string module;
  pid_t pid = 0;
  std::string host;  ///< empty for the older "<name>-<pid>-<random>" form
};
/// Parses BuildDirName's format (and the older one without a host) from the right (module names
/// may contain '-').
std::optional<ParsedBuildDir> ParseBuildDirName(const std::string& dir_name);

/// Temporary files the cache writes inside an entry: ".tmp-*" (library copies) and
/// "manifest.json.tmp-*" (WriteFileAtomic). Never matches a library or manifest name.
bool IsTempFileName(const std::string& file_name);

}  // namespace jaxcc::cache

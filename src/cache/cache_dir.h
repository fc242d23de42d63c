// The on-disk cache: one directory per (module name, key), published atomically, guarded by locks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/manifest.h"
#include "util/result.h"

namespace jaxcc::cache {

/// A published, verified cache entry.
struct Entry {
  std::string dir;           ///< <root>/<name>-<key prefix>
  std::string library_path;  ///< absolute path of the shared library inside `dir`
  Manifest manifest;
};

/// Why a lookup did not return an entry (for the jaxcc logger).
enum class LookupMiss { kAbsent, kDamaged, kStaleDependency };

class CacheDir {
 public:
  /// Remembers `root`; creates nothing on disk until something is published or a build starts.
  explicit CacheDir(std::string root);

  const std::string& root() const { return root_; }

  /// Directory of the entry for (name, key). Name must already be validated.
  std::string EntryDir(const std::string& name, const std::string& key) const;

  /// Reads the manifest and checks the library's SHA-256 against it; checks recorded dependencies
  /// by (size, mtime) and re-hashes only those whose stat changed. Any mismatch is a miss, never an
  /// error; `miss_reason` (if given) says which.
  std::optional<Entry> Lookup(const std::string& name, const std::string& key,
                              LookupMiss* miss_reason = nullptr) const;

  /// Creates the root (mode 0700) if needed and a fresh private build directory
  /// <root>/.build/<name>-<pid>-<random>/.
  Result<std::string> MakeBuildDir(const std::string& name) const;

  /// Copies `built_library` into the entry (temp file + rename), fills in library hash and file
  /// name in `manifest`, then writes the manifest last (its presence marks the entry complete).
  Result<Entry> Publish(const std::string& name, const std::string& key,
                        const std::string& built_library, Manifest manifest) const;

  /// Removes entries (all, or those of one module name); skips entries whose lock is held by a
  /// live builder. Returns how many entries were removed.
  Result<int> Clear(const std::optional<std::string>& name) const;

  /// Path of the lock file for (name, key): <root>/.locks/<name>-<key prefix>.lock
  std::string LockPath(const std::string& name, const std::string& key) const;

 private:
  std::string root_;
};

}  // namespace jaxcc::cache

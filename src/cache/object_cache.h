// Compiled FFI wrapper objects shared between cache entries.
//
// A module's wrapper unit depends only on its function signatures, the flags, the compiler and
// the XLA/jaxcc headers, not on the kernel bodies; it is also the slowest unit to compile (XLA's
// FFI templates). Editing a kernel body therefore reuses the wrapper object of the previous
// build instead of compiling it again. Objects live in <cache root>/.objects as <key>.o with a
// <key>.sha256 of their contents, written atomically; a fetched object is verified against its
// digest, and anything that does not verify is removed and treated as a miss, so a damaged
// object costs a recompile, never a bad link. Only the most recently used objects are kept.
#pragma once

#include <string>
#include <vector>

namespace jaxcc::cache {

class ObjectCache {
 public:
  /// `max_objects`: how many objects to keep (least recently used go first).
  explicit ObjectCache(const std::string& cache_root, int max_objects = 256);

  /// The key of an object compiled from `source_text` by `command` (compiler and flags) with
  /// `compiler_version` against headers whose digest is `header_digest`.
  static std::string Key(const std::string& source_text, const std::vector<std::string>& command,
                         const std::string& compiler_version, const std::string& header_digest);

  /// Copies the object of `key` to `destination` if it is present and verifies; marks it used.
  /// A missing, unreadable or damaged object is a miss (damaged ones are removed).
  bool Fetch(const std::string& key, const std::string& destination) const;

  /// Stores `object_path` under `key` and evicts beyond the limit. Best effort: the cache only
  /// saves time, so a failure to store is ignored.
  void Store(const std::string& key, const std::string& object_path) const;

  const std::string& dir() const { return dir_; }

 private:
  void Evict() const;

  std::string dir_;
  int max_objects_;
};

}  // namespace jaxcc::cache

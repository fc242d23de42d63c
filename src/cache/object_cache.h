// Compiled translation-unit objects shared between builds and cache entries.
//
// Every unit of a module (the user's kernel units, C++ or CUDA, and the generated FFI wrapper) is
// compiled from a generated source text by one command; its object depends on that text, the
// command, the toolchain's version, the jaxcc/XLA header digest and the user's own headers the
// compiler read (from its depfile). Editing one source of a directory, or one of several inline
// sources, therefore rebuilds that unit only and links the others' objects from here.
//
// Objects live in <cache root>/.objects as <key>.o, <key>.deps (one "<sha256> <path>" line per
// user header) and <key>.sha256, the digest of the object and its dependency list together,
// written in that order, each atomically. A fetched object is verified against its digest and
// every header against its recorded digest: a damaged object is removed and compiled again,
// never linked; an edited header makes a miss. Only the most recently used objects are kept,
// bounded in number and in bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jaxcc::cache {

/// A header an object was compiled from (besides its source text), with its SHA-256 then; or,
/// with sha256 == kAbsentFile, a path that did not exist and would shadow one of those headers
/// if it did (pipeline/build_inputs.h): the object holds only while it is still absent; or, for
/// a path ending in '/', a directory of the include search with the digest of its names
/// (cache/watched_directory.h): a header created there that the preprocessor probed and missed
/// makes the object a miss (decision 172).
struct ObjectDependency {
  std::string path;
  std::string sha256;
};

inline const std::string kAbsentFile(64, '-');

class ObjectCache {
 public:
  /// Keeps at most `max_objects` objects and, when `max_bytes` > 0, at most that many bytes of
  /// them (least recently used go first).
  explicit ObjectCache(const std::string& cache_root, int max_objects = 1024,
                       std::int64_t max_bytes = 0);

  /// The key of an object compiled from `source_text` by `command` (compiler and flags) with
  /// toolchain `toolchain_version` against headers whose digest is `header_digest`.
  static std::string Key(const std::string& source_text, const std::vector<std::string>& command,
                         const std::string& toolchain_version, const std::string& header_digest);

  /// Copies the object of `key` to `destination` if it is present, verifies and its headers are
  /// unchanged; marks it used and returns its dependencies. A missing, unreadable, damaged
  /// (removed) or stale object is a miss.
  std::optional<std::vector<ObjectDependency>> Fetch(const std::string& key,
                                                     const std::string& destination) const;

  /// Stores `object_path` under `key` with the headers it was compiled from and evicts beyond
  /// the limits. Best effort: the cache only saves time, so a failure to store is ignored.
  void Store(const std::string& key, const std::string& object_path,
             const std::vector<ObjectDependency>& dependencies = {}) const;

  /// Removes the object of `key` (a 64-hex key; anything else is ignored), e.g. because the
  /// entry that linked it was cleared. Returns whether an object was there.
  bool Remove(const std::string& key) const;

  const std::string& dir() const { return dir_; }

 private:
  void Evict() const;

  std::string dir_;
  int max_objects_;
  std::int64_t max_bytes_;
};

}  // namespace jaxcc::cache

// The JSON manifest stored beside each cached library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::cache {

/// A file the build read (from the compiler's depfiles) that is not covered by the key itself.
/// Its content hash decides; the stat stamp (size, mtime, ctime, inode) only spares re-reading a
/// file whose stamp is unchanged. ctime cannot be set back by anyone but the kernel, so an edit
/// that keeps size and mtime (`cp -p`, `tar x`, `rsync -t`, `touch -r`) still moves the stamp.
/// ctime_ns 0 means "no stamp to trust" (a stamp taken while it could still change within the
/// same timestamp tick, or a manifest written before ctime and inode were kept): always hashed.
struct Dependency {
  std::string path;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  bool operator==(const Dependency& other) const {
    return path == other.path && size == other.size && mtime_ns == other.mtime_ns &&
           sha256 == other.sha256 && ctime_ns == other.ctime_ns && inode == other.inode;
  }
  bool operator!=(const Dependency& other) const { return !(*this == other); }
};

/// A directory whose change could make a build read something else (decision 172). While its
/// stamp (mtime, ctime, inode) is unchanged it is one stat. When the stamp moved, what matters
/// decides: with `names_sha256`, the names in it (a directory of the include or library search,
/// where a header the preprocessor looked for and did not find may appear: `__has_include`, the
/// search before each header found); with `files_sha256`, the bytes of `files`, the files the
/// build read from it (a directory of the compiler's or the C library's own headers, which
/// packages replace by rename, so its stamp moves whenever one of them is replaced). A file
/// edited in place there keeps the directory's stamp and is not seen (docs/cache.md).
/// kDirectoryUnknown as `names_sha256` never matches: the directory changed while the build ran.
struct WatchedDirectory {
  std::string path;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  std::string names_sha256;
  std::vector<std::string> files;  ///< names, sorted; the warm index's copy leaves them out
  std::string files_sha256;
  bool operator==(const WatchedDirectory& other) const {
    return path == other.path && mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns &&
           inode == other.inode && names_sha256 == other.names_sha256 && files == other.files &&
           files_sha256 == other.files_sha256;
  }
  bool operator!=(const WatchedDirectory& other) const { return !(*this == other); }
};

inline constexpr char kDirectoryUnknown[] = "changed-during-build";

struct Manifest {
  int schema = 1;
  std::string key;
  std::string module_name;
  std::string library_file;    ///< file name inside the entry directory
  std::string library_sha256;  ///< checked before every dlopen
  std::string jaxcc_version;
  std::vector<std::string> function_names;
  std::vector<Dependency> dependencies;
  /// Paths that did not exist when the build ran and would shadow a tracked header if created
  /// (an earlier directory of the include search): the entry holds only while they stay absent.
  std::vector<std::string> shadows;
  /// Directories the build's tools searched or read from (decision 172).
  std::vector<WatchedDirectory> directories;
  /// Object-cache keys (cache/object_cache.h) of the units linked into the library, so clearing
  /// the entry clears them too.
  std::vector<std::string> objects;
  std::string inputs_json;  ///< free-form JSON object describing the key inputs (for humans)
  double build_seconds = 0;
  std::int64_t created_unix = 0;
};

std::string ManifestToJson(const Manifest& manifest);
/// Fails with ErrorKind::kCache on malformed JSON or missing fields.
Result<Manifest> ManifestFromJson(const std::string& text);

}  // namespace jaxcc::cache

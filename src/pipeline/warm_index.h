// The warm index: a load request's fingerprint -> the cache entry it resolved to last time, so a
// warm load in a fresh process skips what only a miss needs (decision 84). Without it, every load
// resolves the C++ signatures, finds the compiler, digests the XLA and jaxcc headers and computes
// the cache key before it can look the entry up; with it, a hit is one small file, a few stat(2)
// calls and then the same verified lookup and dlopen (cache_access.h), against a copy of the
// manifest's facts kept in the record, so the hit reads no JSON at all (decision 85).
//
// A record is trusted only while everything the key was computed from that the request does not
// state itself is unchanged: the compiler and nvcc binaries (path, size, mtime, inode) and the
// directories of the XLA FFI and jaxcc headers (their mtime and inode, which a reinstall changes).
// The user's own headers are checked by the entry lookup itself (manifest dependencies), as on
// every hit, from the record's copy of them. Anything else (a corrupt, foreign or stale record) is
// a miss and the full path runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "argspec/function_spec.h"
#include "cache/cache_dir.h"
#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// What stat(2) says of a watched path; equal stamps mean "unchanged" for the index.
struct FileStamp {
  bool exists = false;
  std::int64_t size = 0;  ///< 0 for directories: their size says nothing portable
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
  /// Any write moves it and nobody can set it back: a wrapper script rewritten with its old
  /// size and mtime put back is still another compiler.
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp& other) const {
    return exists == other.exists && size == other.size && mtime_ns == other.mtime_ns &&
           inode == other.inode && ctime_ns == other.ctime_ns;
  }
  bool operator!=(const FileStamp& other) const { return !(*this == other); }
};

struct WatchedPath {
  std::string path;
  FileStamp stamp;
};

/// What the full path established about a request: where its entry is, what its library must
/// hash to, and what it depended on.
struct WarmRecord {
  std::string key;          ///< the cache key (cache_key.h) the full path computed
  cache::EntryFacts entry;  ///< copied from the entry's verified manifest
  std::vector<argspec::FunctionSpec> specs;
  std::vector<std::string> cuda_archs;
  std::string cuda_archs_source;
  /// Files and directories whose stamp must be unchanged for the record to hold.
  std::vector<WatchedPath> watched;
};

/// SHA-256 over every field of the request (a deferred source file by its path and stamp, not its
/// bytes: decision 139) and every input of the full path that the request
/// does not state (the environment's include directories, wheel folders, CUDA runtime choice and
/// detected GPUs, and the variables
/// the tool searches read: CXX, PATH, JAXCC_NVCC, CUDA_HOME, CUDA_PATH, JAXCC_CUDA_ARCH).
std::string WarmFingerprint(const LoadRequest& request, const BuildEnvironment& env);

/// `<cache>/.index/<fingerprint>`.
std::string WarmIndexPath(const std::string& cache_dir, const std::string& fingerprint);

/// The record at `path` if it decodes and every watched path still has its recorded stamp;
/// nullopt otherwise (missing, corrupt, written by another format, or stale).
std::optional<WarmRecord> ReadValidWarmRecord(const std::string& path);

/// The stamp a path has now.
FileStamp StampOf(const std::string& path);

/// Writes the record atomically (never a partial file); failures are ignored by callers: the
/// index only saves time.
Status WriteWarmRecord(const std::string& path, const WarmRecord& record);

/// The most records `.index` keeps. Every edit of a source (and, with decision 139, every file
/// that settles) leaves a record nobody will ask for again, so the full path, which writes
/// records, trims the oldest past this; a record trimmed while still in use costs its next load
/// one pass of the full path without a build.
inline constexpr size_t kMaxWarmRecords = 2048;

/// When `index_dir` holds more than `max_records` records, removes the oldest (by mtime) down to
/// three quarters of it; also removes the temporary files of writes whose process died (over an
/// hour old). Returns how many files it removed; errors are ignored (another process may trim at
/// the same time).
int TrimWarmIndex(const std::string& index_dir, size_t max_records = kMaxWarmRecords);

/// A record <-> its bytes: length-prefixed fields (util/fields.h), every field of the record, so
/// the specs come back exactly as signature resolution gave them. Decoding never throws: any
/// malformed, truncated or foreign text is nullopt.
std::string EncodeWarmRecord(const WarmRecord& record);
std::optional<WarmRecord> DecodeWarmRecord(std::string_view text);

}  // namespace jaxcc::pipeline

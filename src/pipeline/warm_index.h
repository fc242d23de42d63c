// The warm index: a load request's fingerprint -> the cache entry it resolved to last time, so a
// warm load in a fresh process skips what only a miss needs (decision 84). Without it, every load
// resolves the C++ signatures, finds the compiler, digests the XLA and jaxcc headers and computes
// the cache key before it can look the entry up; with it, a hit is one small file, a few stat(2)
// calls and then the same verified lookup and dlopen (cache_access.h).
//
// A record is trusted only while everything the key was computed from that the request does not
// state itself is unchanged: the compiler and nvcc binaries (path, size, mtime, inode) and the
// directories of the XLA FFI and jaxcc headers (their mtime and inode, which a reinstall changes).
// The user's own headers are checked by the entry lookup itself (manifest dependencies), as on
// every hit. Anything else (a corrupt, foreign or stale record) is a miss and the full path runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// What the full path established about a request: where its entry is and what it depended on.
struct WarmRecord {
  std::string key;  ///< the cache key (cache_key.h) the full path computed
  std::vector<argspec::FunctionSpec> specs;
  std::vector<std::string> cuda_archs;
  std::string cuda_archs_source;
  /// Files and directories whose stat must be unchanged for the record to hold.
  std::vector<std::string> watched_paths;
  std::vector<std::string> watched_stamps;  ///< one per path: "<size>|<mtime_ns>|<inode>"
};

/// SHA-256 over every field of the request and every input of the full path that the request
/// does not state (the environment's include directories and detected GPUs, and the variables
/// the tool searches read: CXX, PATH, JAXCC_NVCC, CUDA_HOME, CUDA_PATH, JAXCC_CUDA_ARCH).
std::string WarmFingerprint(const LoadRequest& request, const BuildEnvironment& env);

/// `<cache>/.index/<fingerprint>`.
std::string WarmIndexPath(const std::string& cache_dir, const std::string& fingerprint);

/// The record at `path` if it parses and every watched path still has its recorded stamp;
/// nullopt otherwise (missing, corrupt, written by another format, or stale).
std::optional<WarmRecord> ReadValidWarmRecord(const std::string& path);

/// The stamp a watched path has now ("" when it does not exist).
std::string StampOf(const std::string& path);

/// Writes the record atomically (never a partial file); failures are ignored by callers: the
/// index only saves time.
Status WriteWarmRecord(const std::string& path, const WarmRecord& record);

/// FunctionSpecs <-> JSON text, every field (the record must give back exactly what signature
/// resolution gave).
std::string SpecsToJson(const std::vector<argspec::FunctionSpec>& specs);
Result<std::vector<argspec::FunctionSpec>> SpecsFromJson(const std::string& text);

}  // namespace jaxcc::pipeline

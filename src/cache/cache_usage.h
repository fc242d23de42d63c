// What the cache holds and how much of it: the inventory behind `jaxcc cache ls`, the
// least-recently-used size cap, and `jaxcc cache prune`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_dir.h"
#include "util/result.h"

namespace jaxcc::cache {

/// Default size cap when JAXCC_CACHE_MAX_BYTES is unset: large enough for hundreds of CPU
/// modules or dozens of multi-architecture CUDA modules, small next to a typical disk.
inline constexpr std::int64_t kDefaultMaxCacheBytes = 4LL << 30;

/// One published entry as `jaxcc cache ls` shows it.
struct EntryUsage {
  std::string module_name;
  std::string dir;
  std::string key;
  std::int64_t bytes = 0;         ///< all files in the entry directory
  std::int64_t last_used_ns = 0;  ///< the entry directory's mtime, refreshed by MarkUsed
  std::int64_t created_unix = 0;
  double build_seconds = 0;
  std::vector<std::string> function_names;
  bool complete = false;  ///< has a readable manifest (incomplete ones are prune candidates)
};

/// Every entry directory under `root`, most recently used first. Reads manifests but hashes
/// nothing, so it is cheap even with thousands of entries.
std::vector<EntryUsage> ListEntries(const std::string& root);

/// Records a use of the entry (for LRU eviction) by setting its directory's mtime to now. Done at
/// most once a minute per entry so the warm path costs one stat, and silently skipped on a
/// read-only cache.
void MarkUsed(const std::string& entry_dir);

struct PruneOptions {
  std::optional<std::int64_t> max_bytes;           ///< evict LRU entries until under this
  std::optional<std::int64_t> older_than_seconds;  ///< evict entries unused for this long
  std::string keep_dir;  ///< never evicted (the entry the caller just published or loaded)
};

struct PruneReport {
  int entries_removed = 0;
  std::int64_t bytes_freed = 0;
  int entries_kept = 0;
  std::int64_t bytes_kept = 0;
  int busy_skipped = 0;  ///< entries whose lock a live builder holds
  int orphans_removed =
      0;  ///< build directories of dead processes, failed builds, incomplete entries
};

/// Evicts entries by age and/or size (least recently used first), then removes what no live
/// process owns: orphaned build directories and incomplete entries. Entries being built are
/// skipped, never broken; a process that has a library mapped keeps running it.
Result<PruneReport> Prune(const CacheDir& cache, const PruneOptions& options);

/// Parses a byte count such as "4G", "512M", "100000" (K, M, G, T are powers of 1024).
Result<std::int64_t> ParseByteSize(const std::string& text);

}  // namespace jaxcc::cache

// Inventory, LRU size cap and pruning of the cache directory.
#include "cache/cache_usage.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "cache/entry_names.h"
#include "cache/manifest.h"
#include "util/fs.h"

namespace jaxcc::cache {
namespace {

constexpr std::int64_t kNsPerSecond = 1000000000;
// Refreshing the use time at most this often keeps a hot loop of loads from writing metadata.
constexpr std::int64_t kMarkUsedIntervalNs = 60 * kNsPerSecond;

std::int64_t DirectoryBytes(const std::string& dir) {
  std::int64_t total = 0;
  for (const std::string& name : ListDir(dir)) {
    FileInfo info = StatPath(JoinPath(dir, name));
    if (info.exists && !info.is_dir) total += info.size;
  }
  return total;
}

}  // namespace

std::vector<EntryUsage> ListEntries(const std::string& root) {
  std::vector<EntryUsage> entries;
  for (const std::string& dir_name : ListDir(root)) {
    auto module = ModuleOfEntryDir(dir_name);
    if (!module) continue;
    EntryUsage usage;
    usage.module_name = *module;
    usage.dir = JoinPath(root, dir_name);
    FileInfo info = StatPath(usage.dir);
    if (!info.exists || !info.is_dir) continue;
    // An entry with a future mtime (restored from a host whose clock ran ahead) would stay the
    // most recently used for ever: its ctime, which MarkUsed's utimensat moves too, decides.
    usage.last_used_ns = LastModifiedNs(info);
    usage.bytes = DirectoryBytes(usage.dir);
    auto text = ReadFile(JoinPath(usage.dir, "manifest.json"));
    if (text.ok()) {
      auto manifest = ManifestFromJson(*text);
      if (manifest.ok()) {
        usage.complete = true;
        usage.key = manifest->key;
        usage.created_unix = manifest->created_unix;
        usage.build_seconds = manifest->build_seconds;
        usage.function_names = manifest->function_names;
      }
    }
    entries.push_back(std::move(usage));
  }
  std::sort(entries.begin(), entries.end(), [](const EntryUsage& a, const EntryUsage& b) {
    return a.last_used_ns > b.last_used_ns;
  });
  return entries;
}

void MarkUsed(const std::string& entry_dir) {
  FileInfo info = StatPath(entry_dir);
  const std::int64_t age_ns = WallClockNs() - info.mtime_ns;
  // A future mtime is marked too (set to now): otherwise it would never be refreshed.
  if (!info.exists || (age_ns >= 0 && age_ns < kMarkUsedIntervalNs)) return;
  // nullptr times = "now"; a read-only cache simply keeps the old time.
  (void)::utimensat(AT_FDCWD, entry_dir.c_str(), nullptr, 0);
}

Result<PruneReport> Prune(const CacheDir& cache, const PruneOptions& options) {
  PruneReport report;
  std::vector<EntryUsage> entries = ListEntries(cache.root());  // most recent first
  std::int64_t now_ns = WallClockNs();
  std::int64_t total = 0;
  for (const EntryUsage& entry : entries) total += entry.bytes;

  // Walk from the least recently used end, removing while a limit is exceeded.
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const EntryUsage& entry = *it;
    bool too_old = options.older_than_seconds &&
                   now_ns - entry.last_used_ns > *options.older_than_seconds * kNsPerSecond;
    bool over_cap = options.max_bytes && total > *options.max_bytes;
    bool evict = entry.dir != options.keep_dir && (!entry.complete || too_old || over_cap);
    if (!evict) continue;
    auto removal = cache.RemoveEntry(BaseName(entry.dir));
    if (!removal.ok()) return removal.error();
    if (*removal == EntryRemoval::kBusy) {
      ++report.busy_skipped;
      continue;
    }
    if (*removal != EntryRemoval::kRemoved) continue;
    total -= entry.bytes;
    if (entry.complete) {
      ++report.entries_removed;
      report.bytes_freed += entry.bytes;
    } else {
      ++report.orphans_removed;
    }
  }
  for (const EntryUsage& entry : ListEntries(cache.root())) {
    ++report.entries_kept;
    report.bytes_kept += entry.bytes;
  }
  report.orphans_removed += cache.RemoveOrphans(std::nullopt, /*failed_builds_too=*/true);
  return report;
}

Result<std::int64_t> ParseByteSize(const std::string& text) {
  auto bad = [&] {
    return MakeError(ErrorKind::kSpec,
                     "invalid byte size '" + text +
                         "': write a whole number of bytes, optionally followed by K, M, G or T "
                         "(powers of 1024), for example 4G or 500M");
  };
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) return bad();
  std::int64_t value = std::strtoll(text.substr(0, digits).c_str(), nullptr, 10);
  std::string suffix = text.substr(digits);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() > 1) return bad();
  int shift = 0;
  if (!suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        return bad();
    }
  }
  if (shift > 0 && value > (INT64_MAX >> shift)) return bad();
  return value << shift;
}

}  // namespace jaxcc::cache

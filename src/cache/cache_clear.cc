// CacheDir::Clear: removes entries nobody is building and build directories whose owner is dead,
// and leaves everything that belongs to a live process alone.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "cache/cache_dir.h"
#include "cache/cache_error.h"
#include "cache/entry_names.h"
#include "cache/file_lock.h"
#include "cache/object_cache.h"
#include "util/fs.h"
#include "util/host_identity.h"

namespace jaxcc::cache {
namespace {

// Another host's build directory is judged by age alone: its pid means nothing here. A day is far
// beyond any build timeout.
constexpr std::int64_t kForeignBuildDirStaleNs = 24 * 3600LL * 1000000000;
constexpr std::int64_t kStaleLockTempNs = 3600LL * 1000000000;

bool ProcessIsGone(pid_t pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

bool IsOrphan(const std::string& path, const ParsedBuildDir& parsed, const std::string& host) {
  if (parsed.host.empty() || parsed.host == host) {
    return parsed.pid != ::getpid() && ProcessIsGone(parsed.pid);
  }
  std::int64_t now_ns = WallClockNs();
  FileInfo info = StatPath(path);
  return info.exists && now_ns - info.mtime_ns > kForeignBuildDirStaleNs;
}

// Build directories are private to their process; once it is gone nobody will finish or remove
// them. A pid that is reused keeps its directory until the next Clear after that process exits.
int RemoveOrphanBuildDirs(const std::string& build_root, const std::optional<std::string>& name) {
  int removed = 0;
  std::string host = ThisHostName();
  for (const std::string& dir_name : ListDir(build_root)) {
    auto parsed = ParseBuildDirName(dir_name);
    if (!parsed || (name && parsed->module != *name)) continue;
    if (!IsOrphan(JoinPath(build_root, dir_name), *parsed, host)) continue;
    // Best effort: what stays is retried by the next sweep.
    if (RemoveTree(JoinPath(build_root, dir_name)).ok()) ++removed;
  }
  return removed;
}

// Kept failed builds (<root>/.failed/<name>-<key prefix>/, written by the pipeline while it holds
// the entry's lock) go with their module; one whose lock is held is being replaced right now.
int RemoveFailedBuilds(const CacheDir& cache, const std::optional<std::string>& name) {
  int removed = 0;
  std::string failed_root = JoinPath(cache.root(), ".failed");
  for (const std::string& dir_name : ListDir(failed_root)) {
    auto module = ModuleOfEntryDir(dir_name);
    if (!module || (name && *module != *name)) continue;
    auto lock = FileLock::TryAcquire(cache.LockPath(*module, dir_name.substr(module->size() + 1)));
    if (lock.ok() && lock->held() && RemoveTree(JoinPath(failed_root, dir_name)).ok()) ++removed;
  }
  return removed;
}

// A lock-file holder killed between writing its temporary file and unlinking it leaves
// "<lock>.tmp-<host>-<pid>-<random>" behind; an hour is far beyond the microseconds it lives.
void RemoveStaleLockTemps(const std::string& locks_dir) {
  (void)RemoveStaleTemporaries(locks_dir, kStaleLockTempNs, [](const std::string& name) {
    return name.find(".tmp-") != std::string::npos;
  });
}

}  // namespace

Result<EntryRemoval> CacheDir::RemoveEntry(const std::string& dir_name) const {
  auto module = ModuleOfEntryDir(dir_name);
  if (!module) return EntryRemoval::kNotAnEntry;
  std::string dir = JoinPath(root_, dir_name);
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))) {
    return EntryRemoval::kNotAnEntry;
  }
  auto lock = FileLock::TryAcquire(LockPath(*module, dir_name.substr(module->size() + 1)));
  if (!lock.ok()) return lock.error();
  if (!lock->held()) return EntryRemoval::kBusy;  // another process is building it: leave it

  // Rename first so readers see the whole entry or none of it, and an interrupted removal
  // leaves an orphan build directory (ours, soon dead) that a later sweep collects.
  std::string build_root = JoinPath(root_, ".build");
  Status made = MakeDirs(build_root, 0700);
  std::string trash =
      JoinPath(build_root, BuildDirName(*module, ::getpid(), ThisHostName(), RandomHex(8)));
  if (made.ok() && ::rename(dir.c_str(), trash.c_str()) == 0) {
    (void)RemoveTree(trash);
    return EntryRemoval::kRemoved;
  }
  Status gone = RemoveTree(dir);
  if (!gone.ok()) return CacheWriteError(root_, gone.error());
  return EntryRemoval::kRemoved;
}

int CacheDir::RemoveOrphans(const std::optional<std::string>& name, bool failed_builds_too) const {
  RemoveStaleLockTemps(JoinPath(root_, ".locks"));
  int removed = RemoveOrphanBuildDirs(JoinPath(root_, ".build"), name);
  if (failed_builds_too) removed += RemoveFailedBuilds(*this, name);
  return removed;
}

Result<int> CacheDir::Clear(const std::optional<std::string>& name) const {
  if (name) JAXCC_RETURN_IF_ERROR(ValidateModuleName(*name, "module name"));
  int removed = 0;
  for (const std::string& dir_name : ListDir(root_)) {
    auto module = ModuleOfEntryDir(dir_name);
    if (!module || (name && *module != *name)) continue;
    // The objects its library linked (decision 146d): a cleared module builds from its sources
    // again, not from the objects of the build being cleared.
    std::vector<std::string> object_keys;
    if (auto text = ReadFile(JoinPath(JoinPath(root_, dir_name), "manifest.json")); text.ok()) {
      if (auto manifest = ManifestFromJson(*text); manifest.ok()) object_keys = manifest->objects;
    }
    auto outcome = RemoveEntry(dir_name);
    if (!outcome.ok()) return outcome.error();
    if (*outcome != EntryRemoval::kRemoved) continue;
    ++removed;
    ObjectCache objects(root_);
    for (const std::string& key : object_keys) objects.Remove(key);
  }
  RemoveOrphans(name, /*failed_builds_too=*/true);
  // Shared objects belong to no module: clearing everything clears them too, and the
  // precompiled wrapper preludes jaxcc made before decision 128.
  if (!name) {
    (void)RemoveTree(JoinPath(root_, ".objects"));
    (void)RemoveTree(JoinPath(root_, ".pch"));
    // The warm index (pipeline/warm_index.h): its records only name entries, now all gone.
    (void)RemoveTree(JoinPath(root_, ".index"));
  }
  return removed;
}

}  // namespace jaxcc::cache

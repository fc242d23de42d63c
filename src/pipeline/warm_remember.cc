#include "pipeline/warm_remember.h"

#include "pipeline/warm_index.h"
#include "util/fs.h"

namespace jaxcc::pipeline {
namespace {

// Every directory under `root` (itself included): the watched stamps of installed headers.
void AddDirectoryTree(const std::string& root, WarmRecord& record) {
  FileInfo info = StatPath(root);
  if (!info.exists || !info.is_dir) return;
  record.watched.push_back({root, StampOf(root)});
  for (const std::string& name : ListDir(root)) {
    std::string child = JoinPath(root, name);
    if (StatPath(child).is_dir) AddDirectoryTree(child, record);
  }
}

// The system package manager's database, rewritten (by rename) by every install, upgrade and
// removal: one stat that stands for every watched directory it manages (decision 172).
std::string PackageDatabase() {
  for (const char* path : {"/var/lib/dpkg/status", "/var/lib/rpm/rpmdb.sqlite",
                           "/var/lib/rpm/Packages", "/var/lib/pacman/local"}) {
    if (StatPath(path).exists) return path;
  }
  return "";
}

// Whether the system package manager owns `dir`: under /usr, but not /usr/local.
bool PackageManaged(const std::string& dir) {
  return dir.rfind("/usr/", 0) == 0 && dir.rfind("/usr/local", 0) != 0;
}

// A warm load stats each watched directory; the compiler's and the C library's are about 20
// (decisions 171, 172), most of a warm load's stats. Those the package manager owns are watched
// through its database instead: while it holds still, nothing was installed or upgraded there;
// when it moved, the record is refused and the full path checks every directory of the manifest
// (and writes a record under the new stamp).
void WatchPackageDirectoriesThroughTheirDatabase(WarmRecord& record) {
  const std::string database = PackageDatabase();
  if (database.empty()) return;
  std::vector<cache::WatchedDirectory> kept;
  bool guarded = false;
  for (cache::WatchedDirectory& dir : record.entry.directories) {
    if (PackageManaged(dir.path) && dir.names_sha256 != cache::kDirectoryUnknown) {
      guarded = true;
    } else {
      kept.push_back(std::move(dir));
    }
  }
  record.entry.directories = std::move(kept);
  if (guarded) record.watched.push_back({database, StampOf(database)});
}

}  // namespace

void RememberWarm(const LoadRequest& request, const BuildEnvironment& env,
                  const std::vector<std::string>& fingerprints, const std::string& key,
                  const cache::EntryFacts& facts, const std::vector<argspec::FunctionSpec>& specs,
                  const toolchain::HostCompiler& compiler, const std::optional<CudaToolchain>& cuda,
                  const std::vector<std::string>& archs, const std::string& archs_source) {
  if (!request.build_directory.empty() || archs_source == "nvidia-smi") return;
  WarmRecord record;
  record.key = key;
  record.entry = facts;
  record.specs = specs;
  record.cuda_archs = archs;
  record.cuda_archs_source = archs_source;
  record.watched.push_back({compiler.path, StampOf(compiler.path)});
  if (cuda) record.watched.push_back({cuda->nvcc.path, StampOf(cuda->nvcc.path)});
  if (cuda && !cuda->shared_runtime.empty()) {
    record.watched.push_back({cuda->shared_runtime, StampOf(cuda->shared_runtime)});
  } else if (cuda && env.shared_cuda_runtime) {
    // No runtime wheel found: one installed into these folders later is seen (their mtime).
    for (const std::string& dir : env.cuda_runtime_dirs) {
      record.watched.push_back({dir, StampOf(dir)});
    }
  }
  WatchPackageDirectoriesThroughTheirDatabase(record);
  AddDirectoryTree(JoinPath(env.ffi_include_dir, "xla/ffi/api"), record);
  AddDirectoryTree(env.jaxcc_include_dir, record);
  // A path changed within the last seconds could change again within the same timestamp tick
  // unseen (the racy-timestamp problem the header digest also avoids): no record then.
  for (const WatchedPath& watched : record.watched) {
    if (!TimestampSettled(watched.stamp.mtime_ns)) return;
  }
  // The entry's manifest as it was when these facts were copied from it: a later build of the
  // same key (force_rebuild, or a rebuild after a stale dependency) publishes a new manifest,
  // and this record, which names the old library, must then be refused rather than serve it.
  // A manifest is only ever replaced by rename, never written in place, so its inode and stat
  // identify it even while its mtime is young (exempt from the settled rule above).
  const std::string manifest =
      JoinPath(cache::CacheDir(request.cache_dir).EntryDir(request.name, key), "manifest.json");
  record.watched.push_back({manifest, StampOf(manifest)});
  for (const std::string& fingerprint : fingerprints) {
    (void)WriteWarmRecord(WarmIndexPath(request.cache_dir, fingerprint), record);
  }
  (void)TrimWarmIndex(DirName(WarmIndexPath(request.cache_dir, fingerprints.front())));
}

}  // namespace jaxcc::pipeline

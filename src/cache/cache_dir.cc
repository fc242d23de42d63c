// CacheDir paths, lookup and build directories. Publishing lives in cache_publish.cc and clearing
// in cache_clear.cc.
#include "cache/cache_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cache/cache_error.h"
#include "cache/entry_names.h"
#include "cache/lock_mode.h"
#include "cache/ownership.h"
#include "cache/watched_directory.h"
#include "util/fs.h"
#include "util/host_identity.h"
#include "util/load_trace.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

std::optional<Entry> Miss(LookupMiss reason, LookupMiss* out) {
  if (out != nullptr) *out = reason;
  return std::nullopt;
}

bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// A dependency whose stamp (size, mtime, ctime, inode) matches the recorded one is accepted
// without reading it (the warm path): ctime moves on every write and cannot be set back, so a
// same-size edit that restores the mtime still changes the stamp. Otherwise its bytes decide, so a
// `touch` or a checkout that rewrites identical content is still a hit; `checked` then receives
// the new stamp if it held still while hashing and has settled (decision 146a), else no stamp.
bool DependencyUnchanged(const Dependency& dep, Dependency& checked) {
  checked = dep;
  FileInfo info = StatPath(dep.path);
  if (!info.exists || info.is_dir || info.size != dep.size) return false;
  if (dep.ctime_ns != 0 && info.mtime_ns == dep.mtime_ns && info.ctime_ns == dep.ctime_ns &&
      info.inode == dep.inode) {
    return true;
  }
  auto sha = Sha256FileHex(dep.path);
  if (!sha.ok() || *sha != dep.sha256) return false;
  checked = StampedDependency(dep.path, info, *sha);
  if (!(StampOf(StatPath(dep.path)) == StampOf(info))) checked.ctime_ns = 0;
  return true;
}

// Two stats on the warm path; the library's hash check follows, so only ownership and mode are
// new here.
Status CheckTrusted(const std::string& name, const std::string& dir, const std::string& library) {
  std::string fix = "Remove it with `python -m jaxcc cache clear " + name + "` and load again.";
  JAXCC_RETURN_IF_ERROR(CheckPrivatePath(dir, "the cache entry", fix));
  if (library.empty()) return OkStatus();
  return CheckPrivatePath(library, "the cached library", fix);
}

}  // namespace

namespace {

LibraryStamp StampOfLibrary(const std::string& path) { return StampOf(StatPath(path)); }

}  // namespace

Dependency StampedDependency(const std::string& path, const FileInfo& info,
                             const std::string& sha256) {
  Dependency dep{path, info.size, info.mtime_ns, sha256, info.ctime_ns, info.inode};
  // A stamp younger than the timestamp granularity of coarse file systems could be kept by a
  // second edit within the same tick: no stamp then, the bytes decide until it settles.
  // On a shared file system stat may answer from attributes cached before another host wrote the
  // file (decision 139): only the bytes are trusted there.
  // A future mtime (a clock ahead elsewhere) is judged by the ctime this host's kernel set.
  if (!TimestampSettled(info.ctime_ns) || !TimestampSettled(LastModifiedNs(info)) ||
      IsSharedFilesystem(FilesystemKind(path))) {
    dep.ctime_ns = 0;
  }
  return dep;
}

LibraryStamp StampOf(const FileInfo& info) {
  if (!info.exists) return {};
  return {true, info.size, info.mtime_ns, info.ctime_ns, info.inode};
}

EntryFacts FactsOf(const Manifest& manifest) {
  return {manifest.library_file, manifest.library_sha256, manifest.dependencies,
          manifest.shadows,      manifest.directories,    {}};
}

CacheDir::CacheDir(std::string root) : root_(AbsolutePath(root)) {}

std::string CacheDir::EntryDir(const std::string& name, const std::string& key) const {
  return JoinPath(root_, EntryDirName(name, key));
}

std::string CacheDir::LockPath(const std::string& name, const std::string& key) const {
  return JoinPath(JoinPath(root_, ".locks"), EntryDirName(name, key) + ".lock");
}

std::optional<Entry> CacheDir::Lookup(const std::string& name, const std::string& key,
                                      LookupMiss* miss_reason) const {
  if (!ValidateModuleName(name, "module name").ok() || key.size() < kEntryKeyChars) {
    return Miss(LookupMiss::kAbsent, miss_reason);
  }
  std::string dir = EntryDir(name, key);
  std::string manifest_path = JoinPath(dir, "manifest.json");
  auto text = ReadFile(manifest_path);
  if (!text.ok()) {
    // No manifest means "never completed"; one that exists but cannot be read is damage.
    return Miss(StatPath(manifest_path).exists ? LookupMiss::kDamaged : LookupMiss::kAbsent,
                miss_reason);
  }
  auto manifest = ManifestFromJson(*text);
  trace::Mark("manifest read + parse");
  // A different full key under the same 24-hex prefix is treated like damage: the rebuild
  // publishes over it.
  if (!manifest.ok() || manifest->key != key || manifest->module_name != name) {
    return Miss(LookupMiss::kDamaged, miss_reason);
  }
  auto verified = Verify(name, std::move(dir), FactsOf(*manifest), miss_reason);
  if (verified) verified->manifest = std::move(*manifest);
  return verified;
}

std::optional<Entry> CacheDir::LookupKnown(const std::string& name, const std::string& key,
                                           const EntryFacts& facts, LookupMiss* miss_reason) const {
  if (!ValidateModuleName(name, "module name").ok() || key.size() < kEntryKeyChars) {
    return Miss(LookupMiss::kAbsent, miss_reason);
  }
  auto entry = Verify(name, EntryDir(name, key), facts, miss_reason);
  if (entry) {
    // The caller holds `facts` and the checked dependencies and directories: the manifest gets
    // only what loading the entry reads, not a third copy of every dependency (a warm load).
    entry->manifest.key = key;
    entry->manifest.module_name = name;
    entry->manifest.library_file = facts.library_file;
    entry->manifest.library_sha256 = facts.library_sha256;
  }
  return entry;
}

// The one rule for accepting an entry, whoever read its facts: private to this user, the library
// hashing to the recorded digest, every tracked dependency unchanged.
std::optional<Entry> CacheDir::Verify(const std::string& name, std::string dir,
                                      const EntryFacts& facts, LookupMiss* miss_reason) const {
  if (!IsPlainFileName(facts.library_file)) return Miss(LookupMiss::kDamaged, miss_reason);
  Entry entry;
  entry.dir = std::move(dir);
  entry.library_path = JoinPath(entry.dir, facts.library_file);
  if (!CheckTrusted(name, entry.dir, entry.library_path).ok()) {
    return Miss(LookupMiss::kUnsafe, miss_reason);
  }
  trace::Mark("entry trust check");
  // A truncated or altered library must never reach dlopen. Its bytes are hashed unless the
  // caller holds a stamp under which they already hashed right and the file still has it
  // (decision 90): a CUDA library is megabytes (static cudart, fatbins), and hashing it was most
  // of a warm load. Any write, truncation, rename or chmod moves the ctime, which no user can
  // set back; the trust check above keeps other users out.
  const LibraryStamp before = StampOfLibrary(entry.library_path);
  if (facts.library_stamp.known && before == facts.library_stamp) {
    entry.library_stamp = before;
    entry.checked_stamp = before;
    trace::Mark("library stamp");
  } else {
    auto library_sha = Sha256FileHex(entry.library_path);
    if (!library_sha.ok() || *library_sha != facts.library_sha256) {
      return Miss(LookupMiss::kDamaged, miss_reason);
    }
    // Vouch for the stamp only if nothing moved while hashing, and not within the timestamp
    // granularity of coarse file systems (a change in the same tick would keep the stamp).
    const LibraryStamp after = StampOfLibrary(entry.library_path);
    if (after == before) entry.checked_stamp = after;
    if (after == before && TimestampSettled(after.ctime_ns)) {
      entry.library_stamp = after;
    }
    trace::Mark("library sha256");
  }
  entry.checked_dependencies.resize(facts.dependencies.size());
  for (size_t i = 0; i < facts.dependencies.size(); ++i) {
    if (!DependencyUnchanged(facts.dependencies[i], entry.checked_dependencies[i])) {
      return Miss(LookupMiss::kStaleDependency, miss_reason);
    }
  }
  // A header created on the include search ahead of a tracked one would be what the compiler
  // reads now (decision 146b): one stat each, the answer expected is "no such file".
  for (const std::string& shadow : facts.shadows) {
    if (StatPath(shadow).exists) return Miss(LookupMiss::kStaleDependency, miss_reason);
  }
  // The directories the tools searched or read from (decision 172): a header that appeared where
  // the preprocessor looked and found nothing, a package that replaced the compiler's headers.
  entry.checked_directories.resize(facts.directories.size());
  for (size_t i = 0; i < facts.directories.size(); ++i) {
    if (!DirectoryUnchanged(facts.directories[i], &entry.checked_directories[i])) {
      return Miss(LookupMiss::kStaleDependency, miss_reason);
    }
  }
  trace::Mark("dependency stats");
  return entry;
}

Status CacheDir::CheckEntryIsTrusted(const std::string& name, const std::string& key) const {
  std::string dir = EntryDir(name, key);
  auto text = ReadFile(JoinPath(dir, "manifest.json"));
  auto manifest = text.ok() ? ManifestFromJson(*text) : Result<Manifest>(text.error());
  std::string library;
  if (manifest.ok() && IsPlainFileName(manifest->library_file)) {
    library = JoinPath(dir, manifest->library_file);
  }
  return CheckTrusted(name, dir, library);
}

Result<std::string> CacheDir::MakeBuildDir(const std::string& name) const {
  JAXCC_RETURN_IF_ERROR(ValidateModuleName(name, "module name"));
  std::string build_root = JoinPath(root_, ".build");
  Status made = MakeDirs(build_root, 0700);
  if (!made.ok()) return CacheWriteError(root_, made.error());
  // The random part makes a clash unlikely; retry anyway rather than share a directory.
  for (int attempt = 0;; ++attempt) {
    std::string dir =
        JoinPath(build_root, BuildDirName(name, ::getpid(), ThisHostName(), RandomHex(8)));
    if (::mkdir(dir.c_str(), 0700) == 0) return dir;
    int err = errno;
    if (err != EEXIST || attempt == 4) {
      return CacheWriteError(
          root_, MakeError(ErrorKind::kIo, "cannot create " + dir + ": " + std::strerror(err)));
    }
  }
}

}  // namespace jaxcc::cache

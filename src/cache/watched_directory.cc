#include "cache/watched_directory.h"

#include <algorithm>
#include <string>
#include <utility>

#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

bool EndsWith(const std::string& name, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
}

// Names no include reads in practice that a project directory gains all the time: editors'
// files, and what scripts and notebooks beside the sources write (a module rebuilt every time a
// result is saved next to its kernel would be a cache in name only).
bool IgnoredName(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.back() == '~' || name == "4913") return true;
  static const char* const kNotIncluded[] = {
      ".py",  ".pyc", ".ipynb", ".npy", ".npz", ".pt",  ".pth", ".pkl", ".log", ".png",
      ".jpg", ".pdf", ".so",    ".o",   ".a",   ".whl", ".zip", ".gz",  ".h5",  ".swp"};
  for (const char* suffix : kNotIncluded) {
    if (EndsWith(name, suffix)) return true;
  }
  return false;
}

bool SameStamp(const FileInfo& info, const WatchedDirectory& watched) {
  return info.mtime_ns == watched.mtime_ns && info.ctime_ns == watched.ctime_ns &&
         info.inode == watched.inode;
}

}  // namespace

std::string DirectoryNamesDigest(const std::string& dir) {
  const FileInfo info = StatPath(dir);
  if (!info.exists || !info.is_dir) return "";
  Sha256Builder hash;
  hash.UpdateField("names");
  for (const std::string& name : ListDir(dir)) {  // sorted
    if (!IgnoredName(name)) hash.UpdateField(name);
  }
  return hash.FinishHex();
}

std::string DirectoryFilesDigest(const std::string& dir, const std::vector<std::string>& files) {
  Sha256Builder hash;
  hash.UpdateField("files");
  for (const std::string& name : files) {
    hash.UpdateField(name);
    auto sha = Sha256FileHex(JoinPath(dir, name));
    hash.UpdateField(sha.ok() ? *sha : "unreadable");
  }
  return hash.FinishHex();
}

WatchedDirectory WatchDirectory(const std::string& dir, bool names_matter,
                                std::vector<std::string> files, std::int64_t build_start_ns) {
  WatchedDirectory watched;
  watched.path = dir;
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  watched.files = std::move(files);
  const FileInfo info = StatPath(dir);
  if (!info.exists || !info.is_dir) {
    if (!watched.files.empty()) watched.names_sha256 = kDirectoryUnknown;
    return watched;
  }
  watched.mtime_ns = info.mtime_ns;
  watched.ctime_ns = info.ctime_ns;
  watched.inode = info.inode;
  if (std::max(LastModifiedNs(info), info.ctime_ns) >= build_start_ns) {
    watched.names_sha256 = kDirectoryUnknown;
    return watched;
  }
  if (names_matter) watched.names_sha256 = DirectoryNamesDigest(dir);
  if (!watched.files.empty()) watched.files_sha256 = DirectoryFilesDigest(dir, watched.files);
  // Read while it changed: what the build saw is not known.
  if (!SameStamp(StatPath(dir), watched)) watched.names_sha256 = kDirectoryUnknown;
  return watched;
}

bool DirectoryUnchanged(const WatchedDirectory& watched, WatchedDirectory* checked) {
  if (checked != nullptr) *checked = watched;
  if (watched.names_sha256 == kDirectoryUnknown) return false;
  const FileInfo info = StatPath(watched.path);
  if (!info.exists || !info.is_dir) return watched.inode == 0;
  if (SameStamp(info, watched)) return true;
  if (watched.inode == 0) return false;  // created since the build
  if (!watched.names_sha256.empty() && DirectoryNamesDigest(watched.path) != watched.names_sha256) {
    return false;
  }
  if (!watched.files_sha256.empty()) {
    if (watched.files.empty()) return false;  // the warm index's copy: the full path decides
    if (DirectoryFilesDigest(watched.path, watched.files) != watched.files_sha256) return false;
  }
  if (checked != nullptr && TimestampSettled(std::max(info.mtime_ns, info.ctime_ns)) &&
      SameStamp(
          StatPath(watched.path),
          WatchedDirectory{watched.path, info.mtime_ns, info.ctime_ns, info.inode, "", {}, ""})) {
    checked->mtime_ns = info.mtime_ns;
    checked->ctime_ns = info.ctime_ns;
    checked->inode = info.inode;
  }
  return true;
}

bool WatchSeesNewFile(const WatchedDirectory& watched, const std::string& path) {
  if (DirName(path) != watched.path) return false;
  if (watched.inode == 0) return watched.names_sha256.empty();  // missing: creating it is a change
  return !watched.names_sha256.empty() && watched.names_sha256 != kDirectoryUnknown &&
         !IgnoredName(BaseName(path));
}

std::vector<std::string> ShadowsNoWatchSees(std::vector<std::string> shadows,
                                            const std::vector<WatchedDirectory>& directories) {
  std::vector<std::string> unseen;
  for (std::string& shadow : shadows) {
    const bool seen =
        std::any_of(directories.begin(), directories.end(),
                    [&](const WatchedDirectory& dir) { return WatchSeesNewFile(dir, shadow); });
    if (!seen) unseen.push_back(std::move(shadow));
  }
  return unseen;
}

}  // namespace jaxcc::cache

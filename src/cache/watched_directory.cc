#include "cache/watched_directory.h"

#include <algorithm>

#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

bool IgnoredName(const std::string& name) {
  return name.empty() || name[0] == '.' || name.back() == '~' || name == "4913";
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

}  // namespace jaxcc::cache

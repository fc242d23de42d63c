#include "cache/lock_mode.h"

#include <sys/vfs.h>

#include <cstdlib>

#include "util/fs.h"

namespace jaxcc::cache {
namespace {

struct Magic {
  unsigned long value;
  const char* kind;
};

// statfs f_type values (linux/magic.h and the filesystems' own headers).
constexpr Magic kMagics[] = {
    {0x6969, "nfs"},        {0xFF534D42, "cifs"}, {0xFE534D42, "smb2"}, {0x517B, "smb"},
    {0x0BD00BD0, "lustre"}, {0x47504653, "gpfs"}, {0x00C36400, "ceph"}, {0x5346414F, "afs"},
    {0x01021997, "9p"},     {0x65735546, "fuse"},
};

}  // namespace

Result<std::string> LockSetting() {
  const char* text = std::getenv("JAXCC_CACHE_LOCK");
  std::string value = text == nullptr ? "" : text;
  if (value.empty()) return std::string("auto");
  if (value == "auto" || value == "flock" || value == "lockfile") return value;
  return MakeError(ErrorKind::kSpec,
                   "JAXCC_CACHE_LOCK='" + value +
                       "' is not a lock mode: use 'flock' (kernel locks, for a cache on a local "
                       "disk), 'lockfile' (lock files, for a cache shared by several hosts over "
                       "NFS) or 'auto' (the default: lockfile on a network filesystem, else "
                       "flock), or unset it");
}

std::string FilesystemKind(const std::string& path) {
  std::string probe = AbsolutePath(path);
  while (true) {
    struct statfs info;
    if (::statfs(probe.c_str(), &info) == 0) {
      for (const Magic& magic : kMagics) {
        if (static_cast<unsigned long>(info.f_type) == magic.value) return magic.kind;
      }
      return "local";
    }
    if (probe == "/" || probe.empty()) return "local";
    probe = DirName(probe);
  }
}

bool IsSharedFilesystem(const std::string& kind) {
  // FUSE may be local (e.g. a container overlay) or remote (sshfs); lock files work on both.
  return kind != "local";
}

Result<LockMode> ResolveLockMode(const std::string& dir) {
  auto setting = LockSetting();
  if (!setting.ok()) return setting.error();
  if (*setting == "flock") return LockMode::kFlock;
  if (*setting == "lockfile") return LockMode::kLockfile;
  return IsSharedFilesystem(FilesystemKind(dir)) ? LockMode::kLockfile : LockMode::kFlock;
}

Result<std::string> DescribeLockMode(const std::string& dir) {
  auto setting = LockSetting();
  if (!setting.ok()) return setting.error();
  if (*setting != "auto") return *setting + " ($JAXCC_CACHE_LOCK)";
  std::string kind = FilesystemKind(dir);
  std::string where = kind == "local" ? "local filesystem" : kind + " filesystem";
  return std::string(IsSharedFilesystem(kind) ? "lockfile" : "flock") + " (auto: " + where + ")";
}

}  // namespace jaxcc::cache

// How entry locks are taken: flock(2), which the kernel drops when its holder dies but which a
// network filesystem may keep per node, or lock files created with link(2), which every host of an
// NFS mount sees. $JAXCC_CACHE_LOCK chooses; unset (or "auto") picks by the cache's filesystem.
#pragma once

#include <string>

#include "util/result.h"

namespace jaxcc::cache {

enum class LockMode { kFlock, kLockfile };

/// $JAXCC_CACHE_LOCK as written: "auto" when unset or empty, else "flock", "lockfile" or "auto";
/// anything else is ErrorKind::kSpec naming the value and the accepted ones.
Result<std::string> LockSetting();

/// The filesystem `path` (or its nearest existing parent) lives on, as statfs names it: "nfs",
/// "cifs", "smb2", "lustre", "gpfs", "ceph", "afs", "9p", "fuse" or "local".
std::string FilesystemKind(const std::string& path);

/// True for filesystems shared between hosts, where flock may exclude only processes of one node.
bool IsSharedFilesystem(const std::string& kind);

/// The mode for locks under `dir`: the setting, or for "auto" lockfile on a shared filesystem and
/// flock elsewhere.
Result<LockMode> ResolveLockMode(const std::string& dir);

/// For `jaxcc doctor`: e.g. "flock (auto: local filesystem)" or "lockfile ($JAXCC_CACHE_LOCK)".
Result<std::string> DescribeLockMode(const std::string& dir);

}  // namespace jaxcc::cache

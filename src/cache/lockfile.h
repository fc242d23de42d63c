// Lock files for caches shared between hosts (FileLock's lockfile mode). A lock is a file whose
// text names its holder; it is created whole under a temporary name and then link(2)ed to the lock
// name, which fails if the name exists: an atomic create-if-absent that NFS honours across hosts.
#pragma once

#include <string>

namespace jaxcc::cache::lockfile {

/// The text a new holder writes: host, boot id, pid and a random nonce, one "key=value" a line.
std::string MakeToken();

/// One attempt: 1 = the lock file at `path` now holds `token`, 0 = another holder has it, -1 =
/// error (errno set). A holder judged stale is broken first (see docs/cache.md): one of this host
/// whose boot id differs or whose pid is gone, or, whatever its host, one older than
/// `foreign_stale_seconds` by the filesystem's own clock.
int TryLock(const std::string& path, const std::string& token, double foreign_stale_seconds);

/// Removes the lock file if it still holds `token`.
void Unlock(const std::string& path, const std::string& token);

/// "pid 12 on host a (this host)" and the like, for timeout messages.
std::string DescribeHolder(const std::string& path);

}  // namespace jaxcc::cache::lockfile

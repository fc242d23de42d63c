// Who this process is on a cache that several hosts share: host name, boot id and pid. Shared
// filesystems (NFS) see every host's files, so temporary names and lock files carry all three.
#pragma once

#include <sys/types.h>

#include <string>

namespace jaxcc {

struct HostIdentity {
  std::string host;     ///< gethostname(), made file-name safe (letters, digits, '_', '.')
  std::string boot_id;  ///< /proc/sys/kernel/random/boot_id: changes on every reboot
  pid_t pid = 0;
};

/// The identity of this process. Tests simulate other hosts with $JAXCC_TEST_HOST and
/// $JAXCC_TEST_BOOT_ID, which replace the host name and boot id (nothing else reads them).
HostIdentity ThisHost();

/// The host name part of ThisHost() alone (no file read).
std::string ThisHostName();

/// `text` with every character other than letters, digits, '_' and '.' replaced by '_', at most
/// 64 characters, never empty: safe inside file names that use '-' and '@' as separators.
std::string SafeHostName(const std::string& text);

/// "<host>-<pid>-<8 random hex>": the unique part of every temporary name the cache creates, so
/// two hosts whose processes share a pid never pick the same name.
std::string UniqueTempTag();

}  // namespace jaxcc

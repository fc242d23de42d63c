// Small POSIX filesystem helpers that report failures as jaxcc::Error (never throw).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace jaxcc {

struct FileInfo {
  bool exists = false;
  bool is_dir = false;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;  ///< status change: any write, rename or chmod moves it
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  uid_t owner = 0;
  mode_t mode = 0;
};

/// stat(2); a missing path is {exists=false}, not an error.
FileInfo StatPath(const std::string& path);

/// fstat(2) of an open descriptor, as StatPath; {exists=false} when it fails.
FileInfo StatOpenFile(int fd);

/// True when a file timestamp lies at least 3 s in the past by the wall clock (nanoseconds): a
/// change within a coarse file system's timestamp tick could follow unseen, so a stamp younger
/// than that vouches for nothing (the racy-timestamp rule of decisions 84 and 90; its one owner).
bool TimestampSettled(std::int64_t stamp_ns);

/// The wall clock now, in nanoseconds since the epoch: the clock file timestamps are compared with.
std::int64_t WallClockNs();

/// When a file's content last changed as far as its timestamps can tell: its mtime, unless that
/// lies in the future (a tarball or checkout from a host whose clock runs ahead, an NFS server
/// ahead of this client), where its ctime decides: the kernel sets it at every write and nobody
/// can set it back or ahead. A future mtime never reads as "changed just now" for ever.
std::int64_t LastModifiedNs(const FileInfo& info);

/// Removes the files of `dir` whose names `is_temporary` accepts and whose mtime is more than
/// `max_age_ns` in the past: what writers that died between creating and renaming them left
/// (a live writer's file lives for microseconds). Returns how many it removed.
int RemoveStaleTemporaries(const std::string& dir, std::int64_t max_age_ns,
                           const std::function<bool(const std::string&)>& is_temporary);

Result<std::string> ReadFile(const std::string& path);

/// Reads a file in 64 KiB chunks, handing each to `on_chunk` (for hashing without holding the
/// whole file). Fails with ErrorKind::kIo naming the path.
Status ReadFileChunks(const std::string& path,
                      const std::function<void(std::string_view)>& on_chunk);

/// Whether an atomic write waits for the disk. kVerifiedOnRead is for files every reader checks
/// against a digest before use (the object cache): after a crash a lost or torn write is then a
/// miss, never a wrong result, so the fsync (a few ms each under load) buys nothing.
enum class Durability { kSynced, kVerifiedOnRead };

/// Writes to `<path>.tmp-<host>-<pid>-<random>` in the same directory, fsyncs (unless the file is
/// verified on read), then rename(2)s over `path`, so readers see the old file or the new one,
/// never a partial one.
Status WriteFileAtomic(const std::string& path, std::string_view contents, mode_t mode = 0644,
                       Durability durability = Durability::kSynced);

/// Plain (non-atomic) write, for files inside private build directories.
Status WriteFile(const std::string& path, std::string_view contents);

/// mkdir -p with `mode` for every directory it creates.
Status MakeDirs(const std::string& path, mode_t mode = 0755);

/// rm -rf; a missing path is fine. Never follows symlinks out of the tree.
Status RemoveTree(const std::string& path);

/// Names (not paths) in a directory, sorted; a missing directory gives an empty list.
std::vector<std::string> ListDir(const std::string& path);

std::string JoinPath(const std::string& a, const std::string& b);
std::string DirName(const std::string& path);
std::string BaseName(const std::string& path);
/// Absolute, with "." and ".." removed lexically (no symlink resolution).
std::string AbsolutePath(const std::string& path);

/// mkdtemp under $TMPDIR (or /tmp): "<prefix>-XXXXXX", mode 0700.
Result<std::string> MakeTempDir(const std::string& prefix);

/// A short random hex string for unique temporary names.
std::string RandomHex(int n_chars);

}  // namespace jaxcc

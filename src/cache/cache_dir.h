// The on-disk cache: one directory per (module name, key), published atomically, guarded by locks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/manifest.h"
#include "util/fs.h"
#include "util/result.h"

namespace jaxcc::cache {

/// A published, verified cache entry.
/// The stat of a library whose bytes were hashed and matched, taken before and after hashing.
/// While a later stat still equals it, the bytes are the ones that matched (see Verify).
struct LibraryStamp {
  bool known = false;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  bool operator==(const LibraryStamp& other) const {
    return known == other.known && size == other.size && mtime_ns == other.mtime_ns &&
           ctime_ns == other.ctime_ns && inode == other.inode;
  }
};

/// The stamp of a file whose status is `info` (unknown when it does not exist): the one rule for
/// turning a stat into a stamp, for a path (the lookup) and an open descriptor (a pin) alike.
LibraryStamp StampOf(const FileInfo& info);

/// A dependency on `path`, whose bytes hash to `sha256`, stamped with `info`: the one rule for
/// stamping a header (decision 146a), at the build and when a lookup re-hashed it. A stamp that
/// has not settled (TimestampSettled) is left out (ctime_ns 0): the bytes decide until it has.
Dependency StampedDependency(const std::string& path, const FileInfo& info,
                             const std::string& sha256);

struct Entry {
  std::string dir;           ///< <root>/<name>-<key prefix>
  std::string library_path;  ///< absolute path of the shared library inside `dir`
  Manifest manifest;
  LibraryStamp library_stamp;  ///< set when this lookup's hash (or a valid stamp) vouched for it
  /// The stamp the library had while this lookup hashed it (or matched a stamp), settled or not:
  /// good for holding that very file open right now (decision 138), not for a later process.
  LibraryStamp checked_stamp;
  /// The dependencies as checked: a header whose stamp had moved but whose bytes still hash
  /// right carries its new stamp here when that stamp has settled (decision 146a), so the
  /// caller can keep it and later lookups compare stamps instead of hashing again.
  std::vector<Dependency> checked_dependencies;
  /// The watched directories as checked: a directory whose stamp moved while what matters in it
  /// held carries its new stamp here, like checked_dependencies.
  std::vector<WatchedDirectory> checked_directories;
};

/// What a lookup checks an entry against. The manifest holds them; the warm index keeps a copy
/// taken from a verified manifest, so a warm load need not read and parse the manifest again.
struct EntryFacts {
  std::string library_file;    ///< file name inside the entry directory
  std::string library_sha256;  ///< the library's bytes must hash to this before dlopen
  std::vector<Dependency> dependencies;
  /// Paths that must still not exist (Manifest::shadows): one stat each.
  std::vector<std::string> shadows;
  /// Directories that must hold what they held (Manifest::directories): one stat each.
  std::vector<WatchedDirectory> directories;
  /// A stamp under which the library last hashed to library_sha256 (the warm index keeps it);
  /// unknown in a manifest, so the full path always hashes.
  LibraryStamp library_stamp;
};

/// The facts a manifest states about its entry.
EntryFacts FactsOf(const Manifest& manifest);

/// What RemoveEntry did.
enum class EntryRemoval { kRemoved, kBusy, kNotAnEntry };

/// Why a lookup did not return an entry (for the jaxcc logger).
/// kUnsafe: the entry or its library belongs to another user or is writable by others; the caller
/// must refuse it (CheckEntryIsTrusted says why) rather than rebuild over it.
enum class LookupMiss { kAbsent, kDamaged, kStaleDependency, kUnsafe };

class CacheDir {
 public:
  /// Remembers `root`; creates nothing on disk until something is published or a build starts.
  explicit CacheDir(std::string root);

  const std::string& root() const { return root_; }

  /// Directory of the entry for (name, key). Name must already be validated.
  std::string EntryDir(const std::string& name, const std::string& key) const;

  /// Reads the manifest and checks the library's SHA-256 against it; checks recorded dependencies
  /// by their stamp (size, mtime, ctime, inode) and re-hashes only those whose stamp changed;
  /// checks that no recorded shadow path exists. Any mismatch is a miss, never an error;
  /// `miss_reason` (if given) says which.
  std::optional<Entry> Lookup(const std::string& name, const std::string& key,
                              LookupMiss* miss_reason = nullptr) const;

  /// The same checks as Lookup (trust, library hash, dependencies) against facts the caller
  /// already holds instead of the manifest's; the returned entry's manifest holds the key, name
  /// and library of those facts (not their dependencies: the caller has them, and the entry's
  /// checked_dependencies and checked_directories say how they were found).
  std::optional<Entry> LookupKnown(const std::string& name, const std::string& key,
                                   const EntryFacts& facts,
                                   LookupMiss* miss_reason = nullptr) const;

  /// OK when the entry directory for (name, key) and the library inside it are this user's own
  /// and writable by nobody else; otherwise a CacheError with the fix.
  Status CheckEntryIsTrusted(const std::string& name, const std::string& key) const;

  /// Creates the root (mode 0700) if needed and a fresh private build directory
  /// <root>/.build/<name>-<pid>-<random>/.
  Result<std::string> MakeBuildDir(const std::string& name) const;

  /// Copies `built_library` into the entry (temp file + rename), fills in library hash and file
  /// name in `manifest`, then writes the manifest last (its presence marks the entry complete).
  Result<Entry> Publish(const std::string& name, const std::string& key,
                        const std::string& built_library, Manifest manifest) const;

  /// Removes entries (all, or those of one module name); skips entries whose lock is held by a
  /// live builder. Returns how many entries were removed.
  Result<int> Clear(const std::optional<std::string>& name) const;

  /// Removes one entry directory (by its name under the root) unless a live builder holds its
  /// lock. Atomic for readers: the directory is renamed away before it is deleted.
  Result<EntryRemoval> RemoveEntry(const std::string& dir_name) const;

  /// Removes private build directories whose process is gone (and, if asked, kept failed builds
  /// nobody is replacing); returns how many. Best effort: never fails.
  int RemoveOrphans(const std::optional<std::string>& name, bool failed_builds_too) const;

  /// Path of the lock file for (name, key): <root>/.locks/<name>-<key prefix>.lock
  std::string LockPath(const std::string& name, const std::string& key) const;

 private:
  std::optional<Entry> Verify(const std::string& name, std::string dir, const EntryFacts& facts,
                              LookupMiss* miss_reason) const;

  std::string root_;
};

}  // namespace jaxcc::cache

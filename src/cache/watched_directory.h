// Watching a directory for what a build could read differently (decision 172): the names in a
// search directory, where a header the preprocessor probed and missed may appear, and the bytes
// of the compiler's own headers a build read from a directory, judged by its stamp first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/manifest.h"

namespace jaxcc::cache {

/// SHA-256 of the sorted names in `dir` that a build could look up, "" for a missing directory.
/// Left out, because no include reads them in practice and editors, scripts and notebooks add
/// them beside sources all the time: hidden names (swap and lock files, `.git`), names ending
/// in '~', vim's write test "4913", and Python, notebook, data, image, log, archive, object and
/// library files (`.py`, `.ipynb`, `.npy`, `.pt`, `.log`, `.png`, `.so`, `.o`, `.a`, ...).
std::string DirectoryNamesDigest(const std::string& dir);

/// SHA-256 over each of `files` (names in `dir`, sorted) and its bytes; a missing or unreadable
/// file counts as such, so it never matches a digest taken while it was there.
std::string DirectoryFilesDigest(const std::string& dir, const std::vector<std::string>& files);

/// `dir` as the build leaves it: its stamp, the digest of its names when `names_matter`, and the
/// digest of `files` (names in it the build read) when there are any. A directory that changed
/// at or after `build_start_ns` gets kDirectoryUnknown: what the build saw of it is not known, so
/// the next lookup builds again. A missing directory is watched too (all zero): creating it is a
/// change.
WatchedDirectory WatchDirectory(const std::string& dir, bool names_matter,
                                std::vector<std::string> files, std::int64_t build_start_ns);

/// Whether `dir` still holds what `watched` says: one stat while its stamp is unchanged; else a
/// listing (names) and the files' bytes (files). A files digest without the files (the warm
/// index's copy) cannot be checked: false. `checked`, if given, receives `watched` with the new
/// stamp when the contents still match and the stamp has settled.
bool DirectoryUnchanged(const WatchedDirectory& watched, WatchedDirectory* checked = nullptr);

/// Whether `watched` alone sees a file appear at `path`: `path` is a name directly in it that
/// its names digest counts (not an ignored name), or the directory was missing at the build (its
/// creation is a change). A shadow path so covered needs no stat of its own on the warm path.
bool WatchSeesNewFile(const WatchedDirectory& watched, const std::string& path);

/// The shadow paths no directory in `directories` sees (WatchSeesNewFile): the ones the warm path
/// must still stat, one each (decision 250).
std::vector<std::string> ShadowsNoWatchSees(std::vector<std::string> shadows,
                                            const std::vector<WatchedDirectory>& directories);

}  // namespace jaxcc::cache

// What a finished build read, and whether an entry may vouch for it (decision 146): the user's
// headers from the compiler's depfiles, each stamped and hashed; the places on the include search
// where a new file would shadow one of them; and whether any of them changed while the build ran.
// Only a build whose inputs held still is published, so a manifest or an object never records a
// header's text that the compiler did not read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/manifest.h"
#include "pipeline/load_request.h"

namespace jaxcc::pipeline {

/// The user's include search, in the compiler's order: `quote_dirs` (-iquote) are searched for
/// `#include "..."` after the including file's own directory, then `dirs` (-I: the source
/// directories, extra_include_paths, then every -I of extra_cflags and of the CUDA cflags) for
/// both forms. jaxcc's and XLA's headers are left out: the key's header digest and the warm
/// index's directory stamps cover them.
struct IncludeSearch {
  std::vector<std::string> quote_dirs;
  std::vector<std::string> dirs;
  /// Directories of the loaded source files: a quoted include looks there first.
  std::vector<std::string> includer_dirs;
  /// The loaded source files themselves (absolute labels): never headers to track, their text is
  /// in the key, though nvcc's depfiles name them (for the generated unit's #line).
  std::vector<std::string> source_files;
  /// The compiler's own directories (BuildWorld::toolchain_dirs): a file read from under one is
  /// watched through its directory (cache::WatchedDirectory), not by a stat of its own.
  std::vector<std::string> toolchain_dirs;
  /// Directories watched by their names (BuildWorld::search_dirs); the directory of every file
  /// the build read is added to them.
  std::vector<std::string> search_dirs;
};

IncludeSearch UserIncludeSearch(const LoadRequest& request);

/// Every path where a file, if created, would be found before one of `headers` (absolute paths of
/// the tracked headers) by some include that could have named it: for each way of reading a
/// header as `<search dir>/<name>`, `<earlier dir>/<name>` for every directory searched before
/// that one (the directories of the including files, which are the headers' own and the sources',
/// first for quoted includes). The headers themselves are left out; sorted, no duplicates.
std::vector<std::string> ShadowCandidates(const std::vector<std::string>& headers,
                                          const IncludeSearch& search);

/// What a build read, as an entry records it.
struct BuildInputs {
  std::vector<cache::Dependency> dependencies;
  /// The search directories and the compiler's own directories the build read from (decision
  /// 172): the names in the first, the bytes of the files read from the second.
  std::vector<cache::WatchedDirectory> directories;
  /// Files read from the compiler's own directories (absolute), watched through `directories`.
  std::vector<std::string> toolchain_files;
  std::vector<std::string> shadows;  ///< candidates that did not exist after the build (sorted)
  /// "" when every input held still; else a sentence naming a file that changed (or appeared)
  /// while the build ran: the build must not be published, nor its objects stored.
  std::string changed;
};

/// Whether `path` (absolute) is a file the key does not cover: not in the build directory, not
/// jaxcc's or XLA's, not the CUDA toolkit's, not one of the sources. The compiler's own headers
/// and the C library's count (`-MD`, decision 171), and so do the archives the link read.
bool IsUserHeader(const std::string& path, const std::string& build_dir,
                  const BuildEnvironment& env, const std::string& cuda_home,
                  const IncludeSearch& search);

/// The start of a build, on the clock file timestamps are taken from: the kernel's coarse
/// real-time clock (a tick of 1-10 ms behind the wall clock), read once it has ticked past the
/// moment of the call. Every write after the return gets a timestamp not older than it, every
/// write before the call an older one.
std::int64_t BuildStartNs();

/// How long before the build's start a change still counts as "during the build" on a shared
/// file system, whose server sets the timestamps by its own clock: the racy-timestamp window.
inline constexpr std::int64_t kSharedClockSlackNs = 3'000'000'000;

/// Whether `path` lies under one of `search.toolchain_dirs`.
bool IsToolchainFile(const std::string& path, const IncludeSearch& search);

/// Stamps and hashes every user header of `paths` (the depfiles' prerequisites and the files the
/// link read) after a build
/// that started at `build_start_ns` (BuildStartNs), and records the absent shadow candidates.
/// A header whose mtime or ctime is not older than the start (on a shared file system, less
/// kSharedClockSlackNs), that moved
/// while it was hashed, or a shadow candidate that appeared since the start, sets `changed`.
BuildInputs StampBuildInputs(const std::vector<std::string>& paths, const std::string& build_dir,
                             const BuildEnvironment& env, const std::string& cuda_home,
                             const IncludeSearch& search, std::int64_t build_start_ns);

}  // namespace jaxcc::pipeline

#include "pipeline/build_inputs.h"

#include <time.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "cache/cache_dir.h"
#include "cache/lock_mode.h"
#include "cache/watched_directory.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::pipeline {
namespace {

bool StartsWith(const std::string& text, const std::string& prefix) {
  return !prefix.empty() && text.compare(0, prefix.size(), prefix) == 0;
}

void AppendUnique(std::vector<std::string>& to, const std::string& dir) {
  if (dir.empty()) return;
  std::string absolute = AbsolutePath(dir);
  if (std::find(to.begin(), to.end(), absolute) == to.end()) to.push_back(absolute);
}

// -I and -iquote of a flag list, both spellings ("-Idir", "-I dir"); nvcc's --include-path too.
void AddIncludeFlags(const std::vector<std::string>& flags, IncludeSearch& search) {
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& flag = flags[i];
    const bool has_next = i + 1 < flags.size();
    if (flag == "-I" || flag == "--include-path") {
      if (has_next) AppendUnique(search.dirs, flags[++i]);
    } else if (flag == "-iquote") {
      if (has_next) AppendUnique(search.quote_dirs, flags[++i]);
    } else if (StartsWith(flag, "--include-path=")) {
      AppendUnique(search.dirs, flag.substr(15));
    } else if (StartsWith(flag, "-iquote")) {
      AppendUnique(search.quote_dirs, flag.substr(7));
    } else if (StartsWith(flag, "-I")) {
      AppendUnique(search.dirs, flag.substr(2));
    }
  }
}

// `path` as `<dir>/<name>`: the name, or "" when `path` is not under `dir`.
std::string NameUnder(const std::string& path, const std::string& dir) {
  std::string prefix = dir == "/" ? dir : dir + "/";
  return StartsWith(path, prefix) && path.size() > prefix.size() ? path.substr(prefix.size()) : "";
}

// The newest of a file's two timestamps: any write moves both, a chmod or rename at least ctime.
// An mtime in the future (a checkout from a host whose clock runs ahead) says nothing about when
// the file changed here: the ctime this host's kernel set does (LastModifiedNs).
std::int64_t LastChange(const FileInfo& info) {
  return std::max(LastModifiedNs(info), info.ctime_ns);
}

std::int64_t ClockSlack(const std::string& path) {
  return cache::IsSharedFilesystem(cache::FilesystemKind(path)) ? kSharedClockSlackNs : 0;
}

}  // namespace

namespace {

std::int64_t CoarseNowNs() {
  struct timespec now;
  if (::clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0) return -1;
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

std::int64_t BuildStartNs() {
  // A file's timestamps come from the coarse clock (the last tick), or, on kernels with
  // fine-grained ("multigrain") timestamps for files whose times were just read, from the precise
  // time of the write, which can be ahead of the coarse clock by more than a tick (1.4 ms
  // measured on Linux 6.18; a header the caller had stat'ed and then saved was taken for one
  // changed during the build, and the module built twice). So the start is the first coarse tick
  // past the precise time of this call: whatever was written before the call is older than the
  // start, and whatever is written after it (coarse or precise) is not. A few ms at most, once
  // per build.
  const std::int64_t called = WallClockNs();
  if (CoarseNowNs() < 0) return called - 20'000'000;
  for (int waited_ms = 0; waited_ms < 50; ++waited_ms) {
    const std::int64_t now = CoarseNowNs();
    if (now > called) return now;
    struct timespec one_ms = {0, 1'000'000};
    ::nanosleep(&one_ms, nullptr);
  }
  return CoarseNowNs();  // a clock that does not move: the same tick counts as during the build
}

IncludeSearch UserIncludeSearch(const LoadRequest& request) {
  IncludeSearch search;
  for (const std::string& dir : request.source_dirs) {
    AppendUnique(search.dirs, dir);
    AppendUnique(search.includer_dirs, dir);
  }
  for (const auto& source : request.sources) {
    if (!source.label.empty() && source.label[0] == '/') {
      search.source_files.push_back(AbsolutePath(source.label));
    }
  }
  for (const std::string& dir : request.extra_include_paths) AppendUnique(search.dirs, dir);
  AddIncludeFlags(request.extra_cflags, search);
  AddIncludeFlags(request.cuda.extra_cflags, search);
  return search;
}

std::vector<std::string> ShadowCandidates(const std::vector<std::string>& headers,
                                          const IncludeSearch& search) {
  // Any tracked header may be the one that includes another, so every header's directory is
  // searched first by some quoted include, as is every source's.
  std::vector<std::string> includers = search.includer_dirs;
  for (const std::string& header : headers) AppendUnique(includers, DirName(header));
  // The whole search order for quoted includes; angle includes search a suffix of it, so the
  // candidates below are a superset of theirs.
  std::vector<std::string> order = includers;
  for (const std::string& dir : search.quote_dirs) order.push_back(dir);
  for (const std::string& dir : search.dirs) order.push_back(dir);

  const std::set<std::string> tracked(headers.begin(), headers.end());
  std::set<std::string> candidates;
  for (const std::string& header : headers) {
    for (size_t k = 0; k < order.size(); ++k) {
      const std::string name = NameUnder(header, order[k]);
      if (name.empty()) continue;
      // Found as `name` in order[k]: the same name in any directory searched earlier wins.
      const bool is_includer_dir = k < includers.size();
      const size_t earlier = is_includer_dir ? 0 : k;
      for (size_t j = 0; j < earlier; ++j) {
        std::string candidate = AbsolutePath(JoinPath(order[j], name));
        if (candidate != header && tracked.count(candidate) == 0) candidates.insert(candidate);
      }
    }
  }
  return {candidates.begin(), candidates.end()};
}

bool IsToolchainFile(const std::string& path, const IncludeSearch& search) {
  for (const std::string& dir : search.toolchain_dirs) {
    if (StartsWith(path, dir == "/" ? dir : dir + "/")) return true;
  }
  return false;
}

bool IsUserHeader(const std::string& path, const std::string& build_dir,
                  const BuildEnvironment& env, const std::string& cuda_home,
                  const IncludeSearch& search) {
  const auto& sources = search.source_files;
  return std::find(sources.begin(), sources.end(), path) == sources.end() &&
         !(StartsWith(path, AbsolutePath(build_dir) + "/") ||
           StartsWith(path, env.jaxcc_include_dir + "/") ||
           StartsWith(path, env.ffi_include_dir + "/") ||
           (!cuda_home.empty() && StartsWith(path, AbsolutePath(cuda_home) + "/")));
}

BuildInputs StampBuildInputs(const std::vector<std::string>& paths, const std::string& build_dir,
                             const BuildEnvironment& env, const std::string& cuda_home,
                             const IncludeSearch& search, std::int64_t build_start_ns) {
  BuildInputs inputs;
  std::vector<std::string> headers;
  // Directory -> the files read from it, for the compiler's own directories (decision 171).
  std::map<std::string, std::vector<std::string>> toolchain_reads;
  for (const std::string& given : paths) {
    const std::string path = AbsolutePath(given);
    if (!IsUserHeader(path, build_dir, env, cuda_home, search)) continue;
    if (IsToolchainFile(path, search)) {
      std::vector<std::string>& names = toolchain_reads[DirName(path)];
      if (std::find(names.begin(), names.end(), BaseName(path)) == names.end()) {
        names.push_back(BaseName(path));
        inputs.toolchain_files.push_back(path);
      }
      continue;
    }
    if (std::find(headers.begin(), headers.end(), path) != headers.end()) continue;
    headers.push_back(path);
    // ccache refuses a result when an included file is newer than the compile's start; this is
    // stricter: ctime too (no user can set it back), the start read on the file clock so the
    // same tick counts, the stamp held still around the hash, and a header gone since the
    // compile read it.
    const FileInfo before = StatPath(path);
    std::optional<std::string> sha;
    if (before.exists) {
      if (auto hashed = Sha256FileHex(path); hashed.ok()) sha = std::move(*hashed);
    }
    const FileInfo after = StatPath(path);
    if (!sha || !(cache::StampOf(before) == cache::StampOf(after))) {
      if (inputs.changed.empty()) inputs.changed = path + " changed while the module compiled";
      continue;
    }
    if (LastChange(before) >= build_start_ns - ClockSlack(path) && inputs.changed.empty()) {
      inputs.changed = path + " changed while the module compiled";
    }
    inputs.dependencies.push_back(cache::StampedDependency(path, before, *sha));
  }
  for (std::string& candidate : ShadowCandidates(headers, search)) {
    const FileInfo info = StatPath(candidate);
    if (!info.exists) {
      inputs.shadows.push_back(std::move(candidate));
    } else if (LastChange(info) >= build_start_ns - ClockSlack(candidate) &&
               inputs.changed.empty()) {
      // An older file here existed when the compiler searched and was passed over (another
      // reading of the name); a new one may have been read instead of the header it shadows.
      inputs.changed = candidate + " appeared while the module compiled";
    }
  }
  // The directories searched, and those of every file read: a name the preprocessor probed
  // there and missed, created later, is another build; so is a package's new file among the
  // compiler's own ones (decision 172).
  std::vector<std::string> by_names = search.search_dirs;
  for (const std::string& dir : search.includer_dirs) AppendUnique(by_names, dir);
  for (const std::string& dir : search.quote_dirs) AppendUnique(by_names, dir);
  for (const std::string& dir : search.dirs) AppendUnique(by_names, dir);
  for (const std::string& header : headers) AppendUnique(by_names, DirName(header));
  for (const std::string& dir : by_names) {
    auto read = toolchain_reads.find(dir);
    std::vector<std::string> files;
    if (read != toolchain_reads.end()) {
      files = std::move(read->second);
      toolchain_reads.erase(read);
    }
    inputs.directories.push_back(
        cache::WatchDirectory(dir, /*names_matter=*/true, std::move(files), build_start_ns));
  }
  for (auto& [dir, files] : toolchain_reads) {
    inputs.directories.push_back(
        cache::WatchDirectory(dir, /*names_matter=*/false, std::move(files), build_start_ns));
  }
  return inputs;
}

}  // namespace jaxcc::pipeline

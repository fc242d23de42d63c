#include "pipeline/run_build.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>

#include "build/depfile.h"
#include "cache/watched_directory.h"
#include "pipeline/build_inputs.h"
#include "pipeline/cache_access.h"
#include "pipeline/source_excerpt.h"
#include "toolchain/ninja.h"
#include "util/clip_lines.h"
#include "util/fault_point.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::pipeline {

using argspec::FunctionSpec;

namespace {

// ninja's rule is "rebuild when an input's mtime is newer than the output's"; ctime is what no
// edit can keep, so an object whose headers changed status after it was written goes.
void ForgetObjectsOlderThanHeaders(const std::string& build_dir, const build::BuildGraph& graph) {
  for (const build::CompileStep& step : graph.compiles) {
    const std::string object = JoinPath(build_dir, step.object);
    const FileInfo built = StatPath(object);
    if (!built.exists) continue;
    auto text = ReadFile(object + ".d");
    if (!text.ok()) continue;
    for (const std::string& dep : build::ParseDepfile(*text)) {
      // The generated units are rewritten by every run; ninja judges them by content-stable mtime.
      if (dep.empty() || dep[0] != '/') continue;
      const FileInfo header = StatPath(dep);
      if (header.exists && header.ctime_ns >= built.mtime_ns) {
        ::unlink(object.c_str());
        break;
      }
    }
  }
}

}  // namespace

void ForgetObjects(const std::string& build_dir, const build::BuildGraph& graph) {
  for (const build::CompileStep& step : graph.compiles) {
    ::unlink(JoinPath(build_dir, step.object).c_str());
  }
}

Result<build::BuildOutcome> RunBuildIn(const std::string& build_dir, const LoadRequest& request,
                                       const BuildEnvironment& env, const build::BuildGraph& graph,
                                       GeneratedFiles files, const std::string& ninja) {
  if (!request.build_directory.empty()) {
    // The user's directory: a failure to create it is theirs to fix, not a cache problem.
    Status made = MakeDirs(build_dir, 0700);
    if (!made.ok()) {
      return MakeError(ErrorKind::kSpec,
                       "build_directory " + build_dir + " cannot be used: " + made.error().message +
                           "; pass a directory this process can create and write, or leave "
                           "build_directory unset to build in the cache");
    }
  }
  if (!request.build_directory.empty()) ForgetObjectsOlderThanHeaders(build_dir, graph);
  if (env.on_build_start) env.on_build_start();
  build::BuildRequest build_request;
  build_request.build_dir = build_dir;
  build_request.files = std::move(files);
  build_request.graph = graph;
  build_request.ninja = ninja;
  build_request.workers = env.ninja_workers;
  build_request.timeout_seconds = env.build_timeout_seconds;
  build_request.on_output = env.on_output;
  build_request.on_progress = env.on_progress;
  build_request.verbose = env.verbose;
  FaultPoint("build");
  auto outcome = build::RunBuild(build_request);
  if (!outcome.ok()) {
    Error error = outcome.error();
    if (error.kind == ErrorKind::kCompile || error.kind == ErrorKind::kSignature) {
      error.message = ClipLongLines(AddSourceExcerpt(error.message, request.sources));
    }
    return error;
  }
  return outcome;
}

void FillBuildDetails(LoadedModule& module, const build::BuildOutcome& outcome,
                      const std::string& miss_reason) {
  module.cache_hit = false;
  module.miss_reason = miss_reason;
  module.build_seconds = outcome.seconds;
  module.build_log = outcome.log;
  module.build_steps = outcome.steps;
}

// Locks and build directories live in the cache root, so these are the failures that mean "this
// cache cannot be written" rather than "this code does not build".
bool IsCacheWriteFailure(const Error& error) { return error.kind == ErrorKind::kCache; }

bool MentionsFullDisk(const Error& error) {
  return error.message.find("No space left on device") != std::string::npos ||
         error.message.find("Disk quota exceeded") != std::string::npos;
}

Error CacheFailureLine(const Error& error, const std::string& cache_dir, const std::string& step) {
  if (!MentionsFullDisk(error)) return error;
  return MakeError(ErrorKind::kCache, "the cache directory " + cache_dir +
                                          " has no space left (ENOSPC) at the " + step + " step");
}

// The fallback when the cache cannot take a build: compile in a fresh directory under $TMPDIR,
// load from there, remove it. Nothing is published, so nothing half-written can be left behind.
Result<LoadedModule> BuildUncached(const LoadRequest& request, const BuildEnvironment& env,
                                   const BuildPlan& plan, const std::vector<FunctionSpec>& specs,
                                   const std::string& key, const Error& cache_failure) {
  auto ninja =
      toolchain::FindNinja(toolchain::NinjaWheelDirs(env.python_path, env.python_executable));
  if (!ninja.ok()) return ninja.error();
  auto temp_dir = MakeTempDir("jaxcc-" + request.name);
  if (!temp_dir.ok()) {
    return MakeError(ErrorKind::kCache, cache_failure.message +
                                            "\nBuilding in a private temporary directory "
                                            "failed as well: " +
                                            temp_dir.error().message);
  }
  std::string build_dir =
      request.build_directory.empty() ? *temp_dir : AbsolutePath(request.build_directory);
  auto outcome =
      RunBuildIn(build_dir, request, env, plan.graph, GenerateSources(request, specs), *ninja);
  if (!outcome.ok()) {
    (void)RemoveTree(*temp_dir);
    Error error = outcome.error();
    if (MentionsFullDisk(error)) {
      error.kind = ErrorKind::kCache;
      error.message = "no space left to build module '" + request.name +
                      "', neither in the cache (" + cache_failure.message +
                      ") nor in $TMPDIR. Free disk space or point $JAXCC_CACHE_DIR and $TMPDIR "
                      "at a disk with room.\n" +
                      error.message;
    }
    return error;
  }
  auto module = LoadPrivateLibrary(outcome->library_path, specs, key);
  (void)RemoveTree(*temp_dir);
  if (!module.ok()) return module.error();
  FillBuildDetails(*module, *outcome, "uncached");
  module->warning =
      "not cached, built in a private temporary directory instead: " + cache_failure.message;
  return module;
}

// A unit's object depends on its generated text, its command, the toolchain, the header digest
// and the user headers it includes, not on the other units: when an earlier build (of any module)
// compiled the same unit, its object is copied in and linked instead (cache/object_cache.h).
std::vector<UnitObject> ReuseObjects(const cache::ObjectCache& objects, const BuildEnvironment& env,
                                     const GeneratedFiles& files,
                                     const std::string& toolchain_version,
                                     const std::string& header_digest, const std::string& build_dir,
                                     build::BuildGraph& graph) {
  std::vector<UnitObject> units;
  std::vector<build::CompileStep> still_to_compile;
  for (build::CompileStep& step : graph.compiles) {
    auto text = std::find_if(files.begin(), files.end(),
                             [&](const auto& file) { return file.first == step.source; });
    if (text == files.end()) {
      still_to_compile.push_back(std::move(step));
      continue;
    }
    UnitObject unit{
        step.source, step.object,
        cache::ObjectCache::Key(text->second, step.command, toolchain_version, header_digest)};
    std::optional<std::vector<cache::ObjectDependency>> deps;
    if (!env.force_rebuild) deps = objects.Fetch(unit.key, JoinPath(build_dir, step.object));
    if (deps) {
      std::string depfile = step.object + ":";
      for (const auto& dep : *deps) {
        const bool is_directory = !dep.path.empty() && dep.path.back() == '/';
        if (dep.sha256 != cache::kAbsentFile && !is_directory) {
          depfile += " " + build::EscapeDepfilePath(dep.path);
        }
      }
      unit.reused = WriteFile(JoinPath(build_dir, step.object + ".d"), depfile + "\n").ok();
    }
    if (unit.reused) {
      graph.prebuilt_objects.push_back(step.object);
    } else {
      still_to_compile.push_back(std::move(step));
    }
    units.push_back(std::move(unit));
  }
  graph.compiles = std::move(still_to_compile);
  return units;
}

void StoreObjects(const cache::ObjectCache& objects, const std::vector<UnitObject>& units,
                  const std::string& build_dir, const BuildEnvironment& env,
                  const std::string& cuda_home, const BuildInputs& inputs,
                  const IncludeSearch& search) {
  const std::vector<cache::Dependency>& tracked = inputs.dependencies;
  // The searched directories by their names: a header that appears where the preprocessor
  // looked and found nothing makes the object a miss (decision 172). A directory that changed
  // during the build vouches for nothing: no object is stored.
  std::vector<cache::ObjectDependency> searched;
  for (const cache::WatchedDirectory& dir : inputs.directories) {
    if (dir.names_sha256 == cache::kDirectoryUnknown) return;
    if (dir.names_sha256.size() == 64) searched.push_back({dir.path + "/", dir.names_sha256});
  }
  std::map<std::string, std::string> toolchain_sha;  // the compiler's own files, hashed once
  for (const UnitObject& unit : units) {
    if (unit.reused) continue;
    auto text = ReadFile(JoinPath(build_dir, unit.object + ".d"));
    if (!text.ok()) continue;  // no depfile, no proof of what it read: not shared
    std::vector<cache::ObjectDependency> deps;
    bool complete = true;
    for (std::string& dep : build::ParseDepfile(*text)) {
      if (dep.empty() || dep[0] != '/') dep = JoinPath(build_dir, dep);
      const std::string path = AbsolutePath(dep);
      if (!IsUserHeader(path, build_dir, env, cuda_home, search)) continue;
      if (IsToolchainFile(path, search)) {
        // Watched by its directory in the entry; an object is checked by the bytes it read.
        auto sha = toolchain_sha.find(path);
        if (sha == toolchain_sha.end()) {
          auto hashed = Sha256FileHex(path);
          sha = toolchain_sha.emplace(path, hashed.ok() ? *hashed : "").first;
        }
        if (sha->second.empty()) {
          complete = false;
          break;
        }
        if (std::none_of(deps.begin(), deps.end(), [&](const auto& d) { return d.path == path; })) {
          deps.push_back({path, sha->second});
        }
        continue;
      }
      auto known = std::find_if(tracked.begin(), tracked.end(),
                                [&](const cache::Dependency& d) { return d.path == path; });
      if (known == tracked.end()) {
        complete = false;
        break;
      }
      if (std::none_of(deps.begin(), deps.end(), [&](const auto& d) { return d.path == path; })) {
        deps.push_back({path, known->sha256});
      }
    }
    if (!complete) continue;
    // Where a new header would shadow one this unit read: checked absent by the build.
    std::vector<std::string> headers;
    for (const auto& dep : deps) {
      if (!IsToolchainFile(dep.path, search)) headers.push_back(dep.path);
    }
    for (const std::string& shadow : ShadowCandidates(headers, search)) {
      if (std::binary_search(inputs.shadows.begin(), inputs.shadows.end(), shadow)) {
        deps.push_back({shadow, cache::kAbsentFile});
      }
    }
    deps.insert(deps.end(), searched.begin(), searched.end());
    objects.Store(unit.key, JoinPath(build_dir, unit.object), deps);
  }
}

}  // namespace jaxcc::pipeline

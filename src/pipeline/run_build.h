// Running a build for LoadModule: in a build directory, or privately when the cache cannot take
// it, reusing the shared objects of units whose inputs did not change.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "build/builder.h"
#include "cache/object_cache.h"
#include "pipeline/build_inputs.h"
#include "pipeline/build_plan.h"
#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::pipeline {

using GeneratedFiles = std::vector<std::pair<std::string, std::string>>;

/// Writes `files` into `build_dir` and runs ninja over `graph`; compile errors get the user's
/// source line quoted under them. In a user's build_directory, an object older than the last
/// change (ctime) of a header its depfile names is deleted first: ninja compares mtimes only, and
/// an edit that kept the mtime (`cp -p`) would otherwise link the old object.
Result<build::BuildOutcome> RunBuildIn(const std::string& build_dir, const LoadRequest& request,
                                       const BuildEnvironment& env, const build::BuildGraph& graph,
                                       GeneratedFiles files, const std::string& ninja);

/// Deletes the objects of `graph`'s compile steps in `build_dir`, so the next ninja run compiles
/// every unit again.
void ForgetObjects(const std::string& build_dir, const build::BuildGraph& graph);

/// Marks `module` as freshly built (miss reason, seconds, log).
void FillBuildDetails(LoadedModule& module, const build::BuildOutcome& outcome,
                      const std::string& miss_reason);

/// Failures that mean "this cache cannot be written" rather than "this code does not build".
bool IsCacheWriteFailure(const Error& error);
bool MentionsFullDisk(const Error& error);

/// A cache failure as the one line a user reads (issue 49 item 19): for a full disk, "the cache
/// directory <dir> has no space left (ENOSPC) at the <step> step", whatever the tools said
/// (a compile on a full disk fails every unit, the assembler's words read as a missing file);
/// any other failure unchanged.
Error CacheFailureLine(const Error& error, const std::string& cache_dir, const std::string& step);

/// The fallback when the cache cannot take a build: compile under $TMPDIR, load, remove.
Result<LoadedModule> BuildUncached(const LoadRequest& request, const BuildEnvironment& env,
                                   const BuildPlan& plan,
                                   const std::vector<argspec::FunctionSpec>& specs,
                                   const std::string& key, const Error& cache_failure);

/// One compile step's object in the shared object cache (cache/object_cache.h).
struct UnitObject {
  std::string source;  ///< the step's source file name (kWrapperSource for the wrapper)
  std::string object;  ///< its object's file name in the build directory
  std::string key;
  bool reused = false;
};

/// Links an earlier build's object instead of compiling it wherever one with the same inputs
/// exists (its compile step moves to `graph.prebuilt_objects`, and its recorded headers go into
/// `<object>.d` so the entry's manifest tracks them as if it had been compiled here).
/// `toolchain_version` names every compiler the steps use (host compiler, nvcc).
std::vector<UnitObject> ReuseObjects(const cache::ObjectCache& objects, const BuildEnvironment& env,
                                     const GeneratedFiles& files,
                                     const std::string& toolchain_version,
                                     const std::string& header_digest, const std::string& build_dir,
                                     build::BuildGraph& graph);

/// After a successful build whose inputs held still (build_inputs.h): stores every object that
/// was compiled, with the user headers its depfile lists, each with the digest `inputs` took of
/// it, and the shadow paths of those headers that `inputs` found absent. An object whose depfile
/// names a user header `inputs` lacks is not stored.
void StoreObjects(const cache::ObjectCache& objects, const std::vector<UnitObject>& units,
                  const std::string& build_dir, const BuildEnvironment& env,
                  const std::string& cuda_home, const BuildInputs& inputs,
                  const IncludeSearch& search);

}  // namespace jaxcc::pipeline

// Running a build for LoadModule: in a build directory, or privately when the cache cannot take
// it, reusing a shared FFI wrapper object where one fits.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "build/builder.h"
#include "cache/object_cache.h"
#include "pipeline/build_plan.h"
#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::pipeline {

using GeneratedFiles = std::vector<std::pair<std::string, std::string>>;

/// Writes `files` into `build_dir` and runs ninja over `graph`; compile errors get the user's
/// source line quoted under them.
Result<build::BuildOutcome> RunBuildIn(const std::string& build_dir, const LoadRequest& request,
                                       const BuildEnvironment& env, const build::BuildGraph& graph,
                                       GeneratedFiles files, const std::string& ninja);

/// Marks `module` as freshly built (miss reason, seconds, log).
void FillBuildDetails(LoadedModule& module, const build::BuildOutcome& outcome,
                      const std::string& miss_reason);

/// Failures that mean "this cache cannot be written" rather than "this code does not build".
bool IsCacheWriteFailure(const Error& error);
bool MentionsFullDisk(const Error& error);

/// The fallback when the cache cannot take a build: compile under $TMPDIR, load, remove.
Result<LoadedModule> BuildUncached(const LoadRequest& request, const BuildEnvironment& env,
                                   const BuildPlan& plan,
                                   const std::vector<argspec::FunctionSpec>& specs,
                                   const std::string& key, const Error& cache_failure);

struct WrapperReuse {
  std::string key;
  std::string object_path;  ///< ffi_wrapper.o in the build directory
  bool reused = false;
};

/// Links an earlier build's wrapper object instead of compiling it, when one with the same
/// inputs exists (removes its compile step from `graph`).
WrapperReuse ReuseWrapperObject(const cache::ObjectCache& objects, const BuildEnvironment& env,
                                const GeneratedFiles& files, const std::string& compiler_version,
                                const std::string& header_digest, const std::string& build_dir,
                                build::BuildGraph& graph);

}  // namespace jaxcc::pipeline

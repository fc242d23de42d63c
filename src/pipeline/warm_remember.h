// Writing the warm index's record after the full path loaded an entry (warm_index.h reads it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "cache/cache_dir.h"
#include "pipeline/build_plan.h"
#include "pipeline/load_request.h"
#include "toolchain/host_compiler.h"

namespace jaxcc::pipeline {

/// After the full path loaded the cache entry of `key`, verified against `facts` (its
/// manifest's): what a later process needs to find it again from the request alone, under each
/// of `fingerprints`. Skipped where a later load could differ without the request or the watched
/// files changing: GPUs found by nvidia-smi, and user build directories.
void RememberWarm(const LoadRequest& request, const BuildEnvironment& env,
                  const std::vector<std::string>& fingerprints, const std::string& key,
                  const cache::EntryFacts& facts, const std::vector<argspec::FunctionSpec>& specs,
                  const toolchain::HostCompiler& compiler, const std::optional<CudaToolchain>& cuda,
                  const std::vector<std::string>& archs, const std::string& archs_source);

}  // namespace jaxcc::pipeline

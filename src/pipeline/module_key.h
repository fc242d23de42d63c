// The cache key's inputs for one module (cache::KeyInputs): every input that decides the built
// library, gathered from the request, its resolved specs, the build plan and the toolchain.
#pragma once

#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "cache/cache_key.h"
#include "pipeline/build_plan.h"
#include "pipeline/load_request.h"
#include "toolchain/host_compiler.h"

namespace jaxcc::pipeline {

/// The specs as the key reads them: name, source, namespaces, tokens and the proven C++ types
/// (decision 147), one line each.
std::string CanonicalSpecs(const std::vector<argspec::FunctionSpec>& specs);

/// What ComputeKey hashes for this module; `cuda` is null for a CPU module.
cache::KeyInputs ModuleKeyInputs(const LoadRequest& request,
                                 const std::vector<argspec::FunctionSpec>& specs,
                                 const BuildPlan& plan, const CudaToolchain* cuda,
                                 const toolchain::HostCompiler& compiler,
                                 const std::string& header_digest);

}  // namespace jaxcc::pipeline

// The whole pipeline: specs -> toolchain -> cache key -> (hit: verify + dlopen) or
// (miss: lock, generate, build, publish) -> handler addresses.
#pragma once

#include <cstdint>
#include <string>

#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// Errors keep their stage's kind (kSpec, kSignature, kToolchain, kCompile, kCache, kLoad).
Result<LoadedModule> LoadModule(const LoadRequest& request, const BuildEnvironment& env);

/// $JAXCC_CACHE_MAX_BYTES parsed (unset: cache::kDefaultMaxCacheBytes; 0: no cap).
Result<std::int64_t> CacheMaxBytes();

}  // namespace jaxcc::pipeline

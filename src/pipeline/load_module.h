// The whole pipeline: specs -> toolchain -> cache key -> (hit: verify + dlopen) or
// (miss: lock, generate, build, publish) -> handler addresses.
#pragma once

#include <cstdint>
#include <string>

#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// Errors keep their stage's kind (kSpec, kSignature, kToolchain, kCompile, kCache, kLoad).
Result<LoadedModule> LoadModule(const LoadRequest& request);

/// $JAXCC_CACHE_MAX_BYTES parsed (unset: cache::kDefaultMaxCacheBytes; 0: no cap).
Result<std::int64_t> CacheMaxBytes();

/// Validates a module name or target prefix: it becomes part of file names and FFI target names.
Status ValidateModuleName(const std::string& name, const char* what);

}  // namespace jaxcc::pipeline

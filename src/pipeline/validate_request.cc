// The value rules of a load request: one owner for each, used by the Python layer through
// jaxcc._core.LoadRequest and by LoadModule for C++ callers.
#include <string>

#include "cache/entry_names.h"
#include "pipeline/load_request.h"

namespace jaxcc::pipeline {

const std::string& TargetPrefix(const LoadRequest& request) {
  return request.target_prefix ? *request.target_prefix : request.name;
}

Status ValidateRequest(const LoadRequest& request) {
  JAXCC_RETURN_IF_ERROR(cache::ValidateModuleName(request.name, "module name"));
  if (request.target_prefix) {
    JAXCC_RETURN_IF_ERROR(cache::ValidateModuleName(*request.target_prefix, "target_prefix"));
  }
  if (request.platform != "cpu" && request.platform != "cuda") {
    return MakeError(ErrorKind::kSpec,
                     "platform must be \"cpu\" or \"cuda\", got \"" + request.platform + "\"");
  }
  if (request.optimization_level < kMinOptimizationLevel ||
      request.optimization_level > kMaxOptimizationLevel) {
    return MakeError(ErrorKind::kSpec, "optimization_level must be 0, 1, 2 or 3, got " +
                                           std::to_string(request.optimization_level));
  }
  std::string methods;
  for (const char* method : kVmapMethods) {
    if (request.vmap_method == method) return OkStatus();
    methods += std::string(methods.empty() ? "" : ", ") + "'" + method + "'";
  }
  return MakeError(ErrorKind::kSpec,
                   "vmap_method must be one of " + methods + ", got '" + request.vmap_method + "'");
}

}  // namespace jaxcc::pipeline

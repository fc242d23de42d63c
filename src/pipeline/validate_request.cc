// The value rules of a load request: one owner for each, used by the Python layer through
// jaxcc._core.LoadRequest and by LoadModule for C++ callers.
#include <cmath>
#include <cstdlib>
#include <string>

#include "cache/entry_names.h"
#include "pipeline/load_request.h"
#include "pipeline/source_text.h"

namespace jaxcc::pipeline {

Result<double> BuildTimeoutFromEnvironment() {
  const char* text = std::getenv("JAXCC_BUILD_TIMEOUT");
  if (text == nullptr) return 600.0;
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  bool parsed = *text != '\0' && end != nullptr && *end == '\0';
  if (!parsed || !(seconds > 0 && seconds <= 1e6)) {  // NaN fails the comparison too
    return MakeError(ErrorKind::kSpec, "JAXCC_BUILD_TIMEOUT='" + std::string(text) +
                                           "' is not a build time limit: set it to a number of "
                                           "seconds between 0 and 1e6 (default 600), or unset it");
  }
  return seconds;
}

const std::string& TargetPrefix(const LoadRequest& request) {
  return request.target_prefix ? *request.target_prefix : request.name;
}

Status ValidateRequest(const LoadRequest& request) {
  JAXCC_RETURN_IF_ERROR(cache::ValidateModuleName(request.name, "module name"));
  JAXCC_RETURN_IF_ERROR(ValidateSources(request.sources, request.source_stamps));
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

// A CUDA function without a stream would launch on the default stream, unordered with XLA's
// (non-blocking) stream and outside any CUDA graph, while its handler claims graph safety; XLA's
// stream cannot be passed implicitly, because `<<<grid, block>>>` names no stream to redirect.
Status ValidateSpecsForCallables(const std::string& module_name,
                                 const std::vector<argspec::FunctionSpec>& specs) {
  for (const argspec::FunctionSpec& spec : specs) {
    for (const argspec::Param& param : spec.params) {
      if (param.kind != argspec::ParamKind::kAttr || param.name != "outs") continue;
      return MakeError(ErrorKind::kSpec,
                       module_name + "." + spec.name +
                           ": an attribute named 'outs' clashes with the outs= keyword of jaxcc "
                           "callables; rename the C++ parameter (and its attr token), e.g. to "
                           "'num_outs'.");
    }
  }
  return OkStatus();
}

Status ValidateSpecsForPlatform(const std::string& platform,
                                const std::vector<argspec::FunctionSpec>& specs) {
  if (platform != "cuda") return OkStatus();
  for (const argspec::FunctionSpec& spec : specs) {
    if (spec.has_pool() || spec.is_async()) {
      return MakeError(
          ErrorKind::kSpec,
          "CUDA function '" + spec.name + "' takes " +
              (spec.has_pool() ? "a `jaxcc::ThreadPool&` (`pool`)" : "`jaxcc::Async` (`async`)") +
              ", which only CPU functions can: XLA lends its intra-op thread pool "
              "and asynchronous handlers to CPU custom calls only, and a CUDA "
              "kernel is already asynchronous on its stream. Remove the parameter "
              "(and its token), or load the function with load_cpp_inline");
    }
    if (spec.has_stream()) continue;
    return MakeError(ErrorKind::kSpec,
                     "CUDA function '" + spec.name +
                         "' has no stream parameter, so its kernels would run on the default "
                         "stream, unordered with XLA's work and outside CUDA graphs. Add `int64_t "
                         "stream` (or `cudaStream_t stream`) to it, with `stream` in its @BE spec "
                         "or functions= tokens, and launch on it: kernel<<<grid, block, 0, "
                         "(cudaStream_t)stream>>>(...)");
  }
  return OkStatus();
}

}  // namespace jaxcc::pipeline

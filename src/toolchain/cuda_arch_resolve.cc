#include "toolchain/cuda_arch_resolve.h"

#include <cstdlib>
#include <mutex>
#include <optional>

#include "toolchain/cuda_arch.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace jaxcc::toolchain {
namespace {

Result<ResolvedArchs> FromList(const std::vector<std::string>& items, const std::string& source) {
  auto archs = ParseArchList(items);
  if (!archs.ok()) {
    return MakeError(archs.error().kind, source + ": " + archs.error().message);
  }
  return ResolvedArchs{*archs, source};
}

}  // namespace

Result<ResolvedArchs> ResolveCudaArchs(const std::vector<std::string>& explicit_archs,
                                       const std::vector<std::string>& jax_gpus,
                                       const GpuQuery& query_gpus) {
  if (!explicit_archs.empty()) return FromList(explicit_archs, "compute_capability");
  if (const char* env = std::getenv("JAXCC_CUDA_ARCH"); env != nullptr && *env != '\0') {
    return FromList({env}, "$JAXCC_CUDA_ARCH");
  }
  if (!jax_gpus.empty()) return FromList(jax_gpus, "the GPUs JAX sees");
  auto queried =
      query_gpus ? query_gpus() : Result<std::vector<std::string>>(std::vector<std::string>{});
  if (queried.ok() && !queried->empty()) return FromList(*queried, "nvidia-smi");
  std::string why = queried.ok() ? "nvidia-smi lists no GPU" : queried.error().message;
  return MakeError(ErrorKind::kToolchain,
                   "no GPU architecture to compile for: no compute_capability was given, "
                   "$JAXCC_CUDA_ARCH is unset, JAX sees no GPU and " +
                       why +
                       ". Name the target explicitly, e.g. compute_capability=\"9.0\" (several: "
                       "\"8.0,9.0\") or JAXCC_CUDA_ARCH=90; the module then builds without a GPU.");
}

Result<std::vector<std::string>> QueryGpusWithNvidiaSmi() {
  static std::mutex mutex;
  static std::optional<Result<std::vector<std::string>>> memo;
  std::lock_guard<std::mutex> guard(mutex);
  if (memo) return *memo;
  std::string smi = FindExecutable("nvidia-smi");
  if (smi.empty()) {
    memo = Result<std::vector<std::string>>(
        MakeError(ErrorKind::kToolchain, "nvidia-smi is not on PATH"));
    return *memo;
  }
  ProcessOptions options;
  options.timeout_seconds = 30;
  auto run = RunProcess({smi, "--query-gpu=compute_cap", "--format=csv,noheader"}, options);
  if (!run.ok() || run->exit_code != 0) {
    memo = Result<std::vector<std::string>>(MakeError(
        ErrorKind::kToolchain,
        "nvidia-smi failed" + (run.ok() ? ": " + run->output : ": " + run.error().message)));
    return *memo;
  }
  std::vector<std::string> archs;
  for (const std::string& line : SplitLines(run->output)) {
    std::string trimmed = Trim(line);
    if (!trimmed.empty()) archs.push_back(trimmed);
  }
  memo = archs;
  return *memo;
}

}  // namespace jaxcc::toolchain

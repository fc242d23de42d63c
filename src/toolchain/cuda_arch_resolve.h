// Which GPU architectures a CUDA build targets, from the most to the least explicit source.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

struct ResolvedArchs {
  std::vector<std::string> archs;  ///< normalised and sorted ("80", "90a")
  std::string source;              ///< where they came from, for logs and errors
};

/// `nvidia-smi --query-gpu=compute_cap` as architectures; an error when it is absent or fails.
using GpuQuery = std::function<Result<std::vector<std::string>>()>;

/// compute_capability given explicitly > $JAXCC_CUDA_ARCH > the GPUs JAX sees (`jax_gpus`, all of
/// them) > `query_gpus` (nvidia-smi). No source at all is ErrorKind::kToolchain saying how to
/// name an architecture. Bad spellings are ErrorKind::kSpec naming the source they came from.
Result<ResolvedArchs> ResolveCudaArchs(const std::vector<std::string>& explicit_archs,
                                       const std::vector<std::string>& jax_gpus,
                                       const GpuQuery& query_gpus);

/// The real GpuQuery: runs nvidia-smi once per process and remembers the answer.
Result<std::vector<std::string>> QueryGpusWithNvidiaSmi();

}  // namespace jaxcc::toolchain

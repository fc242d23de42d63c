// Which CUDA runtime a module links (decisions 109, 132, 136, 152): by default the shared runtime
// of the pip wheel JAX's CUDA plugin loads itself, where that wheel is installed, else the static
// one; $JAXCC_CUDA_RUNTIME=static keeps the static one everywhere.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

/// Whether a CUDA module should link the wheel's shared runtime when one is found
/// ($JAXCC_CUDA_RUNTIME): unset, "" or "shared" -> true (the default since decision 152: every GPU
/// test passed under it on an H200); "static" -> false; anything else is a kSpec error naming the
/// variable and its two values. Without the wheel a module keeps the static runtime either way.
Result<bool> SharedCudaRuntimeFromEnvironment();

/// The wheel's `libcudart.so.<major>` in the first of `runtime_dirs` (the lib directories of pip's
/// NVIDIA runtime wheels, in import order, as the Python layer finds them) that has one, for the
/// major version of `nvcc_version` (an Nvcc::version line); "" when none has it. Only a wheel's
/// copy qualifies: it is the file JAX's plugin loads by path, so a module whose RUNPATH names its
/// folder shares the runtime JAX uses, whichever of the two loads first.
std::string FindWheelCudaRuntime(const std::vector<std::string>& runtime_dirs,
                                 const std::string& nvcc_version);

}  // namespace jaxcc::toolchain

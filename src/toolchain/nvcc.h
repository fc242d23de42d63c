// Finding nvcc, once per process, for the CUDA path (issue 3).
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

struct Nvcc {
  std::string path;       ///< absolute path of nvcc
  std::string version;    ///< the "release X.Y" line of `nvcc --version`
  std::string cuda_home;  ///< <nvcc>/../..
  std::string found_by;   ///< "$JAXCC_NVCC", "$CUDA_HOME", "nvcc on PATH" or "pip wheel"
};

/// Order: $JAXCC_NVCC, $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, nvcc on PATH, then `wheel_dirs`
/// (the bin directories of pip's NVIDIA CUDA wheels, which the Python layer finds). The version
/// is memoised like the host compiler's (`memo_path`, may be ""). Failure is ErrorKind::kToolchain
/// listing every candidate tried, in order, and how to fix it.
Result<Nvcc> FindNvcc(const std::vector<std::string>& wheel_dirs, const std::string& memo_path);

/// The release of `version` (an Nvcc::version line, "... release 13.0, V13.0.88") as major * 10
/// + minor (130), or 0 when the line names none.
int NvccRelease(const std::string& version);

/// Forgets the per-process result (tests change the environment between calls).
void ResetNvccMemo();

}  // namespace jaxcc::toolchain

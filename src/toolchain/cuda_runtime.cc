#include "toolchain/cuda_runtime.h"

#include <cstdlib>

#include "toolchain/nvcc.h"
#include "util/fs.h"

namespace jaxcc::toolchain {

Result<bool> SharedCudaRuntimeFromEnvironment() {
  const char* text = std::getenv("JAXCC_CUDA_RUNTIME");
  if (text == nullptr || *text == '\0' || std::string(text) == "shared") return true;
  if (std::string(text) == "static") return false;
  return MakeError(ErrorKind::kSpec,
                   "JAXCC_CUDA_RUNTIME='" + std::string(text) +
                       "' names no CUDA runtime: set it to 'shared' (the default: modules use the "
                       "runtime of JAX's nvidia-cuda-runtime wheel where it is installed) or "
                       "'static' (each module carries its own), or unset it");
}

std::string FindWheelCudaRuntime(const std::vector<std::string>& runtime_dirs,
                                 const std::string& nvcc_version) {
  int major = NvccRelease(nvcc_version) / 10;
  if (major <= 0) return "";
  std::string name = "libcudart.so." + std::to_string(major);
  for (const std::string& dir : runtime_dirs) {
    std::string candidate = JoinPath(dir, name);
    FileInfo info = StatPath(candidate);
    if (info.exists && !info.is_dir) return candidate;
  }
  return "";
}

}  // namespace jaxcc::toolchain

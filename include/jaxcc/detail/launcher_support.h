// What the bridges' CUDA launchers (Triton, Numba-CUDA) share: CUDA errors as exceptions named
// after the bridge, the current device, and the preload entry point that loads a kernel on the
// devices JAX uses before any CUDA-graph capture. Included by launcher sources only, after
// <cuda_runtime.h>; JAXCC_BRIDGE_NAME names the bridge in messages.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#ifndef JAXCC_BRIDGE_NAME
#error "define JAXCC_BRIDGE_NAME (\"triton_kernel\", ...) before including launcher_support.h"
#endif

namespace jaxcc::detail {

[[noreturn]] inline void ThrowCuda(cudaError_t status, const std::string& what) {
  throw std::runtime_error(std::string(JAXCC_BRIDGE_NAME) + ": " + what + " failed: " +
                           cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

inline int CurrentDevice() {
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) ThrowCuda(status, "finding the current device (cudaGetDevice)");
  return device;
}

/// The body of a launcher's exported preload: runs `load_on(device)` on the devices JAX uses
/// (their CUDA ordinals in `devices`; every device when `count` < 0) with each made current, then
/// restores the current device. 0 on success; otherwise the error is written to `message`
/// (NUL-terminated, at most `size` bytes) and 1 returned: no exception crosses the C boundary.
template <class LoadOn>
int PreloadOnDevices(const std::int64_t* devices, std::int64_t count, char* message,
                     std::int64_t size, LoadOn load_on) {
  int previous = -1;
  try {
    previous = CurrentDevice();
    int all = 0;
    if (count < 0) {
      cudaError_t status = cudaGetDeviceCount(&all);
      if (status != cudaSuccess) ThrowCuda(status, "counting devices (cudaGetDeviceCount)");
    }
    const std::int64_t n = count < 0 ? all : count;
    for (std::int64_t i = 0; i < n; ++i) {
      const int device = static_cast<int>(count < 0 ? i : devices[i]);
      cudaError_t status = cudaSetDevice(device);
      if (status != cudaSuccess) ThrowCuda(status, "selecting device " + std::to_string(device));
      load_on(device);
    }
    cudaSetDevice(previous);
    return 0;
  } catch (const std::exception& e) {
    if (previous >= 0) cudaSetDevice(previous);
    if (size > 0) {
      std::strncpy(message, e.what(), static_cast<std::size_t>(size - 1));
      message[size - 1] = '\0';
    }
    return 1;
  }
}

}  // namespace jaxcc::detail

// JAXCC_CUDA_CHECK and the kernel-launch checks; empty unless the CUDA runtime API is available.
//
// Deliberately guarded by a classic include guard placed INSIDE the availability test instead of
// #pragma once: a host translation unit that includes this header before <cuda_runtime.h> gets
// the macros when it includes it (or jaxcc.h / brainevent/common.h) again afterwards.
#include "jaxcc/macros.h"

#if (defined(__CUDACC__) || defined(CUDART_VERSION)) && !defined(JAXCC_CUDA_CHECK_H_)
#define JAXCC_CUDA_CHECK_H_

#include <cuda_runtime_api.h>

#include <string>

#include "jaxcc/check.h"

namespace jaxcc::detail {

/// Throws CudaError "<what> at <file>:<line>: <cudaErrorName> (<description>)", with a hint
/// for the launch errors whose cause is not obvious from the CUDA description.
[[noreturn]] inline void ThrowCudaError(cudaError_t status, const char* what, const char* file,
                                        int line) {
  std::string text = std::string(what) + " at " + file + ":" + std::to_string(line) + ": " +
                     cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
  if (status == cudaErrorInvalidConfiguration) {
    text += "; a grid or block of 0 threads is invalid: skip the launch when numel() == 0";
  } else if (status == cudaErrorNoKernelImageForDevice) {
    text += "; the kernel was not compiled for this GPU's architecture";
  }
  throw CudaError(text, static_cast<int>(status));
}

/// Device side of JAXCC_CUDA_CHECK (device runtime calls): prints the numeric code and continues.
JAXCC_HOST_DEVICE inline void ReportDeviceCudaError(int status, const char* expression,
                                                    const char* file, int line) {
  printf("CUDA error %d at %s:%d: %s (device code: execution continues)\n", status, file, line,
         expression);
}

}  // namespace jaxcc::detail

/// JAXCC_CUDA_CHECK(expr): evaluates a cudaError_t expression once; on failure throws
/// jaxcc::CudaError naming the error, its description, the expression text, file and line.
/// In device code it printf()s the numeric code and execution continues (no __trap()).
#if JAXCC_DEVICE_CODE
#define JAXCC_CUDA_CHECK(expr)                                                            \
  do {                                                                                    \
    const cudaError_t jaxcc_cuda_status_ = (expr);                                        \
    if (jaxcc_cuda_status_ != cudaSuccess) {                                              \
      ::jaxcc::detail::ReportDeviceCudaError(static_cast<int>(jaxcc_cuda_status_), #expr, \
                                             __FILE__, __LINE__);                         \
    }                                                                                     \
  } while (0)
#else
#define JAXCC_CUDA_CHECK(expr)                                                                    \
  do {                                                                                            \
    const cudaError_t jaxcc_cuda_status_ = (expr);                                                \
    if (jaxcc_cuda_status_ != cudaSuccess) {                                                      \
      ::jaxcc::detail::ThrowCudaError(jaxcc_cuda_status_, "CUDA call " #expr " failed", __FILE__, \
                                      __LINE__);                                                  \
    }                                                                                             \
  } while (0)
#endif

/// JAXCC_CHECK_KERNEL_LAUNCH(): call right after a `<<<...>>>` launch. Throws jaxcc::CudaError
/// when the launch itself failed (bad configuration, missing kernel image, ...). Errors raised
/// while the kernel runs are asynchronous and are NOT seen here. Safe under CUDA graph capture.
#define JAXCC_CHECK_KERNEL_LAUNCH()                                                              \
  do {                                                                                           \
    const cudaError_t jaxcc_cuda_status_ = cudaGetLastError();                                   \
    if (jaxcc_cuda_status_ != cudaSuccess) {                                                     \
      ::jaxcc::detail::ThrowCudaError(jaxcc_cuda_status_, "CUDA kernel launch failed", __FILE__, \
                                      __LINE__);                                                 \
    }                                                                                            \
  } while (0)

/// JAXCC_CHECK_KERNEL_LAUNCH_SYNC(): JAXCC_CHECK_KERNEL_LAUNCH() followed by
/// cudaDeviceSynchronize(), so faults raised while the kernel runs are reported at this line.
/// DEBUG ONLY: it stalls the whole device, and it fails under CUDA graph capture, so never use it
/// in a function registered as CUDA-graph compatible (allow_cuda_graph).
#define JAXCC_CHECK_KERNEL_LAUNCH_SYNC()                                                       \
  do {                                                                                         \
    JAXCC_CHECK_KERNEL_LAUNCH();                                                               \
    const cudaError_t jaxcc_cuda_sync_status_ = cudaDeviceSynchronize();                       \
    if (jaxcc_cuda_sync_status_ != cudaSuccess) {                                              \
      ::jaxcc::detail::ThrowCudaError(jaxcc_cuda_sync_status_, "CUDA kernel execution failed", \
                                      __FILE__, __LINE__);                                     \
    }                                                                                          \
  } while (0)

#endif  // CUDA runtime available && !JAXCC_CUDA_CHECK_H_

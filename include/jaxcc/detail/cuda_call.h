// What a generated CUDA FFI handler does around the user's function: make the device of XLA's
// stream current (and restore the previous one), clear a stale CUDA error before the call, and
// turn an error left by the call (a failed kernel launch, a zero-size grid) into a CudaError
// naming the function.
//
// Included by generated CUDA wrapper units, which the host compiler builds without the CUDA
// include directory: there the few runtime entry points needed are declared here, with the
// types the CUDA headers give them (cudaError_t and cudaStreamCaptureStatus are int-sized enums,
// cudaStream_t is `CUstream_st*`), and resolved by the CUDA runtime the module links;
// `cudaStreamGetDevice` (CUDA >= 12.8) is a weak reference, null with an older runtime, which
// leaves the current device as it is. A translation unit that included <cuda_runtime_api.h>
// first (one nvcc unit holding kernel and wrapper) uses the header's declarations instead.
// `cudaStreamGetDevice` is never called while the stream is being captured into a CUDA graph:
// the runtime rejects that query during a capture (cudaErrorStreamCaptureUnsupported) and the
// rejection invalidates the capture, whereas `cudaStreamIsCapturing` is capture-safe.
#pragma once

#include <string>

#include "jaxcc/check.h"

#if defined(__CUDA_RUNTIME_API_H__)
namespace jaxcc::detail {
using CudaStatus = cudaError_t;
using CudaCaptureStatus = cudaStreamCaptureStatus;
#if CUDART_VERSION >= 12080
inline bool HasStreamGetDevice() { return true; }
#else
inline bool HasStreamGetDevice() { return false; }
inline int cudaStreamGetDevice(cudaStream_t, int*) { return 1; }
#endif
}  // namespace jaxcc::detail
#else
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;  // the CUDA headers' own definition

extern "C" {
int cudaGetLastError(void);
int cudaGetDevice(int* device);
int cudaSetDevice(int device);
const char* cudaGetErrorName(int error);
const char* cudaGetErrorString(int error);
int cudaStreamIsCapturing(cudaStream_t stream, int* capture_status);  // 0: not capturing
int cudaStreamSynchronize(cudaStream_t stream);
__attribute__((weak)) int cudaStreamGetDevice(cudaStream_t stream, int* device);
}

namespace jaxcc::detail {
using CudaStatus = int;
using CudaCaptureStatus = int;
inline bool HasStreamGetDevice() { return &::cudaStreamGetDevice != nullptr; }
}  // namespace jaxcc::detail
#endif

namespace jaxcc::detail {

/// Lives for the duration of one handler call. Constructed before the user's function: makes
/// the device XLA's stream belongs to current (multi-GPU: XLA may call on a thread whose current
/// device is another GPU), then clears a CUDA error that earlier work left behind so that it is
/// not blamed on this function. `Check()` after the function throws CudaError for the error the
/// function left (cudaGetLastError, which also resets it). The destructor restores the device.
/// While XLA captures the stream into a CUDA graph the device is left alone: XLA records on the
/// stream's own device, and asking the stream for its device would invalidate the capture.
/// However the call ends, the scope leaves no error behind on the thread: when the function
/// throws (BE_CUDA_CHECK on a failed cudaMemcpyAsync, say), the error that call recorded would
/// otherwise stay pending, and with the shared runtime (decision 136) it is XLA's runtime that
/// holds it: XLA's next kernel load on this thread peeks at it and fails ("There was an error
/// before calling cuModuleGetFunction"), blaming an unrelated program (seen on an H200).
class CudaCallScope {
 public:
  CudaCallScope(void* stream, const char* function) : stream_(stream), function_(function) {
    auto* cuda_stream = static_cast<cudaStream_t>(stream);
    CudaCaptureStatus capture{};
    int device = -1;
    if (HasStreamGetDevice() && stream != nullptr &&
        static_cast<int>(cudaStreamIsCapturing(cuda_stream, &capture)) == 0 &&
        static_cast<int>(capture) == 0 &&
        static_cast<int>(cudaStreamGetDevice(cuda_stream, &device)) == 0 &&
        static_cast<int>(cudaGetDevice(&previous_)) == 0 && previous_ != device) {
      const int status = static_cast<int>(cudaSetDevice(device));
      if (status != 0) {
        Throw(status, "making device " + std::to_string(device) + " of XLA's stream current");
      }
      restore_ = true;
    }
    (void)cudaGetLastError();
  }

  ~CudaCallScope() {
    if (!checked_) (void)cudaGetLastError();
    if (restore_) (void)cudaSetDevice(previous_);
  }

  /// Throws CudaError if the user's function left a CUDA error (a launch that failed, a grid or
  /// block of zero threads, too much shared memory, ...).
  void Check() {
    checked_ = true;  // cudaGetLastError below resets the error, whether or not it throws
    const int status = static_cast<int>(cudaGetLastError());
    if (status != 0) {
      Throw(status, "a kernel launch or CUDA call in " + std::string(function_) +
                        " failed and nothing checked it");
    }
#if defined(JAXCC_DEBUG_GUARDS)
    WaitForTheFunctionsKernels();
#endif
  }

  CudaCallScope(const CudaCallScope&) = delete;
  CudaCallScope& operator=(const CudaCallScope&) = delete;

 private:
  [[noreturn]] static void Throw(int status, const std::string& what) {
    const char* name = cudaGetErrorName(static_cast<CudaStatus>(status));
    const char* text = cudaGetErrorString(static_cast<CudaStatus>(status));
    std::string message = what + ": " + (name ? name : "CUDA error " + std::to_string(status)) +
                          " (" + (text ? text : "no description") + ")";
    if (status == 9) {  // cudaErrorInvalidConfiguration
      message += "; a grid or block of 0 threads is invalid: skip the launch when numel() == 0";
    }
    throw CudaError(message, status);
  }

#if defined(JAXCC_DEBUG_GUARDS)
  /// The debug profile only (decision 163): a kernel's fault (an illegal address, a trap) is
  /// reported asynchronously, at whatever synchronises next, usually one of XLA's own ops, which
  /// cannot say whose kernel it was. Waiting for XLA's stream after each call pins the fault on
  /// this function. Not while the stream is captured into a CUDA graph: nothing runs then, and a
  /// synchronisation would invalidate the capture.
  void WaitForTheFunctionsKernels() {
    auto* cuda_stream = static_cast<cudaStream_t>(stream_);
    CudaCaptureStatus capture{};
    if (cuda_stream == nullptr ||
        static_cast<int>(cudaStreamIsCapturing(cuda_stream, &capture)) != 0 ||
        static_cast<int>(capture) != 0) {
      return;
    }
    const int status = static_cast<int>(cudaStreamSynchronize(cuda_stream));
    if (status != 0) {
      Throw(status, "a kernel of " + std::string(function_) +
                        " failed on the GPU (found by the debug profile, which waits for each "
                        "call's kernels); a fault like this leaves the process's CUDA context "
                        "unusable, so restart the process, and run it under compute-sanitizer "
                        "(docs/usage.md, 'Debugging a kernel') for the thread and source line");
    }
  }
#endif

  void* stream_;
  const char* function_;
  int previous_ = -1;
  bool restore_ = false;
  bool checked_ = false;
};

}  // namespace jaxcc::detail

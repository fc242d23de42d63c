// What a generated CUDA FFI handler does around the user's function: make the device of XLA's
// stream current (and restore the previous one), clear a stale CUDA error before the call, and
// turn an error left by the call (a failed kernel launch, a zero-size grid) into a CudaError
// naming the function.
//
// Included only by generated CUDA wrapper units, which the host compiler builds without the CUDA
// include directory: the few runtime entry points needed are declared here, with the types the
// CUDA headers give them (cudaError_t is an int-sized enum, cudaStream_t `CUstream_st*`), and
// resolved by the CUDA runtime the module links. Do not include <cuda_runtime_api.h> in the same
// translation unit. `cudaStreamGetDevice` (CUDA >= 12.8) is a weak reference: with an older
// runtime it is null and the current device is left as it is. It is never called while the
// stream is being captured into a CUDA graph: the runtime rejects that query during a capture
// (cudaErrorStreamCaptureUnsupported) and the rejection invalidates the capture, whereas
// `cudaStreamIsCapturing` is capture-safe.
#pragma once

#include <string>

#include "jaxcc/check.h"

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;  // the CUDA headers' own definition

extern "C" {
int cudaGetLastError(void);
int cudaGetDevice(int* device);
int cudaSetDevice(int device);
const char* cudaGetErrorName(int error);
const char* cudaGetErrorString(int error);
int cudaStreamIsCapturing(cudaStream_t stream, int* capture_status);  // enum, 0: none
__attribute__((weak)) int cudaStreamGetDevice(cudaStream_t stream, int* device);
}

namespace jaxcc::detail {

/// Lives for the duration of one handler call. Constructed before the user's function: makes
/// the device XLA's stream belongs to current (multi-GPU: XLA may call on a thread whose current
/// device is another GPU), then clears a CUDA error that earlier work left behind so that it is
/// not blamed on this function. `Check()` after the function throws CudaError for the error the
/// function left (cudaGetLastError, which also resets it). The destructor restores the device.
/// While XLA captures the stream into a CUDA graph the device is left alone: XLA records on the
/// stream's own device, and asking the stream for its device would invalidate the capture.
class CudaCallScope {
 public:
  CudaCallScope(void* stream, const char* function) : function_(function) {
    auto* cuda_stream = static_cast<cudaStream_t>(stream);
    int capture = -1;
    int device = -1;
    if (&cudaStreamGetDevice != nullptr && stream != nullptr &&
        cudaStreamIsCapturing(cuda_stream, &capture) == 0 && capture == 0 &&
        cudaStreamGetDevice(cuda_stream, &device) == 0 && cudaGetDevice(&previous_) == 0 &&
        previous_ != device) {
      const int status = cudaSetDevice(device);
      if (status != 0) {
        Throw(status, "making device " + std::to_string(device) + " of XLA's stream current");
      }
      restore_ = true;
    }
    (void)cudaGetLastError();
  }

  ~CudaCallScope() {
    if (restore_) (void)cudaSetDevice(previous_);
  }

  /// Throws CudaError if the user's function left a CUDA error (a launch that failed, a grid or
  /// block of zero threads, too much shared memory, ...).
  void Check() const {
    const int status = cudaGetLastError();
    if (status != 0) {
      Throw(status, "a kernel launch or CUDA call in " + std::string(function_) +
                        " failed and nothing checked it");
    }
  }

  CudaCallScope(const CudaCallScope&) = delete;
  CudaCallScope& operator=(const CudaCallScope&) = delete;

 private:
  [[noreturn]] static void Throw(int status, const std::string& what) {
    const char* name = cudaGetErrorName(status);
    const char* text = cudaGetErrorString(status);
    std::string message = what + ": " + (name ? name : "CUDA error " + std::to_string(status)) +
                          " (" + (text ? text : "no description") + ")";
    if (status == 9) {  // cudaErrorInvalidConfiguration
      message += "; a grid or block of 0 threads is invalid: skip the launch when numel() == 0";
    }
    throw CudaError(message, status);
  }

  const char* function_;
  int previous_ = -1;
  bool restore_ = false;
};

}  // namespace jaxcc::detail

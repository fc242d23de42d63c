"""The C++ side of the Triton bridge: one XLA FFI target per (inputs, outputs) arity, compiled by
jaxcc's CUDA path, that launches a Triton kernel's cubin (or PTX) on XLA's stream.

The binary is loaded once per process with the CUDA runtime's library API (`cudaLibraryLoadData`,
context-independent) and launched with `cudaLaunchKernel`, `32 * num_warps` threads per program.
How the kernel's parameters are filled is described by a "plan", an int64 array built at trace
time: the parameter count, then per parameter a (kind, value) pair: a buffer index, a scalar whose
bytes sit in the value word itself (little-endian, so a 4-byte int or float is its low half), or
one of Triton's trailing scratch pointers (global and profile scratch), allocated stream-ordered
when the kernel asks for scratch memory and null otherwise. The binary, its name and the plan are
buffers Python keeps alive for the life of the process; their addresses arrive as int64
attributes together with the process id they belong to, so an executable serialised in another
process is refused instead of dereferencing a stale address.
"""

from __future__ import annotations

from .gpu_common import arity_function_name, arity_launcher

# Kinds of plan entries; bridges/triton.py builds plans with the same numbers.
PLAN_BUFFER, PLAN_SCALAR, PLAN_GLOBAL_SCRATCH, PLAN_PROFILE_SCRATCH = 0, 1, 2, 3

_PRELUDE = r"""
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "jaxcc/jaxcc.h"

namespace {

@PLAN_KINDS@

void ThrowCuda(cudaError_t status, const std::string& what) {
  throw std::runtime_error("triton_kernel: " + what + " failed: " + cudaGetErrorName(status) +
                           ": " + cudaGetErrorString(status));
}

// One loaded library per binary buffer; the buffers live as long as the process, so their
// addresses are stable keys. Loading is rare, launching is the hot path: a mutex suffices.
cudaKernel_t KernelFor(std::int64_t binary, std::int64_t name, std::int64_t shared_bytes) {
  static std::mutex mutex;
  static std::unordered_map<std::int64_t, cudaKernel_t> kernels;
  // (binary, device) pairs whose shared-memory limit was raised: the attribute is per device.
  static std::unordered_map<std::int64_t, std::vector<int>> opted_in;
  std::lock_guard<std::mutex> lock(mutex);
  cudaKernel_t kernel = nullptr;
  auto found = kernels.find(binary);
  if (found != kernels.end()) {
    kernel = found->second;
  } else {
    cudaLibrary_t library = nullptr;
    cudaError_t status = cudaLibraryLoadData(&library, reinterpret_cast<const void*>(binary),
                                             nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (status != cudaSuccess) {
      ThrowCuda(status, "loading the kernel's binary (cudaLibraryLoadData)");
    }
    status = cudaLibraryGetKernel(&kernel, library, reinterpret_cast<const char*>(name));
    if (status != cudaSuccess) {
      ThrowCuda(status, std::string("finding kernel ") + reinterpret_cast<const char*>(name));
    }
    kernels.emplace(binary, kernel);
  }
  // Triton's shared memory is all dynamic; above 48 KiB the kernel has to opt in, per device.
  if (shared_bytes > 48 * 1024) {
    int device = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status != cudaSuccess) ThrowCuda(status, "finding the current device (cudaGetDevice)");
    std::vector<int>& devices = opted_in[binary];
    bool done = false;
    for (int d : devices) done = done || d == device;
    if (!done) {
#if CUDART_VERSION >= 12050
      status = cudaKernelSetAttributeForDevice(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes),
          device);
#else  // older runtimes: the function form, which applies to the current device
      status = cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared_bytes));
#endif
      if (status != cudaSuccess) {
        ThrowCuda(status, "allowing " + std::to_string(shared_bytes) +
                              " bytes of shared memory (the GPU has less; use fewer num_stages "
                              "or smaller blocks)");
      }
      devices.push_back(device);
    }
  }
  return kernel;
}

// Stream-ordered scratch for one launch: allocated before it, freed after it on the same
// stream, so it is safe inside CUDA graphs and never outlives the kernel.
struct StreamScratch {
  void* pointer = nullptr;
  cudaStream_t stream = nullptr;
  StreamScratch(std::int64_t bytes, cudaStream_t on) : stream(on) {
    if (bytes <= 0) return;
    cudaError_t status = cudaMallocAsync(&pointer, static_cast<std::size_t>(bytes), stream);
    if (status != cudaSuccess) ThrowCuda(status, "allocating Triton scratch memory");
  }
  ~StreamScratch() {
    if (pointer != nullptr) cudaFreeAsync(pointer, stream);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
};

void LaunchTriton(const jaxcc::Tensor* const* tensors, int count, std::int64_t binary,
                  std::int64_t name, std::int64_t pid, std::int64_t gx, std::int64_t gy,
                  std::int64_t gz, std::int64_t num_warps, std::int64_t shared_bytes,
                  std::int64_t plan_address, std::int64_t global_scratch,
                  std::int64_t profile_scratch, std::int64_t stream_address) {
  if (pid != static_cast<std::int64_t>(getpid()) || binary == 0 || name == 0 ||
      plan_address == 0) {
    throw std::invalid_argument(
        "this triton kernel was compiled in another process (jax.export or a persistent "
        "compilation cache); triton_kernel launches are process-local: trace the function "
        "again here");
  }
  if (gx == 0 || gy == 0 || gz == 0) return;  // an empty grid launches nothing, as in Triton
  auto* stream = reinterpret_cast<cudaStream_t>(stream_address);
  cudaKernel_t kernel = KernelFor(binary, name, shared_bytes);
  const std::int64_t programs = gx * gy * gz;
  StreamScratch global(global_scratch * programs, stream);
  StreamScratch profile(profile_scratch * programs, stream);

  auto* plan = reinterpret_cast<std::int64_t*>(plan_address);
  const std::int64_t params = plan[0];
  std::vector<void*> pointers(static_cast<std::size_t>(params));
  std::vector<void*> args(static_cast<std::size_t>(params));
  for (std::int64_t p = 0; p < params; ++p) {
    const std::int64_t kind = plan[1 + 2 * p];
    std::int64_t* value = &plan[2 + 2 * p];
    switch (kind) {
      case kPlanBuffer: {
        if (*value < 0 || *value >= count) {
          throw std::invalid_argument("triton_kernel: the launch plan names buffer " +
                                      std::to_string(*value) + " of " + std::to_string(count));
        }
        const jaxcc::Tensor& t = *tensors[*value];
        pointers[p] = t.data_ptr();
        // The kernel was compiled assuming 16-byte aligned buffers (as XLA allocates them).
        if (reinterpret_cast<std::uintptr_t>(pointers[p]) % 16 != 0) {
          throw std::invalid_argument("triton_kernel: buffer " + std::to_string(*value) +
                                      " is not 16-byte aligned, which the kernel was compiled "
                                      "to assume");
        }
        args[p] = &pointers[p];
        break;
      }
      case kPlanScalar:  // its bytes are the value word
        args[p] = value;
        break;
      case kPlanGlobalScratch:
        pointers[p] = global.pointer;
        args[p] = &pointers[p];
        break;
      case kPlanProfileScratch:
        pointers[p] = profile.pointer;
        args[p] = &pointers[p];
        break;
      default:
        throw std::invalid_argument("triton_kernel: unknown launch plan entry " +
                                    std::to_string(kind));
    }
  }
  cudaError_t status = cudaLaunchKernel(
      reinterpret_cast<const void*>(kernel),
      dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz)),
      dim3(static_cast<unsigned>(32 * num_warps), 1, 1), args.data(),
      static_cast<std::size_t>(shared_bytes), stream);
  if (status != cudaSuccess) ThrowCuda(status, "launching the kernel (cudaLaunchKernel)");
}

}  // namespace
"""

_ATTRIBUTES = [
    "binary",
    "name",
    "pid",
    "gx",
    "gy",
    "gz",
    "num_warps",
    "shared_bytes",
    "plan",
    "global_scratch",
    "profile_scratch",
]


def function_name(n_in: int, n_out: int) -> str:
    return arity_function_name("triton", n_in, n_out)


def launcher_module(n_in: int, n_out: int, compute_capability=None):
    """The compiled launcher for this arity (built, cached and registered on first use)."""
    kinds = (
        f"constexpr std::int64_t kPlanBuffer = {PLAN_BUFFER}, kPlanScalar = {PLAN_SCALAR},\n"
        f"    kPlanGlobalScratch = {PLAN_GLOBAL_SCRATCH}, kPlanProfileScratch = "
        f"{PLAN_PROFILE_SCRATCH};"
    )
    return arity_launcher(
        "triton", _PRELUDE.replace("@PLAN_KINDS@", kinds), "LaunchTriton", _ATTRIBUTES, n_in,
        n_out, compute_capability, "triton_kernel",
    )  # fmt: skip

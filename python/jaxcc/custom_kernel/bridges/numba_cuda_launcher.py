"""The C++ side of the Numba-CUDA bridge: one XLA FFI target per (inputs, outputs) arity, compiled
by jaxcc's CUDA path, that launches a Numba-CUDA kernel's PTX on XLA's stream.

The PTX is loaded once per process with the CUDA runtime's library API (`cudaLibraryLoadData`,
context-independent, so every GPU gets it on first use) and launched with `cudaLaunchKernel`.
Arguments follow Numba's kernel ABI for a C-contiguous array of rank N, passed as separate kernel
parameters: meminfo (null), parent (null), nitems, itemsize, data, N extents, N byte strides.
The PTX text and the kernel name are NUL-terminated buffers that Python keeps alive for the life
of the process; their addresses arrive as int64 attributes with the process id they belong to,
so an executable serialised in another process is refused instead of dereferencing a stale
address.
"""

from __future__ import annotations

from .gpu_common import arity_function_name, arity_launcher

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

constexpr int kMaxRank = 16;

void ThrowCuda(cudaError_t status, const std::string& what) {
  throw std::runtime_error("numba_cuda_kernel: " + what + " failed: " +
                           cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

// One loaded library per PTX buffer; the buffers live as long as the process, so their
// addresses are stable keys. Loading is rare, launching is the hot path: a mutex suffices.
cudaKernel_t KernelFor(std::int64_t ptx, std::int64_t name) {
  static std::mutex mutex;
  static std::unordered_map<std::int64_t, cudaKernel_t> kernels;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = kernels.find(ptx);
  if (found != kernels.end()) return found->second;
  cudaLibrary_t library = nullptr;
  cudaError_t status = cudaLibraryLoadData(&library, reinterpret_cast<const void*>(ptx), nullptr,
                                           nullptr, 0, nullptr, nullptr, 0);
  if (status != cudaSuccess) ThrowCuda(status, "loading the kernel's PTX (cudaLibraryLoadData)");
  cudaKernel_t kernel = nullptr;
  status = cudaLibraryGetKernel(&kernel, library, reinterpret_cast<const char*>(name));
  if (status != cudaSuccess) {
    ThrowCuda(status, std::string("finding kernel ") + reinterpret_cast<const char*>(name));
  }
  kernels.emplace(ptx, kernel);
  return kernel;
}

void LaunchNumbaCuda(const jaxcc::Tensor* const* tensors, int count, std::int64_t ptx,
                     std::int64_t name, std::int64_t pid, std::int64_t gx, std::int64_t gy,
                     std::int64_t gz, std::int64_t bx, std::int64_t by, std::int64_t bz,
                     std::int64_t shared_mem, std::int64_t stream) {
  if (pid != static_cast<std::int64_t>(getpid()) || ptx == 0 || name == 0) {
    throw std::invalid_argument(
        "this numba-cuda kernel was compiled in another process (jax.export or a persistent "
        "compilation cache); numba-cuda kernels are process-local: trace the function again here");
  }
  cudaKernel_t kernel = KernelFor(ptx, name);
  // Values first (sized up front so the addresses taken below stay valid), then their addresses.
  std::vector<std::int64_t> words;
  words.reserve(static_cast<std::size_t>(count) * (5 + 2 * kMaxRank));
  std::vector<void*> args;
  args.reserve(words.capacity());
  auto push = [&](std::int64_t value) {
    words.push_back(value);
    args.push_back(&words.back());
  };
  for (int i = 0; i < count; ++i) {
    const jaxcc::Tensor& t = *tensors[i];
    const std::int64_t itemsize = static_cast<std::int64_t>(t.element_size());
    push(0);  // meminfo
    push(0);  // parent
    push(t.numel());
    push(itemsize);
    push(reinterpret_cast<std::int64_t>(t.data_ptr()));
    for (int d = 0; d < t.ndim(); ++d) push(t.size(d));
    std::int64_t stride = itemsize;
    std::vector<std::int64_t> strides(t.ndim());
    for (int d = t.ndim() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= t.size(d);
    }
    for (int d = 0; d < t.ndim(); ++d) push(strides[d]);
  }
  cudaError_t status = cudaLaunchKernel(
      reinterpret_cast<const void*>(kernel),
      dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz)),
      dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by), static_cast<unsigned>(bz)),
      args.data(), static_cast<std::size_t>(shared_mem), reinterpret_cast<cudaStream_t>(stream));
  if (status != cudaSuccess) ThrowCuda(status, "launching the kernel (cudaLaunchKernel)");
}

}  // namespace
"""

_ATTRIBUTES = ["ptx", "name", "pid", "gx", "gy", "gz", "bx", "by", "bz", "shared_mem"]


def function_name(n_in: int, n_out: int) -> str:
    return arity_function_name("numba_cuda", n_in, n_out)


def launcher_module(n_in: int, n_out: int, compute_capability=None):
    """The compiled launcher for this arity (built, cached and registered on first use)."""
    return arity_launcher(
        "numba_cuda", _PRELUDE, "LaunchNumbaCuda", _ATTRIBUTES, n_in, n_out, compute_capability,
        "numba_cuda_kernel",
    )  # fmt: skip

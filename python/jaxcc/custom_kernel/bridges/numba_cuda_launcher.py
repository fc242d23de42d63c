"""The C++ side of the Numba-CUDA bridge: one XLA FFI target per (inputs, outputs) arity, compiled
by jaxcc's CUDA path, that launches a Numba-CUDA kernel's PTX on XLA's stream.

The PTX is loaded once per process with the CUDA runtime's library API (`cudaLibraryLoadData`,
context-independent; `max_registers` from `@cuda.jit` becomes the JIT's register limit) by
`jaxcc_numba_cuda_preload`, which Python calls when the call is traced, on every device JAX uses,
so that no loading or PTX JIT happens inside a CUDA-graph capture; it is launched with
`cudaLaunchKernel` on the device of XLA's stream, which the FFI wrapper makes current.
Arguments follow Numba's kernel ABI for a C-contiguous array of rank N, passed as separate kernel
parameters: meminfo (null), parent (null), nitems, itemsize, data, N extents, N byte strides.
The PTX text and the kernel name are NUL-terminated buffers that Python keeps alive for the life
of the process; their addresses arrive as int64 attributes with the process id they belong to,
so an executable serialised in another process is refused instead of dereferencing a stale
address.
"""

from __future__ import annotations

from .launcher import arity_function_name, arity_launcher

PRELOAD_SYMBOL = "jaxcc_numba_cuda_preload"

_PRELUDE = r"""
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "jaxcc/jaxcc.h"
#define JAXCC_BRIDGE_NAME "numba_cuda_kernel"
#include "jaxcc/detail/launcher_support.h"

namespace {

using jaxcc::detail::CurrentDevice;
using jaxcc::detail::ThrowCuda;

constexpr int kMaxRank = 16;

// One loaded library per PTX buffer (the buffers live as long as the process, so their addresses
// are stable keys), made ready per device: loaded into the device's context, PTX JIT included.
// Loading is rare, launching is the hot path: a mutex suffices.
cudaKernel_t KernelFor(std::int64_t ptx, std::int64_t name, std::int64_t max_registers,
                       int device) {
  static std::mutex mutex;
  static std::map<std::int64_t, cudaKernel_t> kernels;
  static std::set<std::pair<std::int64_t, int>> ready;
  std::lock_guard<std::mutex> lock(mutex);
  cudaKernel_t kernel = nullptr;
  auto found = kernels.find(ptx);
  if (found != kernels.end()) {
    kernel = found->second;
  } else {
    cudaJitOption options[1] = {cudaJitMaxRegisters};
    void* values[1] = {reinterpret_cast<void*>(static_cast<std::uintptr_t>(max_registers))};
    cudaLibrary_t library = nullptr;
    cudaError_t status =
        cudaLibraryLoadData(&library, reinterpret_cast<const void*>(ptx), options, values,
                            max_registers > 0 ? 1 : 0, nullptr, nullptr, 0);
    if (status != cudaSuccess) {
      ThrowCuda(status, "loading the kernel's PTX (cudaLibraryLoadData)");
    }
    status = cudaLibraryGetKernel(&kernel, library, reinterpret_cast<const char*>(name));
    if (status != cudaSuccess) {
      ThrowCuda(status, std::string("finding kernel ") + reinterpret_cast<const char*>(name));
    }
    kernels.emplace(ptx, kernel);
  }
  if (ready.count({ptx, device}) == 0) {
    // Forces the (lazy) load into this device's context now, PTX JIT included. A runtime that
    // refuses the query for a library kernel only defers the load to the first launch.
    cudaFuncAttributes attributes;
    if (cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)) != cudaSuccess) {
      (void)cudaGetLastError();
    }
    ready.insert({ptx, device});
  }
  return kernel;
}

void LaunchNumbaCuda(const jaxcc::Tensor* const* tensors, int count, std::int64_t ptx,
                     std::int64_t name, std::int64_t pid, std::int64_t gx, std::int64_t gy,
                     std::int64_t gz, std::int64_t bx, std::int64_t by, std::int64_t bz,
                     std::int64_t shared_mem, std::int64_t max_registers,
                     std::int64_t stream) {
  if (pid != static_cast<std::int64_t>(getpid()) || ptx == 0 || name == 0) {
    throw std::invalid_argument(
        "this numba-cuda kernel was compiled in another process (jax.export or a persistent "
        "compilation cache); numba-cuda kernels are process-local: trace the function again here");
  }
  // The FFI wrapper made the device of XLA's stream current.
  cudaKernel_t kernel = KernelFor(ptx, name, max_registers, CurrentDevice());
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

// Called from Python when a call is traced: loads the binary on the devices JAX uses (their
// CUDA ordinals in `devices`; every device when `count` < 0), so that no loading or PTX JIT
// happens inside a CUDA-graph capture. 0 on success; otherwise the error is written to
// `message` (NUL-terminated, at most `size` bytes).
extern "C" __attribute__((visibility("default"))) int jaxcc_numba_cuda_preload(
    std::int64_t ptx, std::int64_t name, std::int64_t max_registers, const std::int64_t* devices,
    std::int64_t count, char* message, std::int64_t size) {
  return jaxcc::detail::PreloadOnDevices(devices, count, message, size, [&](int device) {
    KernelFor(ptx, name, max_registers, device);
  });
}
"""

_ATTRIBUTES = [
    "ptx", "name", "pid", "gx", "gy", "gz", "bx", "by", "bz", "shared_mem", "max_registers",
]  # fmt: skip


def function_name(n_in: int, n_out: int) -> str:
    return arity_function_name("numba_cuda", n_in, n_out)


def launcher_module(n_in: int, n_out: int, compute_capability=None):
    """The compiled launcher for this arity and architecture (built, cached and registered on
    first use)."""
    return arity_launcher(
        "numba_cuda", _PRELUDE, "LaunchNumbaCuda", _ATTRIBUTES, n_in, n_out, "numba_cuda_kernel",
        compute_capability=compute_capability,
    )  # fmt: skip

"""The C++ side of the Triton bridge: one XLA FFI target per (inputs, outputs) arity and
architecture, compiled by jaxcc's CUDA path, that launches a Triton kernel's cubin (or PTX) on
XLA's stream.

The binary is loaded with the CUDA runtime's library API (`cudaLibraryLoadData`, context-
independent) by `jaxcc_triton_preload`, which Python calls when the call is traced, on every device
JAX uses: module loading, PTX JIT and the shared-memory opt-in never happen inside a CUDA-graph
capture (issue 15). The launch uses the configuration Triton compiled, not the one requested: `32 *
num_warps` threads from the compiled metadata (warp-specialised kernels grow, e.g. 4 -> 12 warps),
`num_ctas`-wide clusters, cooperative and programmatic-dependent launches, all through
`cudaLaunchKernelExC`. How the kernel's parameters are filled is described by a "plan", an int64
array built at trace time: the parameter count, then per parameter a (kind, value) pair: a buffer
index, a scalar whose bytes sit in the value word itself (little-endian, so a 4-byte int or float is
its low half), or one of Triton's trailing scratch pointers (global and profile scratch). Scratch is
allocated stream-ordered per launch, so kernels that need it are launched by the `_nograph`
launcher, which XLA never captures in a CUDA graph (docs/decisions.md, decision 55), and a launch
that finds its stream capturing refuses instead of allocating. The binary, its name and the plan are
buffers Python keeps alive for the life of the process; their addresses arrive as int64 attributes
together with the process id they belong to, so an executable serialised in another process is
refused instead of dereferencing a stale address.
"""

from __future__ import annotations

from .launcher import arity_function_name, arity_launcher

# Kinds of plan entries; bridges/triton.py builds plans with the same numbers.
PLAN_BUFFER, PLAN_SCALAR, PLAN_GLOBAL_SCRATCH, PLAN_PROFILE_SCRATCH = 0, 1, 2, 3
# Bits of the `launch_flags` attribute.
FLAG_COOPERATIVE, FLAG_PDL = 1, 2
PRELOAD_SYMBOL = "jaxcc_triton_preload"

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
#define JAXCC_BRIDGE_NAME "triton_kernel"
#include "jaxcc/detail/launcher_support.h"

namespace {

using jaxcc::detail::CurrentDevice;
using jaxcc::detail::ThrowCuda;

@PLAN_KINDS@

// One loaded library per binary buffer (the buffers live as long as the process, so their
// addresses are stable keys), made ready per device: loaded into the device's context and, above
// 48 KiB of shared memory, opted in. Loading is rare, launching is the hot path: a mutex suffices.
cudaKernel_t KernelFor(std::int64_t binary, std::int64_t name, std::int64_t shared_bytes,
                       int device) {
  static std::mutex mutex;
  static std::map<std::int64_t, cudaKernel_t> kernels;
  static std::set<std::pair<std::int64_t, int>> ready;
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
  if (ready.count({binary, device}) != 0) return kernel;
  // Forces the (lazy) load into this device's context now, PTX JIT included. A runtime that
  // refuses the query for a library kernel only defers the load to the first launch.
  cudaFuncAttributes attributes;
  cudaError_t status = cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel));
  if (status != cudaSuccess) (void)cudaGetLastError();
  // Triton's shared memory is all dynamic; above 48 KiB the kernel has to opt in, per device.
  if (shared_bytes > 48 * 1024) {
#if CUDART_VERSION >= 12050
    status = cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(shared_bytes), device);
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
  }
  ready.insert({binary, device});
  return kernel;
}

// Stream-ordered scratch for one launch: allocated before it, freed after it on the same
// stream. Kernels that need it are launched by the launcher without the command-buffer trait,
// and a capturing stream is refused: allocation nodes do not belong in XLA's graphs.
struct StreamScratch {
  void* pointer = nullptr;
  cudaStream_t stream = nullptr;
  StreamScratch(std::int64_t bytes, cudaStream_t on) : stream(on) {
    if (bytes <= 0) return;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t status = cudaStreamIsCapturing(stream, &capture);
    if (status != cudaSuccess) ThrowCuda(status, "asking whether the stream is capturing");
    if (capture != cudaStreamCaptureStatusNone) {
      throw std::invalid_argument(
          "triton_kernel: this kernel needs scratch memory, which is allocated per launch, but "
          "its stream is being captured in a CUDA graph; run it outside the graph (jaxcc "
          "launches such kernels without the command-buffer trait, so only your own capture "
          "can get here)");
    }
    status = cudaMallocAsync(&pointer, static_cast<std::size_t>(bytes), stream);
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
                  std::int64_t gz, std::int64_t num_warps, std::int64_t num_ctas,
                  std::int64_t launch_flags, std::int64_t shared_bytes,
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
  // The FFI wrapper made the device of XLA's stream current.
  cudaKernel_t kernel = KernelFor(binary, name, shared_bytes, CurrentDevice());
  const std::int64_t programs = gx * gy * gz * num_ctas;
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
  // The configuration Triton compiled (as Triton's own launcher does): num_ctas-wide clusters
  // along x, cooperative and programmatic-dependent launches as launch attributes.
  cudaLaunchAttribute attributes[3];
  unsigned used = 0;
  if (num_ctas != 1) {
    attributes[used].id = cudaLaunchAttributeClusterDimension;
    attributes[used].val.clusterDim.x = static_cast<unsigned>(num_ctas);
    attributes[used].val.clusterDim.y = 1;
    attributes[used].val.clusterDim.z = 1;
    ++used;
  }
  if (launch_flags & kFlagCooperative) {
    attributes[used].id = cudaLaunchAttributeCooperative;
    attributes[used].val.cooperative = 1;
    ++used;
  }
  if (launch_flags & kFlagPdl) {
    attributes[used].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[used].val.programmaticStreamSerializationAllowed = 1;
    ++used;
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(gx * num_ctas), static_cast<unsigned>(gy),
                        static_cast<unsigned>(gz));
  config.blockDim = dim3(static_cast<unsigned>(32 * num_warps), 1, 1);
  config.dynamicSmemBytes = static_cast<std::size_t>(shared_bytes);
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = used;
  cudaError_t status =
      cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(kernel), args.data());
  if (status != cudaSuccess) ThrowCuda(status, "launching the kernel (cudaLaunchKernelExC)");
}

}  // namespace

// Called from Python when a call is traced: loads the binary on the devices JAX uses (their
// CUDA ordinals in `devices`; every device when `count` < 0), so that no loading or PTX JIT
// happens inside a CUDA-graph capture. 0 on success; otherwise the error is written to
// `message` (NUL-terminated, at most `size` bytes).
extern "C" __attribute__((visibility("default"))) int jaxcc_triton_preload(
    std::int64_t binary, std::int64_t name, std::int64_t shared_bytes, const std::int64_t* devices,
    std::int64_t count, char* message, std::int64_t size) {
  return jaxcc::detail::PreloadOnDevices(devices, count, message, size, [&](int device) {
    KernelFor(binary, name, shared_bytes, device);
  });
}
"""

_ATTRIBUTES = [
    "binary",
    "name",
    "pid",
    "gx",
    "gy",
    "gz",
    "num_warps",
    "num_ctas",
    "launch_flags",
    "shared_bytes",
    "plan",
    "global_scratch",
    "profile_scratch",
]


def function_name(n_in: int, n_out: int) -> str:
    return arity_function_name("triton", n_in, n_out)


def launcher_module(n_in: int, n_out: int, compute_capability=None, allow_cuda_graph=True):
    """The compiled launcher for this arity and architecture (built, cached and registered on
    first use); `allow_cuda_graph=False` for kernels that allocate scratch memory per launch."""
    kinds = (
        f"constexpr std::int64_t kPlanBuffer = {PLAN_BUFFER}, kPlanScalar = {PLAN_SCALAR},\n"
        f"    kPlanGlobalScratch = {PLAN_GLOBAL_SCRATCH}, kPlanProfileScratch = "
        f"{PLAN_PROFILE_SCRATCH};\n"
        f"constexpr std::int64_t kFlagCooperative = {FLAG_COOPERATIVE}, kFlagPdl = {FLAG_PDL};"
    )
    return arity_launcher(
        "triton", _PRELUDE.replace("@PLAN_KINDS@", kinds), "LaunchTriton", _ATTRIBUTES, n_in,
        n_out, "triton_kernel", compute_capability=compute_capability,
        allow_cuda_graph=allow_cuda_graph,
    )  # fmt: skip

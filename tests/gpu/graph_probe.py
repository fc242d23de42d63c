"""Proof that XLA captures a jaxcc CUDA call in a command buffer (CUDA graph), not a guess from HLO
text: a probe kernel whose handler counts its calls and how many of them ran while XLA's stream
was being captured (`cudaStreamIsCapturing`). Captured in a graph, the handler runs when XLA
records the graph and the launches replay without it; not captured, it runs once per execution
and never while capturing.

Used by tests/gpu/test_cuda_kernels.py and benchmarks/bench_cuda_gpu.py, in a fresh process with
`GRAPH_XLA_FLAGS` set before JAX starts (XLA reads its flags once).
"""

from __future__ import annotations

import ctypes

# Force command buffers for custom calls, whatever their size: the handler's trait then decides.
GRAPH_XLA_FLAGS = "--xla_gpu_enable_command_buffer=+CUSTOM_CALL --xla_gpu_graph_min_graph_size=1"
# Newer XLA captures compatible custom calls whatever the graph size and may drop the size flag;
# an unknown flag aborts XLA at start, so `graph_xla_flags()` leaves it out when XLA refuses it.
_SIZE_FLAG = "--xla_gpu_graph_min_graph_size=1"


def graph_xla_flags() -> str:
    """GRAPH_XLA_FLAGS as far as this XLA accepts them (checked in a throwaway process)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, XLA_FLAGS=GRAPH_XLA_FLAGS)
    done = subprocess.run(
        [sys.executable, "-c", "import jax; jax.devices()"], capture_output=True, text=True,
        env=env, timeout=300,
    )  # fmt: skip
    if done.returncode != 0 and "min_graph_size" in done.stderr:
        return GRAPH_XLA_FLAGS.replace(_SIZE_FLAG, "").strip()
    return GRAPH_XLA_FLAGS


def probe_process_env(cache_dir, runtime: str) -> dict:
    """The environment of a fresh probe process of the GPU tests: its own cache, the CUDA runtime
    modules link (decision 136), tests/ and tests/gpu importable, and graph capture forced."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, JAXCC_CUDA_RUNTIME=runtime, JAXCC_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(here), here])
    env["XLA_FLAGS"] = graph_xla_flags()
    return env


def first_gpu_arch() -> str:
    """The compute capability of GPU 0, as nvidia-smi says it ("9.0")."""
    import subprocess

    return subprocess.run(
        ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
        capture_output=True, text=True, timeout=60,
    ).stdout.split()[0]  # fmt: skip


PROBE_SOURCE = r"""
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "jaxcc/jaxcc.h"

namespace {
std::atomic<std::int64_t> calls{0};
std::atomic<std::int64_t> captured{0};

__global__ void scale_kernel(const float* x, float* out, std::int64_t n, float factor) {
  std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = x[i] * factor;
}
}  // namespace

// out = x * factor; counts the call, and whether XLA's stream was capturing when it was made.
void probe_scale(const jaxcc::Tensor x, jaxcc::Tensor out, float factor, int64_t stream) {
  auto s = reinterpret_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &status) == cudaSuccess && status == cudaStreamCaptureStatusActive) {
    captured.fetch_add(1);
  }
  calls.fetch_add(1);
  const std::int64_t n = out.numel();
  if (n == 0) return;
  scale_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(
      x.data_ptr<float>(), out.data_ptr<float>(), n, factor);
}

extern "C" __attribute__((visibility("default"))) std::int64_t probe_calls() { return calls.load(); }
extern "C" __attribute__((visibility("default"))) std::int64_t probe_captured() {
  return captured.load();
}
"""


def load_probe(name: str, allow_cuda_graph: bool):
    """(module, counts) where counts() returns (handler calls, calls made while capturing)."""
    import jaxcc

    module = jaxcc.load_cuda_inline(
        name, PROBE_SOURCE, ["probe_scale"], allow_cuda_graph=allow_cuda_graph
    )
    library = ctypes.CDLL(module.path)
    library.probe_calls.restype = library.probe_captured.restype = ctypes.c_int64

    def counts() -> tuple[int, int]:
        return int(library.probe_calls()), int(library.probe_captured())

    return module, counts


def run(name: str, allow_cuda_graph: bool, executions: int = 5) -> dict:
    """Runs a jitted two-call function `executions` times; returns what the probe saw."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    module, counts = load_probe(name, allow_cuda_graph)

    @jax.jit
    def twice(x):
        return module.probe_scale(module.probe_scale(x, factor=2.0), factor=0.5)

    x = jnp.arange(4096, dtype=jnp.float32)
    for _ in range(executions):
        y = twice(x)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    calls, captured = counts()
    return {"executions": executions, "handler_calls": calls, "captured_calls": captured}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(run(sys.argv[1], sys.argv[2] == "1")))

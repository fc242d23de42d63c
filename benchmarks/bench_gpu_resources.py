"""Per-call resources on a GPU: what holding them the jaxcc way saves (issue 41).

Three pairs, each the same work, timed side by side per jitted call (rounds interleave the
pair, each figure the median of the rounds' per-call means; the per-call side is what a kernel
without jaxcc's State or Scratch must do):
  saxpy    y = 2x + y0 with cuBLAS: the handle in a per-call-site `jaxcc::State<Cublas>` vs
           cublasCreate/cublasDestroy in every call
  scratch  two kernels through a workspace of n floats: an XLA-placed `jaxcc::Scratch` vs
           cudaMalloc/cudaFree in every call
  table    a gather from a 4 MiB table built on the host and uploaded: once per call site in a
           `jaxcc::State<Table>` vs rebuilt (allocated, filled, copied, freed) in every call
Sources: benchmarks/gpu_resources_source.py (also tests/gpu/test_state_gpu.py's). Needs an
NVIDIA GPU and a CUDA-enabled jaxlib; without one it says so and exits 0.

Run:  python benchmarks/bench_gpu_resources.py [--rounds 7] [--calls 50] [--n 1048576] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_resources_source  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from interleave import per_call_samples  # noqa: E402

TABLE = 1 << 20  # floats: 4 MiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--n", type=int, default=1 << 20)
    parser.add_argument("--json")
    args = parser.parse_args()
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        print("no GPU visible to JAX: nothing to measure")
        return 0
    # No graph trait on either side: the per-call variants allocate and synchronise.
    mod = gpu_resources_source.load("bench_gpu_resources", allow_cuda_graph=False)
    n = args.n
    f32 = jax.ShapeDtypeStruct((n,), jnp.float32)
    x = jnp.linspace(-1.0, 1.0, n, dtype=jnp.float32, device=gpu)
    idx = jnp.arange(n, dtype=jnp.int32, device=gpu)
    pairs = {
        "saxpy": (
            jax.jit(lambda x: mod.saxpy_state(x, x, outs=f32, alpha=2.0)),
            jax.jit(lambda x: mod.saxpy_per_call(x, x, outs=f32, alpha=2.0)),
            (x,),
        ),
        "scratch": (
            jax.jit(lambda x: mod.twopass_scratch(x, scratch_bytes=x.size * 4)),
            jax.jit(mod.twopass_malloc),
            (x,),
        ),
        "table": (
            jax.jit(lambda i: mod.lookup_state(i, outs=f32, table_size=TABLE)),
            jax.jit(lambda i: mod.lookup_rebuild(i, outs=f32, table_size=TABLE)),
            (idx,),
        ),
    }
    print(f"{gpu.device_kind}, jax {jax.__version__}, n = {n}, {args.rounds} x {args.calls} calls")
    rows = {}
    for name, (held, per_call, call_args) in pairs.items():
        cases = [(held, call_args), (per_call, call_args)]
        samples = per_call_samples(cases, args.calls, args.rounds)
        held_s, per_call_s = (statistics.median(rounds_of) for rounds_of in samples)
        rows[name] = {"held_us": held_s * 1e6, "per_call_us": per_call_s * 1e6,
                      "per_call_over_held": per_call_s / held_s}  # fmt: skip
        print(
            f"{name:8s} held {held_s * 1e6:9.2f} us   per call {per_call_s * 1e6:9.2f} us"
            f"   per call / held {per_call_s / held_s:6.2f}x"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": gpu.device_kind, "n": n, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

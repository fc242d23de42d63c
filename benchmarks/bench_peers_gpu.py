"""jaxcc against brainevent and TVM-FFI (+ jax-tvm-ffi) on an NVIDIA GPU, side by side: the same
vector_add CUDA kernel (tests/cuda_sources.py; TVM-FFI's copy differs only in its TensorView
signature and reading the stream from TVMFFIEnvGetStream) through each tool.

Rows:
  cold       cold build of the module in a fresh process (empty cache), each tool's default flags,
             for the architecture of the GPU here (the load call alone, as for warm)
  warm       warm load in a fresh process (cache hit), after `import jax`, JAX's GPU backend and
             the tool's import (the timer covers the load call alone)
  per_call   per jitted call at 16 / 4096 / 65536 / 16M floats, every side in one process,
             interleaved round by round (medians)
  fori_loop  per iteration of a 100-step lax.fori_loop of vector_add, with each tool's CUDA-graph
             setting on (XLA told to capture one-call bodies: the handler runs at capture only)
             and off (the handler runs on every iteration: this row shows the handlers' cost)
Sides run in turns round by round; a side whose package is missing is left out and said so.
Ratios are side / jaxcc (below 1: the peer is faster).

Run:  python benchmarks/bench_peers_gpu.py [--rounds N] [--calls-only] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "gpu"))
from bench_peers import available_sides, versions  # noqa: E402
from cuda_sources import VECTOR_ADD  # noqa: E402
from graph_probe import graph_xla_flags  # noqa: E402

SIDES = ("jaxcc", "brainevent", "tvm_ffi")
SIZES = (16, 4096, 65536, 1 << 24)

TVM_SOURCE = r"""
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) out[idx] = a[idx] + b[idx];
}

void vector_add(tvm::ffi::TensorView a, tvm::ffi::TensorView b, tvm::ffi::TensorView out) {
    int n = static_cast<int>(a.numel());
    auto stream = static_cast<cudaStream_t>(
        TVMFFIEnvGetStream(a.device().device_type, a.device().device_id));
    add_kernel<<<(n + 255) / 256, 256, 0, stream>>>(
        static_cast<const float*>(a.data_ptr()), static_cast<const float*>(b.data_ptr()),
        static_cast<float*>(out.data_ptr()), n);
}
"""

# Loads `side`'s module (name `module`) and returns the FFI target name of vector_add.
LOAD = r"""
def load(side, module, jaxcc_src, tvm_src, graph=True):
    if side == "jaxcc":
        import jaxcc
        mod = jaxcc.load_cuda_inline(module, jaxcc_src, allow_cuda_graph=graph)
        return mod.targets["vector_add"]
    if side == "brainevent":
        import brainevent
        brainevent.load_cuda_inline(module, jaxcc_src, allow_cuda_graph=graph)
        return module + ".vector_add"
    import tvm_ffi.cpp, jax_tvm_ffi
    lib = tvm_ffi.cpp.load_inline(module, cuda_sources=tvm_src, functions=["vector_add"])
    jax_tvm_ffi.register_ffi_target(module + ".vector_add", lib.vector_add, platform="gpu",
                                    allow_cuda_graph=graph)
    return module + ".vector_add"
"""

LOAD_TIMED = (
    LOAD
    + r"""
import sys, time, json
side, module, jaxcc_src, tvm_src = sys.argv[1:5]
import jax
jax.devices("gpu")
if side == "jaxcc":
    import jaxcc
elif side == "brainevent":
    import brainevent
else:
    import tvm_ffi.cpp, jax_tvm_ffi
start = time.perf_counter()
load(side, module, jaxcc_src, tvm_src)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""
)

CALLS = (
    LOAD
    + r"""
import sys, time, json, statistics
sides, jaxcc_src, tvm_src = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4])
sizes = [int(s) for s in sys.argv[5].split(",")]
import jax, jax.numpy as jnp, numpy as np

def call_of(target):
    def f(a, b):
        return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(a.shape, a.dtype))(a, b)
    return f

calls = {s: call_of(load(s, "pcg_" + s, jaxcc_src, tvm_src)) for s in sides}
nograph = {s: call_of(load(s, "pcn_" + s, jaxcc_src, tvm_src, graph=False)) for s in sides}

def timed_rounds(fns, args, repeats, per):
    # Sides take turns, starting one later each round, so no side always runs first.
    samples = {s: [] for s in fns}
    order = list(fns)
    for r in range(rounds):
        for s in order[r % len(order):] + order[:r % len(order)]:
            f = fns[s]
            jax.block_until_ready(f(*args))
            start = time.perf_counter()
            for _ in range(repeats):
                out = f(*args)
            jax.block_until_ready(out)
            samples[s].append((time.perf_counter() - start) / repeats / per * 1e6)
    return {s: statistics.median(v) for s, v in samples.items()}

result = {"per_call_us": {}}
for n in sizes:
    a = jnp.arange(n, dtype=jnp.float32)
    b = jnp.ones(n, jnp.float32)
    jitted = {s: jax.jit(f) for s, f in calls.items()}
    for s, f in jitted.items():
        np.testing.assert_allclose(np.asarray(f(a, b)[:16]), np.arange(min(n, 16)) + 1.0)
    repeats = 200 if n <= 65536 else 20
    result["per_call_us"][str(n)] = timed_rounds(jitted, (a, b), repeats, 1)

x = jnp.ones(4096, jnp.float32)
for label, table in (("fori_loop_graph_us", calls), ("fori_loop_no_graph_us", nograph)):
    loops = {s: jax.jit(lambda v, f=f: jax.lax.fori_loop(0, 100, lambda i, w: f(w, x), v))
             for s, f in table.items()}
    for s, f in loops.items():
        np.testing.assert_allclose(np.asarray(f(x)[:4]), 101.0)
    result[label] = timed_rounds(loops, (x,), 10, 100)
print(json.dumps(result))
"""
)


def run_json(python: str, code: str, args: list[str], env: dict[str, str]) -> dict:
    done = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, env=env,
                          timeout=600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def side_env(side: str, cache: str) -> dict[str, str]:
    # Each tool reads its cache directory from its own variable; all of them point under `cache`.
    env = dict(os.environ)
    env["JAXCC_CACHE_DIR"] = os.path.join(cache, "jaxcc")
    env["BRAINEVENT_CACHE_DIR"] = os.path.join(cache, "brainevent")
    env["TVM_FFI_CACHE_DIR"] = os.path.join(cache, "tvm_ffi")
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return env


def calls_env(cache: str) -> dict[str, str]:
    # XLA captures a one-call loop body in a command buffer only when told to (bench_cuda_gpu.py).
    env = side_env("all", cache)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + graph_xla_flags()).strip()
    return env


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument(
        "--calls-only", action="store_true", help="skip the cold-build and warm-load rows"
    )
    args = parser.parse_args()
    python = args.python
    arch = subprocess.run(
        [python, "-c", "import jax; print(jax.devices('gpu')[0].compute_capability)"],
        capture_output=True, text=True,
    )  # fmt: skip
    if arch.returncode != 0:
        print("no GPU backend: nothing to measure (this benchmark needs an NVIDIA GPU)")
        return 0
    os.environ.setdefault("TVM_FFI_CUDA_ARCH_LIST", arch.stdout.strip())
    found = versions(python)
    sides = available_sides(found)
    print(f"sides: {', '.join(sides)}; versions: {json.dumps(found)}")
    missing = [s for s in SIDES if s not in sides]
    if missing:
        print(f"left out (package not installed): {', '.join(missing)}")

    result: dict = {"versions": found, "sides": sides, "rounds": args.rounds}
    cold = {s: [] for s in sides}
    warm = {s: [] for s in sides}
    with tempfile.TemporaryDirectory() as root:
        for r in range(0 if args.calls_only else args.rounds):
            for s in sides:
                cache = os.path.join(root, f"{s}_{r}")
                load_args = [s, f"peer_gpu_{r}", VECTOR_ADD, TVM_SOURCE]
                cold[s].append(
                    run_json(python, LOAD_TIMED, load_args, side_env(s, cache))["seconds"]
                )
                warm[s].append(
                    run_json(python, LOAD_TIMED, load_args, side_env(s, cache))["seconds"]
                )
        calls = run_json(
            python, CALLS,
            [",".join(sides), VECTOR_ADD, TVM_SOURCE, str(args.rounds),
             ",".join(map(str, SIZES))],
            calls_env(os.path.join(root, "calls")),
        )  # fmt: skip
    if not args.calls_only:
        result["cold_s"] = {s: statistics.median(v) for s, v in cold.items()}
        result["warm_ms"] = {s: statistics.median(v) * 1e3 for s, v in warm.items()}
    result.update(calls)

    def row(label, values, unit, fmt="{:.2f}"):
        cells = [f"{fmt.format(values[s])} {unit}" for s in sides]
        ratios = [f"{values[s] / values['jaxcc']:.2f}x" for s in sides[1:]]
        print(f"{label:<34} " + " | ".join(f"{c:>12}" for c in cells)
              + ("   ratios: " + ", ".join(ratios) if ratios else ""))  # fmt: skip

    print(f"{'':<34} " + " | ".join(f"{s:>12}" for s in sides))
    if not args.calls_only:
        row("cold build", result["cold_s"], "s")
        row("warm load, fresh process", result["warm_ms"], "ms")
    for n, values in result["per_call_us"].items():
        row(f"per jitted call, {n} floats", values, "us")
    row("fori_loop iteration, graph", result["fori_loop_graph_us"], "us")
    row("fori_loop iteration, no graph", result["fori_loop_no_graph_us"], "us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

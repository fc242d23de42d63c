"""First call of a new Numba CPU kernel: jaxcc's numba_kernel against brainevent 0.3.0's.

What a user waits for when operator code makes a fresh `@numba.njit` kernel per configuration
(issue 22). Each figure is the wall time from wrapping the kernel to the first result of a
`jax.jit` call (wrap, trace, compile the kernel, lower, XLA compile, run), measured in a child
process after its imports and one unrelated jitted call (so JAX's own first-jit set-up is not
counted on either side):
  fresh       the first kernel of a fresh process, with an empty jaxcc cache
  second      a second new kernel (same buffer types, other code) in that same process
  reuse_new   a third new kernel with other buffer types (float64, rank 2) in that process
  process2    a new process running the first kernel again, the cache kept (for jaxcc: the
              compiled entry points come from the cache; brainevent keeps none, so it compiles
              again)
Sides are interleaved round by round; medians are printed with jaxcc/brainevent ratios.

Run:  python benchmarks/bench_first_call.py --brainevent-python PY312 [--rounds 7]
      (PY312: a Python with brainevent 0.3.0 and jaxcc installed, e.g. build/venv312/bin/python)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
system = sys.argv[1]
import jax, jax.numpy as jnp, numba, numpy as np
if system == "jaxcc":
    from jaxcc import numba_kernel
else:
    from brainevent import numba_kernel
jax.jit(lambda v: v * 2)(jnp.ones(4)).block_until_ready()

def make(scale):
    @numba.njit
    def kernel(x, out):
        for i in range(out.size):
            out[i] = x[i] * scale + 1
    return kernel

@numba.njit
def kernel2d(x, out):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = x[i, j] - 1

def first(kernel, x):
    start = time.perf_counter()
    f = jax.jit(numba_kernel(kernel, jax.ShapeDtypeStruct(x.shape, x.dtype)))
    f(x).block_until_ready()
    return time.perf_counter() - start

x = jnp.arange(16, dtype=jnp.float32)
result = {"fresh": first(make(3.0), x)}
if sys.argv[2] == "all":
    result["second"] = first(make(5.0), x)
    result["reuse_new"] = first(kernel2d, jnp.ones((4, 4), jnp.float64))
print("RESULT" + json.dumps(result))
"""


def run_child(python: str, system: str, what: str, env: dict) -> dict:
    out = subprocess.run(
        [python, "-c", CHILD, system, what], capture_output=True, text=True, env=env, check=False
    )
    for line in out.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[len("RESULT") :])
    raise RuntimeError(f"{system} child failed:\n{out.stdout}\n{out.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brainevent-python", default=sys.executable)
    parser.add_argument("--jaxcc-python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    env = dict(os.environ, JAX_PLATFORMS="cpu", NUMBA_CACHE_DIR=tempfile.mkdtemp())
    rows: dict[tuple[str, str], list[float]] = {}
    # The arity trampoline is a C++ module built once per machine: build it once here, so that
    # every round measures the Numba side, not one g++ run.
    trampolines = tempfile.mkdtemp(prefix="jaxcc-trampolines-")
    run_child(args.jaxcc_python, "jaxcc", "one", dict(env, JAXCC_CACHE_DIR=trampolines))
    for entry in os.listdir(trampolines):
        if entry.startswith("numba_"):  # the Numba entry points: each round starts without
            shutil.rmtree(os.path.join(trampolines, entry))
    for r in range(args.rounds):
        for system, python in (
            ("jaxcc", args.jaxcc_python),
            ("brainevent", args.brainevent_python),
        ):
            cache = os.path.join(tempfile.mkdtemp(), "cache")
            shutil.copytree(trampolines, cache)
            child_env = dict(env, JAXCC_CACHE_DIR=cache)
            first = run_child(python, system, "all", child_env)
            again = run_child(python, system, "one", child_env)
            for what, value in (*first.items(), ("process2", again["fresh"])):
                rows.setdefault((system, what), []).append(value)
            shutil.rmtree(cache, ignore_errors=True)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{'row':<12} {'jaxcc ms':>10} {'brainevent ms':>14} {'ratio':>7}")
    for what in ("fresh", "second", "reuse_new", "process2"):
        a = statistics.median(rows[("jaxcc", what)]) * 1e3
        b = statistics.median(rows[("brainevent", what)]) * 1e3
        print(f"{what:<12} {a:>10.1f} {b:>14.1f} {a / b:>7.2f}")
    fresh = statistics.median(rows[("jaxcc", "fresh")])
    print(f"jaxcc process2 / fresh: {statistics.median(rows[('jaxcc', 'process2')]) / fresh:.2f}")
    print(time.strftime("%Y-%m-%d %H:%M"), f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

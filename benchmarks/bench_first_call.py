"""First call of a new Numba CPU kernel: jaxcc's numba_kernel against brainevent 0.3.0's.

What a user waits for when operator code makes a fresh `@numba.njit` kernel per configuration
(issue 22). Each figure is the wall time from wrapping the kernel to the first result of a
`jax.jit` call (wrap, trace, compile the kernel, lower, XLA compile, run), measured in a child
process after its imports and one unrelated jitted call (so JAX's own first-jit set-up is not
counted on either side):
  fresh       the first kernel of a fresh process, with an empty jaxcc cache
  second      a second new kernel (same buffer types, other code) in that same process
  reuse_new   a third new kernel with other buffer types (int32, rank 2) in that process (until
              decision 116's change it asked for float64, which JAX without x64 made float32)
  operator    a new XLACustomKernel with a new kernel of known types (def_numba_kernel, jitted
              call): the primitive's registration, trace and lowering on top of the compile
  process2    a new process running the first kernel again, the cache kept (for jaxcc: the
              compiled entry points come from the cache; brainevent keeps none, so it compiles
              again)
Sides are interleaved round by round; medians are printed with jaxcc/brainevent ratios.

Then the per-call time the first call must not cost (issue 22 item 5): `out = x * 3 + 1` at 16
floats, jitted, 2000 calls per sample, median of 5 samples per process, processes interleaved;
`--old-jaxcc DIR` adds a row for another jaxcc package directory put first on PYTHONPATH (e.g. a
copy of the installed package with the bridges of an older commit).

Run:  python benchmarks/bench_first_call.py --brainevent-python PY312 [--rounds 7]
      [--old-jaxcc DIR]
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
    import jaxcc as jaxcc_or_brainevent
else:
    import brainevent as jaxcc_or_brainevent
numba_kernel = jaxcc_or_brainevent.numba_kernel
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
if sys.argv[2] == "per_call":
    f = jax.jit(numba_kernel(make(3.0), jax.ShapeDtypeStruct(x.shape, x.dtype)))
    f(x).block_until_ready()
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(2000):
            y = f(x)
        y.block_until_ready()
        samples.append((time.perf_counter() - start) / 2000)
    print("RESULT" + json.dumps({"per_call": sorted(samples)[2]}))
    sys.exit(0)
result = {"fresh": first(make(3.0), x)}
if sys.argv[2] == "all":
    result["second"] = first(make(5.0), x)
    result["reuse_new"] = first(kernel2d, jnp.ones((4, 4), jnp.int32))
    # A new XLACustomKernel with a new Numba kernel of known buffer types: the primitive's own
    # per-call-site work (registration, trace, lowering) on top of the kernel's compile.
    XLACustomKernel = jaxcc_or_brainevent.XLACustomKernel
    start = time.perf_counter()
    op = XLACustomKernel("first_call_op")
    op_kernel = make(9.0)
    op.def_numba_kernel(lambda outs, **kw: numba_kernel(op_kernel, outs))
    y = jax.jit(lambda v: op(v, outs=jax.ShapeDtypeStruct(v.shape, v.dtype)))(x)
    jax.block_until_ready(y)
    result["operator"] = time.perf_counter() - start
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
    parser.add_argument("--old-jaxcc", default=None)
    parser.add_argument("--only", choices=["first", "per_call"], default=None)
    args = parser.parse_args()
    if args.only != "per_call":
        first_calls(args)
    if args.only != "first":
        per_call(args)
    print(time.strftime("%Y-%m-%d %H:%M"), f"load average {os.getloadavg()[0]:.1f}")


def per_call(args) -> None:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    sides = [("jaxcc", args.jaxcc_python, env), ("brainevent", args.brainevent_python, env)]
    if args.old_jaxcc:
        sides.append(("jaxcc", args.jaxcc_python, dict(env, PYTHONPATH=args.old_jaxcc)))
    names = ["jaxcc", "brainevent", "jaxcc (old)"][: len(sides)]
    samples: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(args.rounds):
        for name, (system, python, side_env) in zip(names, sides, strict=True):
            samples[name].append(run_child(python, system, "per_call", side_env)["per_call"])
    base = statistics.median(samples["jaxcc"])
    print(f"{'per call, 16 floats':<22} {'µs':>8} {'/ jaxcc':>8}")
    for name in names:
        value = statistics.median(samples[name])
        print(f"{name:<22} {value * 1e6:>8.2f} {value / base:>8.2f}")


def first_calls(args) -> None:
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
    for what in ("fresh", "second", "reuse_new", "operator", "process2"):
        a = statistics.median(rows[("jaxcc", what)]) * 1e3
        b = statistics.median(rows[("brainevent", what)]) * 1e3
        print(f"{what:<12} {a:>10.1f} {b:>14.1f} {a / b:>7.2f}")
    fresh = statistics.median(rows[("jaxcc", "fresh")])
    print(f"jaxcc process2 / fresh: {statistics.median(rows[('jaxcc', 'process2')]) / fresh:.2f}")


if __name__ == "__main__":
    main()

"""First call of a new GPU kernel: jaxcc against brainevent 0.3.0, same code, only the import
changed (issue 22's GPU rows, issue 41).

Each figure is the wall time from making the kernel to the first result of a `jax.jit` call
(wrap, trace, compile the kernel, lower, XLA compile, run), in a child process after its imports
and one unrelated jitted call:
  fresh      the first new `numba.cuda.jit` kernel of the process (`numba_cuda_kernel`)
  second     another new kernel (other code) in that process
  equal      the first kernel's code made again as a new `cuda.jit` object (jaxcc reuses the
             PTX of an equal kernel, decision 115)
  pallas     a new XLACustomKernel with a Pallas backend (`def_pallas_kernel("gpu", ...)`): the
             primitive's registration, trace and lowering on top of Triton's compile
  process2   a second process making the first kernel again, jaxcc's cache kept
Sides alternate round by round; medians with jaxcc / brainevent ratios. Warp is not on the GPU
machine, so it has no row. Needs a GPU, numba-cuda and brainevent 0.3.0 in this Python.

numba-cuda 0.30 cannot compile a kernel under NumPy 2.5 (it overloads the removed
`np.row_stack`); jaxcc's bridge puts the name back (decision 81), brainevent 0.3.0 does not,
and on the GPU machine its first Numba-CUDA call fails so (eighteenth session). Its child gets
the same one-line fix before importing brainevent, so the rows compare the two layers and not
the fix; `--no-peer-fix` measures brainevent as installed. A side whose child fails is reported
as failed and the other side still runs.

Run:  python benchmarks/bench_first_call_gpu.py [--rounds 5] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, time
import jax, jax.numpy as jnp, numpy as np
{peer_fix}import {side} as be
from numba import cuda
jax.jit(lambda v: v + 1)(jnp.ones(8)).block_until_ready()
N = 1 << 16
x = jnp.linspace(-1.0, 1.0, N, dtype=jnp.float32)
y = jnp.linspace(2.0, 3.0, N, dtype=jnp.float32)
out = jax.ShapeDtypeStruct((N,), jnp.float32)

def make(scale):
    namespace = {{"cuda": cuda}}
    exec("def k(x, y, o):\n    i = cuda.grid(1)\n    if i < o.size:\n"
         f"        o[i] = x[i] * y[i] * {{scale}}\n", namespace)
    return cuda.jit(namespace["k"])

def first_call(scale):
    start = time.perf_counter()
    call = be.numba_cuda_kernel(make(scale), out, grid=N // 256, block=256)
    result = np.asarray(jax.jit(call)(x, y))
    seconds = time.perf_counter() - start
    assert np.allclose(result, np.asarray(x) * np.asarray(y) * scale, rtol=1e-5)
    return seconds

def pallas_call_first():
    from jax.experimental import pallas as pl
    def body(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] * y_ref[...]
    # One whole-array block: Pallas's Triton lowering wants a power of two, and a small one.
    a, b = x[:1024], y[:1024]
    start = time.perf_counter()
    kernel = be.XLACustomKernel("first_call_pallas_{side}")
    kernel.def_pallas_kernel("gpu", lambda outs, **p: pl.pallas_call(body, out_shape=outs[0]))
    small = jax.ShapeDtypeStruct((1024,), jnp.float32)
    result = np.asarray(jax.jit(lambda u, v: kernel(u, v, outs=small))(a, b))
    seconds = time.perf_counter() - start
    assert np.allclose(result, np.asarray(a) * np.asarray(b), rtol=1e-5)
    return seconds

rows = {{"fresh": first_call(1.0)}}
if not {only_fresh}:
    rows["second"] = first_call(2.0)
    rows["equal"] = first_call(1.0)
    rows["pallas"] = pallas_call_first()
print("RESULT " + json.dumps(rows))
"""


# What jaxcc's Numba-CUDA bridge does for itself (python/jaxcc/custom_kernel/bridges/numba_cuda.py).
PEER_FIX = "if not hasattr(np, 'row_stack'):\n    np.row_stack = np.vstack\n"


def child(side: str, cache: str, only_fresh: bool, peer_fix: bool = True) -> dict:
    env = dict(os.environ, JAXCC_CACHE_DIR=cache, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    prelude = PEER_FIX if side == "brainevent" and peer_fix else ""
    code = CHILD.format(side=side, only_fresh=only_fresh, peer_fix=prelude)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    if "RESULT " not in done.stdout:
        raise RuntimeError(f"{side} child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.split("RESULT ", 1)[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--no-peer-fix", action="store_true", help="brainevent as installed")
    args = parser.parse_args()
    samples: dict[str, dict[str, list[float]]] = {"jaxcc": {}, "brainevent": {}}
    failures: dict[str, str] = {}
    for round_index in range(args.rounds):
        order = ("jaxcc", "brainevent") if round_index % 2 == 0 else ("brainevent", "jaxcc")
        for side in order:
            if side in failures:
                continue
            try:
                with tempfile.TemporaryDirectory() as cache:
                    rows = child(side, cache, False, not args.no_peer_fix)
                    rows["process2"] = child(side, cache, True, not args.no_peer_fix)["fresh"]
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                failures[side] = str(error)
                print(f"{side} FAILED (not retried):\n{error}", file=sys.stderr)
                continue
            for name, seconds in rows.items():
                samples[side].setdefault(name, []).append(seconds)
            # Each round's figures as they come: a run cut off by its time limit keeps them.
            shown = ", ".join(f"{name} {seconds * 1e3:.1f} ms" for name, seconds in rows.items())
            print(f"round {round_index + 1}, {side}: {shown}", flush=True)
    result = {}
    header = f"{'row':10s} {'jaxcc':>10s} {'brainevent':>11s} {'ratio':>7s}"
    peer = "as installed" if args.no_peer_fix else "with the NumPy fix"
    print(f"{header}  (medians of {args.rounds}; brainevent {peer})")

    def median(side: str, name: str) -> float | None:
        found = samples[side].get(name)
        return statistics.median(found) if found else None

    def shown(seconds: float | None) -> str:
        return f"{seconds * 1e3:8.1f} ms" if seconds is not None else "  failed   "

    for name in samples["jaxcc"] or samples["brainevent"]:
        ours, theirs = median("jaxcc", name), median("brainevent", name)
        ratio = ours / theirs if ours and theirs else None
        result[name] = {"jaxcc_s": ours, "brainevent_s": theirs, "ratio": ratio}
        print(f"{name:10s} {shown(ours)} {shown(theirs)} {ratio if ratio else float('nan'):7.2f}")
    for side, error in failures.items():
        named = [line for line in error.splitlines() if "Error:" in line] or [""]
        print(f"{side}: failed, {named[-1].strip()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": result, "samples": samples, "failures": failures,
                       "peer_fix": not args.no_peer_fix}, f, indent=1)  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

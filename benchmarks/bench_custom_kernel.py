"""XLACustomKernel benchmarks: vmap on the vectorised path against the sequential one, the native
Numba bridge against a ctypes Python-callback bridge, and a primitive call against a direct
`jax.ffi.ffi_call` of the same target.

Run:  python benchmarks/bench_custom_kernel.py [--rounds N] [--only vmap|numba|dispatch]
Prints tables with times and ratios; figures go to benchmarks/RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numba
import numpy as np

import jaxcc

ROW_SOURCE = r"""
#include "jaxcc/jaxcc.h"

// y[r, :] = x[r, :] * w + 1: row-wise, so it handles any number of leading axes. Cheap work per
// row, so the cost of calling the kernel once per row shows.
void row_op(const jaxcc::Tensor x, const jaxcc::Tensor w, jaxcc::Tensor y) {
  const int64_t n = x.size(x.ndim() - 1);
  const float* in = x.data_ptr<float>();
  const float* weight = w.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t r = 0; r < y.numel() / n; ++r)
    for (int64_t i = 0; i < n; ++i) out[r * n + i] = in[r * n + i] * weight[i] + 1.0f;
}
"""


@numba.njit
def add_one_numba(x, out):
    for i in range(x.size):
        out[i] = x[i] + 1.0


def per_call_us(fn, args, calls: int, rounds: int) -> float:
    """Median over rounds of the mean per-call time of `calls` back-to-back calls (µs)."""
    jax.block_until_ready(fn(*args))
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            out = fn(*args)
        jax.block_until_ready(out)
        samples.append((time.perf_counter() - start) * 1e6 / calls)
    return statistics.median(samples)


def interleaved_us(fns: dict, args, calls: int, rounds: int) -> dict:
    """per_call_us of each function in `fns`, its rounds alternating with the others' so that
    drift on a busy machine hits every side alike: name -> median µs."""
    samples = {name: [] for name in fns}
    for fn in fns.values():
        jax.block_until_ready(fn(*args))
    for _ in range(rounds):
        for name, fn in fns.items():
            samples[name].append(per_call_us(fn, args, calls, 1))
    return {name: statistics.median(times) for name, times in samples.items()}


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


def bench_vmap(rounds: int) -> None:
    module = jaxcc.load_cpp_inline("bench_ck_rows", ROW_SOURCE, ["row_op"])
    kernels = {}
    for vectorized in (False, True):
        k = jaxcc.XLACustomKernel(f"bench_row_op_{'vec' if vectorized else 'seq'}")
        k.def_cpp_kernel(lambda **p: module.row_op, vectorized=vectorized)
        kernels[vectorized] = k
    n = 64
    w = jnp.linspace(0.5, 1.5, n, dtype=jnp.float32)
    rows = []
    for batch in (8, 64, 512):
        xs = jnp.asarray(np.random.default_rng(batch).normal(size=(batch, n)), jnp.float32)
        times = {}
        for vectorized, k in kernels.items():
            f = jax.jit(
                jax.vmap(lambda x, k=k: k(x, w, outs=jax.ShapeDtypeStruct(x.shape, x.dtype)))
            )
            times[vectorized] = per_call_us(f, (xs,), 200, rounds)
        np.testing.assert_allclose(
            jax.jit(
                jax.vmap(lambda x: kernels[True](x, w, outs=jax.ShapeDtypeStruct(x.shape, x.dtype)))
            )(xs),
            jax.jit(
                jax.vmap(
                    lambda x: kernels[False](x, w, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))
                )
            )(xs),
            rtol=1e-6,
        )
        rows.append(
            [
                batch,
                f"{times[False]:.1f}",
                f"{times[True]:.1f}",
                f"{times[False] / times[True]:.1f}x",
            ]
        )
    print_table(
        f"vmap of a C++ row kernel (rows of {n} floats), jitted, per call",
        ["B", "sequential (lax.scan) µs", "vectorised µs", "speedup"],
        rows,
    )


def bench_numba_bridges(rounds: int) -> None:
    rows = []
    for n in (16, 65536):
        x = jnp.ones(n, jnp.float32)
        out = jax.ShapeDtypeStruct((n,), jnp.float32)
        times = {}
        for bridge in ("native", "callback"):
            f = jax.jit(jaxcc.numba_kernel(add_one_numba, out, bridge=bridge))
            np.testing.assert_allclose(f(x), np.full(n, 2.0))
            times[bridge] = per_call_us(f, (x,), 2000 if n == 16 else 300, rounds)
        base = per_call_us(jax.jit(lambda x: x + 1), (x,), 2000 if n == 16 else 300, rounds)
        rows.append(
            [
                n,
                f"{times['native']:.2f}",
                f"{times['callback']:.2f}",
                f"{base:.2f}",
                f"{times['callback'] / times['native']:.1f}x",
                # Overhead beyond the work itself, only meaningful where the work is tiny.
                f"{(times['callback'] - base) / (times['native'] - base):.1f}x" if n == 16 else "-",
            ]
        )
    print_table(
        "Numba kernel `out = x + 1` per call (jitted): native cfunc bridge vs ctypes callback",
        ["floats", "native µs", "callback µs", "jnp x+1 µs", "time ratio", "overhead ratio"],
        rows,
    )


def bench_dispatch(rounds: int) -> None:
    module = jaxcc.load_cpp_inline("bench_ck_rows", ROW_SOURCE, ["row_op"])
    k = jaxcc.XLACustomKernel("bench_dispatch_row_op")
    k.def_cpp_kernel(lambda **p: module.row_op)
    target = module.target_name("row_op")
    rows = []
    for n in (16, 4096):
        x = jnp.ones(n, jnp.float32)
        w = jnp.ones(n, jnp.float32)
        out = jax.ShapeDtypeStruct((n,), jnp.float32)
        direct = jax.ffi.ffi_call(target, out)

        def primitive(a, b, out=out):
            return k(a, b, outs=out)

        eager = interleaved_us({"prim": primitive, "ffi": direct}, (x, w), 500, rounds)
        jitted = interleaved_us(
            {"prim": jax.jit(primitive), "ffi": jax.jit(direct)}, (x, w), 2000, rounds
        )
        eager_prim, eager_ffi = eager["prim"], eager["ffi"]
        jit_prim, jit_ffi = jitted["prim"], jitted["ffi"]
        rows.append(
            [n, "eager", f"{eager_prim:.2f}", f"{eager_ffi:.2f}", f"{eager_prim / eager_ffi:.2f}"]
        )
        rows.append([n, "jit", f"{jit_prim:.2f}", f"{jit_ffi:.2f}", f"{jit_prim / jit_ffi:.3f}"])
    print_table(
        "Dispatch: XLACustomKernel call vs direct jax.ffi.ffi_call of the same target",
        ["floats", "mode", "primitive µs", "ffi_call µs", "ratio"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=["vmap", "numba", "dispatch"], default=None)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, numba {numba.__version__}, jaxcc {jaxcc.__version__}")
    if args.only in (None, "vmap"):
        bench_vmap(args.rounds)
    if args.only in (None, "numba"):
        bench_numba_bridges(args.rounds)
    if args.only in (None, "dispatch"):
        bench_dispatch(args.rounds)


if __name__ == "__main__":
    main()

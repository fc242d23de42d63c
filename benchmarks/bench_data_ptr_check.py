"""What data_ptr<T>()'s dtype check (decision 149) costs a kernel that calls it in its inner loop,
as the README quickstart's add_one does, against the same loop through the untyped data_ptr()
(`static_cast<float*>(x.data_ptr())`, exactly what data_ptr<float>() compiled to before the
check). Both kernels are in one module, so they share the wrapper and the call path; rounds are
interleaved in one process.

Run:  python benchmarks/bench_data_ptr_check.py [--rounds N] [--sizes 16,4096,1048576]
Prints the median µs per jitted call of each and checked/unchecked; figures go to
benchmarks/RESULTS.md by hand. The handler's own per-call cost (the parameter name stored in
each Tensor) is bench_per_call.py's to measure, against a build of the previous commit.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

import jaxcc

SOURCE = r"""
#include "brainevent/common.h"

// The README quickstart: typed data_ptr in the inner loop, checked.
void add_one(const BE::Tensor x, BE::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
}

// The same loop unchecked: what data_ptr<float>() was before the check.
void add_one_unchecked(const BE::Tensor x, BE::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i)
        static_cast<float*>(out.data_ptr())[i] = static_cast<float*>(x.data_ptr())[i] + 1.0f;
}
"""


def per_call_us(fn, x, calls: int) -> float:
    y = fn(x)
    jax.block_until_ready(y)
    t0 = time.perf_counter()
    for _ in range(calls):
        y = fn(x)
    jax.block_until_ready(y)
    return (time.perf_counter() - t0) * 1e6 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sizes", default="16,4096,1048576")
    args = parser.parse_args()
    mod = jaxcc.load_cpp_inline("bench_data_ptr_check", SOURCE, ["add_one", "add_one_unchecked"])
    sides = {"checked": jax.jit(mod.add_one), "unchecked": jax.jit(mod.add_one_unchecked)}
    print(f"jaxcc {jaxcc.__version__}, jax {jax.__version__}; median µs per jitted call")
    for size in (int(s) for s in args.sizes.split(",")):
        x = jnp.arange(size, dtype=jnp.float32)
        calls = max(20, min(5000, 20_000_000 // max(size, 1) // 4))
        samples = {name: [] for name in sides}
        for fn in sides.values():  # warm-up
            per_call_us(fn, x, calls // 4 + 1)
        for r in range(args.rounds):
            order = list(sides.items()) if r % 2 == 0 else list(reversed(sides.items()))
            for name, fn in order:
                samples[name].append(per_call_us(fn, x, calls))
        checked, unchecked = (statistics.median(samples[n]) for n in ("checked", "unchecked"))
        print(
            f"  {size:>8} floats: checked {checked:9.2f} µs  unchecked {unchecked:9.2f} µs  "
            f"checked/unchecked {checked / unchecked:.3f}"
        )


if __name__ == "__main__":
    main()

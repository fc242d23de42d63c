"""Asynchronous CPU kernels (issue 23 item 4): two independent heavy one-thread kernels in one
jitted function, plain (`heavy_sync`) and returning an FFI Future (`heavy_async`, a
`jaxcc::Async` parameter). Eight tiny independent custom calls per branch (custom calls never
fuse) make the program large enough for XLA:CPU to run it as a dataflow graph; programs of at
most 8 thunks run strictly in order, async or not (docs/usage.md, "Using the whole machine").

  python benchmarks/bench_async.py      prints one/two-kernel medians and two/one per variant
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
static void Work(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    float v = a[i];
    for (int k = 0; k < 400; ++k) v = v * 0.999f + 0.001f;
    b[i] = v;
  }
}
void heavy_sync(const jaxcc::Tensor& x, jaxcc::Tensor& y) { Work(x, y); }
void tiny(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  y.data_ptr<float>()[0] = x.data_ptr<float>()[0];
}
void heavy_async(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Async) { Work(x, y); }
"""


def main() -> None:
    mod = jaxcc.load_cpp_inline(
        "bench_async", SOURCE, functions=["heavy_sync", "heavy_async", "tiny"]
    )
    x = jnp.ones(1 << 18, jnp.float32)

    def pad(v):
        return (v,) + tuple(mod.tiny(v * (k + 2)) for k in range(8))

    def median_ms(fn, *args) -> float:
        fn = jax.jit(fn)
        jax.block_until_ready(fn(*args))
        times = []
        for _ in range(15):
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3

    for name in ("heavy_sync", "heavy_async"):
        kernel = getattr(mod, name)
        one = median_ms(lambda a, k=kernel: pad(k(a)), x)
        two = median_ms(lambda a, b, k=kernel: (pad(k(a)), pad(k(b))), x, x + 1)
        print(
            f"{name:12s} one {one:8.2f} ms  two independent {two:8.2f} ms  two/one {two / one:.2f}"
        )


if __name__ == "__main__":
    main()

"""Plain C++ kernels against XLA's own ops, per compiler flag (issue 52 item 2, performance.md).

softmax over the rows, exp and matvec of a 2048x1024 float32 array, each built at the default
flags, with -fno-math-errno, -ffast-math, -march=native, both, and with `#pragma omp simd`
(-fopenmp-simd); softmax also spread over XLA's pool with parallel_for at several grains. Every
kernel is checked against XLA's result before it is timed. Each row is the median over rounds of
the mean of a batch of calls of the jitted function (`block_until_ready` per call), XLA's op
timed in the same rounds, interleaved.

    python benchmarks/bench_vs_xla.py --rounds 9 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import time

ROWS, COLS = 2048, 1024

SOURCE = r"""
#include <cmath>

#include "jaxcc/jaxcc.h"

#ifdef USE_OMP_SIMD
#define PRAGMA_TEXT(x) #x
#define SIMD _Pragma("omp simd")
#define SIMD_MAX(v) _Pragma(PRAGMA_TEXT(omp simd reduction(max : v)))
#define SIMD_SUM(v) _Pragma(PRAGMA_TEXT(omp simd reduction(+ : v)))
#else
#define SIMD
#define SIMD_MAX(v)
#define SIMD_SUM(v)
#endif

static void softmax_rows(const float* in, float* out, int64_t lo, int64_t hi, int64_t cols) {
  for (int64_t r = lo; r < hi; ++r) {
    const float* a = in + r * cols;
    float* b = out + r * cols;
    float m = a[0];
    SIMD_MAX(m)
    for (int64_t c = 0; c < cols; ++c) m = a[c] > m ? a[c] : m;
    float s = 0.0f;
    SIMD_SUM(s)
    for (int64_t c = 0; c < cols; ++c) {
      b[c] = std::exp(a[c] - m);
      s += b[c];
    }
    const float inv = 1.0f / s;
    SIMD
    for (int64_t c = 0; c < cols; ++c) b[c] *= inv;
  }
}

void softmax(const jaxcc::Tensor x, jaxcc::Tensor y) {
  const int64_t cols = x.size(-1);
  softmax_rows(x.data_ptr<float>(), y.data_ptr<float>(), 0, x.numel() / cols, cols);
}

void softmax_pool(const jaxcc::Tensor x, jaxcc::Tensor y, jaxcc::ThreadPool& pool, int64_t grain) {
  const int64_t cols = x.size(-1);
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  pool.parallel_for(0, x.numel() / cols, grain,
                    [&](int64_t lo, int64_t hi) { softmax_rows(in, out, lo, hi, cols); });
}

void exp_all(const jaxcc::Tensor x, jaxcc::Tensor y) {
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = x.numel();
  SIMD
  for (int64_t i = 0; i < n; ++i) b[i] = std::exp(a[i]);
}

void matvec(const jaxcc::Tensor w, const jaxcc::Tensor v, jaxcc::Tensor y) {
  const int64_t rows = w.size(0), cols = w.size(1);
  const float* a = w.data_ptr<float>();
  const float* x = v.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0.0f;
    SIMD_SUM(s)
    for (int64_t c = 0; c < cols; ++c) s += a[r * cols + c] * x[c];
    out[r] = s;
  }
}
"""
FUNCTIONS = ["softmax", "softmax_pool", "exp_all", "matvec"]
FLAG_SETS = {
    "default (-O3)": [],
    "-fno-math-errno": ["-fno-math-errno"],
    "-ffast-math": ["-ffast-math"],
    "-march=native": ["-march=native"],
    "-march=native -ffast-math": ["-march=native", "-ffast-math"],
    "#pragma omp simd (-fopenmp-simd)": ["-fopenmp-simd", "-DUSE_OMP_SIMD"],
    "omp simd + -fno-math-errno": ["-fopenmp-simd", "-DUSE_OMP_SIMD", "-fno-math-errno"],
}
GRAINS = [1, 16, 128, 2048]


def timed(fn, args, calls: int) -> float:
    """Mean seconds of one call over a batch of `calls`, each waited for."""
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args).block_until_ready()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxcc

    x = jax.random.normal(jax.random.key(0), (ROWS, COLS), jnp.float32)
    v = jax.random.normal(jax.random.key(1), (COLS,), jnp.float32)
    out_rows = jax.ShapeDtypeStruct((ROWS,), jnp.float32)
    xla = {
        "softmax": (jax.jit(lambda a: jax.nn.softmax(a, axis=-1)), (x,)),
        "exp": (jax.jit(jnp.exp), (x,)),
        "matvec": (jax.jit(lambda a, b: a @ b), (x, v)),
    }
    cases = []  # (op, label, jitted kernel call, its arguments)
    for index, (label, flags) in enumerate(FLAG_SETS.items()):
        mod = jaxcc.load_cpp_inline(f"vs_xla_{index}", SOURCE, FUNCTIONS, extra_cflags=flags)
        cases += [
            ("softmax", label, jax.jit(mod.softmax), (x,)),
            ("exp", label, jax.jit(mod.exp_all), (x,)),
            ("matvec", label, jax.jit(lambda a, b, m=mod: m.matvec(a, b, outs=out_rows)), (x, v)),
        ]
        if label in ("default (-O3)", "-ffast-math"):
            for grain in GRAINS:
                call = jax.jit(lambda a, m=mod, g=grain: m.softmax_pool(a, grain=g))
                cases.append(("softmax", f"{label}, parallel_for grain {grain} rows", call, (x,)))
    for op, label, fn, fn_args in cases:  # correct before timed
        np.testing.assert_allclose(fn(*fn_args), xla[op][0](*xla[op][1]), rtol=2e-3, atol=1e-5,
                                   err_msg=f"{op} {label}")  # fmt: skip
    times = {(op, label): [] for op, label, _, _ in cases}
    times.update({(op, "XLA"): [] for op in xla})
    for _ in range(args.rounds):
        for op, (fn, fn_args) in xla.items():
            times[(op, "XLA")].append(timed(fn, fn_args, args.calls))
        for op, label, fn, fn_args in cases:
            times[(op, label)].append(timed(fn, fn_args, args.calls))

    medians = {key: statistics.median(values) for key, values in times.items()}
    print(f"{'op':8} {'kernel':48} {'ms':>8} {'vs XLA':>7}")
    for (op, label), seconds in medians.items():
        ratio = seconds / medians[(op, "XLA")]
        print(f"{op:8} {label:48} {seconds * 1e3:8.3f} {ratio:7.2f}")
    if args.json:
        record = {
            "machine": f"{platform.machine()}, {_cpu()}, {jax.local_devices()[0].platform}",
            "versions": {"jax": jax.__version__, "jaxcc": jaxcc.__version__, "g++": _gxx()},
            "median_ms": {f"{op} | {label}": s * 1e3 for (op, label), s in medians.items()},
        }
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _gxx() -> str:
    result = subprocess.run(["g++", "--version"], capture_output=True, text=True)
    return result.stdout.split("\n")[0]


if __name__ == "__main__":
    main()

"""Autotuning (issue 40 item 5, CPU part): a blocked matrix product tuned over BLOCK (tile of rows
and depth) x UNROLL (columns per inner step), on a few shapes. For each shape:

- tuned: the variant jaxcc chose at the first call, timed by the offline harness below;
- best / worst: exhaustive offline timing of every variant (interleaved rounds, medians), so
  tuned/best says how close the tuner's quick timing came (goal: within 3 %) and worst/best the
  spread the choice is worth;
- middle: a fixed middle configuration (BLOCK=32, UNROLL=4), what an author would hard-code;
- tuning: seconds the first call spent timing that key;
- second process: its first call on the same shapes (the decisions read from the cache, no
  timing; `cached` in JAXCC_PRINT_AUTOTUNING's lines), against this process's first call.

  python benchmarks/bench_autotune.py [--rounds 60]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxcc

SOURCE = r"""
#include <algorithm>
#ifndef BLOCK
#define BLOCK 32
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
// c = a @ b, row-major, in BLOCK x BLOCK tiles of (rows, depth); UNROLL output columns are
// accumulated in registers across a tile's depth, so the hot loop stores nothing (no
// store-to-load aliasing, whose cost would depend on where XLA places the buffers).
// @BE matmul arg arg ret
void matmul(const jaxcc::Tensor& a, const jaxcc::Tensor& b, jaxcc::Tensor& c) {
  const float* __restrict__ A = a.data_ptr<float>();
  const float* __restrict__ B = b.data_ptr<float>();
  float* __restrict__ C = c.data_ptr<float>();
  const int64_t n = a.shape(0), k = a.shape(1), m = b.shape(1);
  std::fill(C, C + n * m, 0.0f);
  for (int64_t i0 = 0; i0 < n; i0 += BLOCK)
    for (int64_t p0 = 0; p0 < k; p0 += BLOCK) {
      const int64_t i1 = std::min<int64_t>(i0 + BLOCK, n), p1 = std::min<int64_t>(p0 + BLOCK, k);
      for (int64_t i = i0; i < i1; ++i) {
        const float* __restrict__ Ai = A + i * k;
        float* __restrict__ Ci = C + i * m;
        int64_t j = 0;
        for (; j + UNROLL <= m; j += UNROLL) {
          float acc[UNROLL] = {};
          for (int64_t p = p0; p < p1; ++p) {
            const float x = Ai[p];
            for (int u = 0; u < UNROLL; ++u) acc[u] += x * B[p * m + j + u];
          }
          for (int u = 0; u < UNROLL; ++u) Ci[j + u] += acc[u];
        }
        for (; j < m; ++j) {
          float acc = 0.0f;
          for (int64_t p = p0; p < p1; ++p) acc += Ai[p] * B[p * m + j];
          Ci[j] += acc;
        }
      }
    }
}
"""

TUNE = {"matmul": {"BLOCK": [8, 32, 128], "UNROLL": [1, 4, 16]}}
MIDDLE = "BLOCK=32,UNROLL=4"
SHAPES = [(64, 64, 64), (256, 256, 256), (512, 64, 512), (128, 1024, 128)]


def _operands(n, k, m):
    rng = np.random.default_rng(1)
    a = jnp.asarray(rng.standard_normal((n, k)), jnp.float32)
    b = jnp.asarray(rng.standard_normal((k, m)), jnp.float32)
    return a, b, jax.ShapeDtypeStruct((n, m), jnp.float32)


def time_variant_samples(function, operands, out, rounds: int) -> dict[str, list[float]]:
    """Every variant of a tuned `function` timed on `operands` over `rounds` interleaved rounds
    (one blocking call of each variant per round, the order rotating from round to round, as
    the tuner times (decision 233), but several times as many rounds), so a burst of load on
    the shared machine hits every variant alike: sample i of every variant is round i's."""
    runs = {
        text: jax.jit(lambda *xs, t=target: jax.ffi.ffi_call(t, out)(*xs))
        for text, target in function.variant_targets.items()
    }
    for run in runs.values():
        for _ in range(3):
            run(*operands).block_until_ready()
    texts = list(runs)
    samples: dict[str, list[float]] = {text: [] for text in runs}
    for r in range(rounds):
        turn = r % len(texts)
        for text in texts[turn:] + texts[:turn]:
            t0 = time.perf_counter()
            runs[text](*operands).block_until_ready()
            samples[text].append(time.perf_counter() - t0)
    return samples


def time_variants(function, operands, out, rounds: int) -> dict[str, float]:
    """Median per-call time of every variant (time_variant_samples)."""
    samples = time_variant_samples(function, operands, out, rounds)
    return {text: statistics.median(s) for text, s in samples.items()}


SECOND = r"""
import os, time, sys
t0 = time.perf_counter()
import jax, jax.numpy as jnp, jaxcc
sys.path.insert(0, {bench_dir!r})
from bench_autotune import SOURCE, TUNE, SHAPES, _operands
t = time.perf_counter()
mod = jaxcc.load_cpp_inline("bench_autotune", SOURCE, tune=TUNE)
print("warm_load", time.perf_counter() - t)
for shape in SHAPES:
    a, b, out = _operands(*shape)
    t = time.perf_counter()
    mod.matmul(a, b, outs=out).block_until_ready()
    print("first_call", shape, time.perf_counter() - t)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    cache = tempfile.mkdtemp(prefix="jaxcc-bench-autotune-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)  # nothing left in $TMPDIR
    jaxcc.set_cache_dir(cache)
    os.environ["JAXCC_CACHE_DIR"] = cache
    t0 = time.perf_counter()
    mod = jaxcc.load_cpp_inline("bench_autotune", SOURCE, tune=TUNE)
    n_variants = len(mod.matmul.variant_targets)
    print(f"built {n_variants} variants in {time.perf_counter() - t0:.1f} s (cold cache)")
    t0 = time.perf_counter()
    jaxcc.load_cpp_inline("bench_autotune", SOURCE, tune=TUNE)
    print(f"warm tuned load (this process): {(time.perf_counter() - t0) * 1e3:.2f} ms")
    first_calls = {}
    from jaxcc.tune import store

    for shape in SHAPES:
        a, b, out = _operands(*shape)
        t0 = time.perf_counter()
        mod.matmul(a, b, outs=out).block_until_ready()
        first_calls[shape] = time.perf_counter() - t0
    records = {r["key"]: r for r in store.list_decisions(cache)}
    print(
        f"\n{'n,k,m':>14} {'tuned':>9} {'best':>9} {'tuned/best':>10} {'middle/tuned':>12} "
        f"{'worst/best':>10} {'tuning s':>9}  chosen (best)"
    )
    for shape in SHAPES:
        a, b, out = _operands(*shape)
        chosen = ",".join(f"{k}={v}" for k, v in mod.matmul.chosen_config(a, b, outs=out).items())
        times = time_variants(mod.matmul, (a, b), out, args.rounds)
        best = min(times, key=times.get)
        worst = max(times.values())
        key = f"float32[{shape[0]},{shape[1]}],float32[{shape[1]},{shape[2]}]"
        tuning = records[key]["tuning_s"]
        print(
            f"{str(shape):>14} {times[chosen] * 1e6:8.1f}us {times[best] * 1e6:8.1f}us "
            f"{times[chosen] / times[best]:10.3f} {times[MIDDLE] / times[chosen]:12.2f} "
            f"{worst / times[best]:10.2f} {tuning:9.2f}  {chosen} ({best})"
        )
    env = dict(os.environ, JAXCC_PRINT_AUTOTUNING="1")
    code = SECOND.format(bench_dir=os.path.dirname(os.path.abspath(__file__)))
    second = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    cached = [line for line in second.stderr.splitlines() if line.startswith("jaxcc autotune:")]
    print(f"\nsecond process: {sum(line.endswith('cached') for line in cached)} of "
          f"{len(cached)} decisions cached (no timing)")  # fmt: skip
    for line in second.stdout.splitlines():
        if line.startswith("warm_load"):
            print(f"  warm tuned load ({n_variants} variants + reference): "
                  f"{float(line.split()[1]) * 1e3:.1f} ms")  # fmt: skip
            continue
        _, rest = line.split(" ", 1)
        shape_text, seconds = rest.rsplit(" ", 1)
        shape = tuple(int(x) for x in shape_text.strip("()").split(","))
        print(
            f"  first call {shape}: second process {float(seconds) * 1e3:.1f} ms, "
            f"first process (tuning) {first_calls[shape] * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()

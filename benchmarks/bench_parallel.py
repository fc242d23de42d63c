"""Kernels on the whole machine: jaxcc's parallel_for on XLA's intra-op pool against one thread,
OpenMP and brainevent 0.3.0, side by side in one run (docs/usage.md, "Using the whole machine").

Rows (median ms per jitted call; rounds interleave the variants so host load hits all alike):
  csr_*      event-driven CSR product y = A @ events, 10^5 rows x 100 non-zeros, 5 % active:
             jaxcc one thread, jaxcc + `#pragma omp parallel for`, jaxcc on XLA's pool
             (jaxcc::ThreadPool&), and brainevent's `CSR @ BinaryArray` (its Numba kernel),
             measured by a Python 3.12 subprocess per round (brainevent lives there)
  dense_*    compute-bound dense block product C = A @ B, 384 x 384 floats, one thread vs pool
             (8-row chunks; dense_pool_fine: one row a chunk) and OpenMP
  two_*      two independent dense products in one jitted function: pool vs OpenMP, against
             twice the time of one (1.0 = no slowdown from running them together)

  python benchmarks/bench_parallel.py [--rounds 7] [--calls 20] [--no-brainevent]
         [--brainevent-python PY312]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxcc

PY312 = "/root/.pyenv/versions/3.12.1/bin/python3.12"
ROWS, NNZ, ACTIVE = 100_000, 100, 0.05
DENSE = 384

CSR_SOURCE = r"""
#include <cstdint>
// y[i] = sum of row i's values whose column is an active event.
static void Rows(const float* data, const int32_t* indices, const int32_t* indptr,
                 const bool* events, float* y, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    float sum = 0.0f;
    for (int32_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      sum += events[indices[k]] ? data[k] : 0.0f;
    }
    y[i] = sum;
  }
}
// (macros are fine in bodies; the signature reader needs the parameters spelled out)
#define CSR_PTRS data.data_ptr<float>(), indices.data_ptr<int32_t>(), \
    indptr.data_ptr<int32_t>(), events.data_ptr<bool>(), y.data_ptr<float>()
void csr_serial(const jaxcc::Tensor& data, const jaxcc::Tensor& indices,
                const jaxcc::Tensor& indptr,
                const jaxcc::Tensor& events, jaxcc::Tensor& y) { Rows(CSR_PTRS, 0, y.numel()); }
void csr_omp(const jaxcc::Tensor& data, const jaxcc::Tensor& indices, const jaxcc::Tensor& indptr,
                const jaxcc::Tensor& events, jaxcc::Tensor& y) {
  const int64_t n = y.numel();
  #pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < (n + 255) / 256; ++b) {
    Rows(CSR_PTRS, b * 256, b * 256 + 256 < n ? b * 256 + 256 : n);
  }
}
void csr_pool(const jaxcc::Tensor& data, const jaxcc::Tensor& indices, const jaxcc::Tensor& indptr,
                const jaxcc::Tensor& events, jaxcc::Tensor& y,
              jaxcc::ThreadPool& pool) {
  pool.parallel_for(0, y.numel(), 256, [&](int64_t lo, int64_t hi) { Rows(CSR_PTRS, lo, hi); });
}

// C = A @ B by row blocks; the inner loops are cache-friendly (i-k-j) and vectorise.
static void Block(const float* a, const float* b, float* c, int64_t n, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    float* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int64_t k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      const float* bk = b + k * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += aik * bk[j];
    }
  }
}
#define MM_PTRS a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0)
void mm_serial(const jaxcc::Tensor& a, const jaxcc::Tensor& b, jaxcc::Tensor& c) {
  Block(MM_PTRS, 0, a.size(0));
}
void mm_omp(const jaxcc::Tensor& a, const jaxcc::Tensor& b, jaxcc::Tensor& c) {
  const int64_t n = a.size(0);
  #pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i += 8) Block(MM_PTRS, i, i + 8 < n ? i + 8 : n);
}
void mm_pool(const jaxcc::Tensor& a, const jaxcc::Tensor& b, jaxcc::Tensor& c,
             jaxcc::ThreadPool& pool) {
  pool.parallel_for(0, a.size(0), 8, [&](int64_t lo, int64_t hi) { Block(MM_PTRS, lo, hi); });
}
// One row a chunk: whether the pool's shortfall on 16 cores is load balance (threads that wake
// late find fewer chunks left) or the wake-up itself.
void mm_pool_fine(const jaxcc::Tensor& a, const jaxcc::Tensor& b, jaxcc::Tensor& c,
                  jaxcc::ThreadPool& pool) {
  pool.parallel_for(0, a.size(0), 1, [&](int64_t lo, int64_t hi) { Block(MM_PTRS, lo, hi); });
}
"""

BRAINEVENT_PROBE = (
    r"""
import sys, time, numpy as np, jax, jax.numpy as jnp, brainevent
rows, nnz, active, calls = ROWS, NNZ, ACTIVE, int(sys.argv[1])
rng = np.random.default_rng(0)
indptr = np.arange(rows + 1, dtype=np.int32) * nnz
indices = rng.integers(0, rows, rows * nnz, dtype=np.int32)
data = jnp.asarray(rng.random(rows * nnz, dtype=np.float32))
events = jnp.asarray(rng.random(rows) < active)
csr = brainevent.CSR((data, jnp.asarray(indices), jnp.asarray(indptr)), shape=(rows, rows))
f = jax.jit(lambda ev: csr @ brainevent.BinaryArray(ev))
jax.block_until_ready(f(events))
ts = []
for _ in range(calls):
    t = time.perf_counter(); jax.block_until_ready(f(events)); ts.append(time.perf_counter() - t)
print(float(np.median(ts)) * 1e3)
""".replace("ROWS", str(ROWS))
    .replace("NNZ", str(NNZ))
    .replace("ACTIVE", repr(ACTIVE))
)


BEST: dict[str, float] = {}  # fastest single call of each row: its cost when a core was free


def median_ms(fn, args, calls, row=None):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    if row is not None:
        BEST[row] = min(BEST.get(row, float("inf")), min(times) * 1e3)
    return statistics.median(times) * 1e3


def physical_cores() -> str:
    """Logical cores that are hardware threads of one physical core count once here: the 0.6 x N
    goal assumes N cores that can each run a thread at full speed."""
    siblings = set()
    for topology in pathlib.Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology"):
        try:
            siblings.add((topology / "thread_siblings_list").read_text().strip())
        except OSError:
            return "physical cores unknown"
    return f"{len(siblings)} physical" if siblings else "physical cores unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--no-brainevent", action="store_true")
    parser.add_argument(
        "--brainevent-python", default=PY312, help="a Python with brainevent 0.3.0 installed"
    )
    options = parser.parse_args()

    mod = jaxcc.load_cpp_inline(
        "bench_parallel",
        CSR_SOURCE,
        functions=["csr_serial", "csr_omp", "csr_pool"]
        + ["mm_serial", "mm_omp", "mm_pool", "mm_pool_fine"],
        extra_cflags=["-O3", "-fopenmp"],
        extra_ldflags=["-fopenmp"],
    )
    rng = np.random.default_rng(0)
    indptr = jnp.asarray(np.arange(ROWS + 1, dtype=np.int32) * NNZ)
    indices = jnp.asarray(rng.integers(0, ROWS, ROWS * NNZ, dtype=np.int32))
    data = jnp.asarray(rng.random(ROWS * NNZ, dtype=np.float32))
    events = jnp.asarray(rng.random(ROWS) < ACTIVE)
    out = jax.ShapeDtypeStruct((ROWS,), jnp.float32)
    csr_args = (data, indices, indptr, events)

    def with_out(f):
        return jax.jit(lambda *a: f(*a, outs=out))

    def twice(f):
        return jax.jit(lambda a, b: (f(a, b), f(b, a)))

    csr = {name: with_out(getattr(mod, name)) for name in ("csr_serial", "csr_omp", "csr_pool")}
    ref = np.asarray(csr["csr_serial"](*csr_args))
    for name, fn in csr.items():
        np.testing.assert_allclose(np.asarray(fn(*csr_args)), ref, rtol=1e-5, err_msg=name)

    a = jnp.asarray(rng.random((DENSE, DENSE), dtype=np.float32))
    b = jnp.asarray(rng.random((DENSE, DENSE), dtype=np.float32))
    mm_names = ("mm_serial", "mm_omp", "mm_pool", "mm_pool_fine")
    mm = {name: jax.jit(getattr(mod, name)) for name in mm_names}
    two = {name: twice(getattr(mod, name)) for name in ("mm_omp", "mm_pool")}
    for name in ("mm_pool", "mm_pool_fine"):
        np.testing.assert_allclose(np.asarray(mm[name](a, b)), np.asarray(a @ b), rtol=1e-4)

    rows: dict[str, list[float]] = {}
    for _ in range(options.rounds):
        for name, fn in csr.items():
            rows.setdefault(name, []).append(median_ms(fn, csr_args, options.calls, name))
        if not options.no_brainevent and os.path.exists(options.brainevent_python):
            probe = subprocess.run(
                [options.brainevent_python, "-c", BRAINEVENT_PROBE, str(options.calls)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.setdefault("csr_brainevent", []).append(float(probe.stdout.split()[-1]))
        for name, fn in mm.items():
            row = name.replace("mm_", "dense_")
            rows.setdefault(row, []).append(median_ms(fn, (a, b), options.calls, row))
        for name, fn in two.items():
            row = name.replace("mm_", "two_")
            rows.setdefault(row, []).append(median_ms(fn, (a, b), options.calls, row))

    med = {name: statistics.median(values) for name, values in rows.items()}
    print(
        f"machine: {os.cpu_count()} cores ({physical_cores()}); load average {os.getloadavg()};"
        f" jax {jax.__version__}"
    )
    for name, value in med.items():
        best = f"best {BEST[name]:8.3f} ms" if name in BEST else " " * 16
        rounds = ", ".join(f"{v:.2f}" for v in rows[name])
        print(f"{name:16s} {value:9.3f} ms  {best}  (rounds: {rounds})")
    print(f"csr pool / OpenMP        {med['csr_pool'] / med['csr_omp']:.3f}  (goal <= 1.0)")
    print(f"csr pool / one thread    {med['csr_pool'] / med['csr_serial']:.3f}")
    if "csr_brainevent" in med:
        print(
            f"csr pool / brainevent    {med['csr_pool'] / med['csr_brainevent']:.3f}"
            "  (goal <= 0.45)"
        )
    # 1.8 on the 2-core VM (issue 23); 0.6 x N on a larger machine (issue 41).
    cores = os.cpu_count() or 1
    goal = 1.8 if cores <= 2 else 0.6 * cores
    print(
        f"dense one thread / pool  {med['dense_serial'] / med['dense_pool']:.3f}"
        f"  (goal >= {goal:.1f})"
    )
    print(f"  with one-row chunks    {med['dense_serial'] / med['dense_pool_fine']:.3f}")
    best_ratio = BEST["dense_serial"] / BEST["dense_pool"]
    print(f"  best-call ratio        {best_ratio:.3f}  (each side's fastest call)")
    best_csr = BEST["csr_pool"] / BEST["csr_omp"]
    print(f"csr pool / OpenMP, best  {best_csr:.3f}")
    print(f"dense one thread / omp   {med['dense_serial'] / med['dense_omp']:.3f}")
    for name in ("pool", "omp"):
        print(
            f"two {name:4s} / 2 x one      {med['two_' + name] / (2 * med['dense_' + name]):.3f}"
            "  (1.0 = no slowdown)"
        )


if __name__ == "__main__":
    sys.exit(main())

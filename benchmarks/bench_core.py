"""Core pipeline benchmark: warm load in a fresh process, in-process reload, cold build, and the
per-call time of a jaxcc kernel against a hand-written XLA FFI handler of the same kernel.

Run:  python benchmarks/bench_core.py [--rounds N]
Prints a table with times and ratios; figures go to benchmarks/RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxcc

SEED_SRC = r"""
#include "brainevent/common.h"

void add_one(const BE::Tensor x, BE::Tensor out) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
}

void scale_by(const BE::Tensor x, BE::Tensor out, float factor) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * factor;
}
"""
SEED_FUNCTIONS = {"add_one": None, "scale_by": ["arg", "ret", "attr.factor:float32"]}

HAND_WRITTEN = r"""
#include <cstdint>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;

static ffi::Error AddOneImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> out) {
  const float* in = x.typed_data();
  float* o = out->typed_data();
  const int64_t n = static_cast<int64_t>(x.element_count());
  for (int64_t i = 0; i < n; ++i) o[i] = in[i] + 1.0f;
  return ffi::Error::Success();
}

extern "C" __attribute__((visibility("default"))) XLA_FFI_Error* HandAddOne(XLA_FFI_CallFrame*);
XLA_FFI_DEFINE_HANDLER_SYMBOL(HandAddOne, AddOneImpl,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
"""

WARM_PROBE = textwrap.dedent(
    """
    import sys, time, jax
    t0 = time.perf_counter()
    import jaxcc
    t1 = time.perf_counter()
    mod = jaxcc.load_cpp_inline("bench_seed", sys.argv[1], {"add_one": None,
        "scale_by": ["arg", "ret", "attr.factor:float32"]})
    t2 = time.perf_counter()
    assert mod.cache_hit, "expected a cache hit"
    print(t1 - t0, t2 - t1)
    """
)


def median_ms(samples):
    return 1e3 * statistics.median(samples)


def warm_load_fresh_process(runs: int) -> tuple[float, float]:
    jaxcc.load_cpp_inline("bench_seed", SEED_SRC, SEED_FUNCTIONS)  # make sure it is cached
    imports, loads = [], []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", WARM_PROBE, SEED_SRC], capture_output=True, text=True, check=True
        ).stdout.split()
        imports.append(float(out[0]))
        loads.append(float(out[1]))
    return median_ms(imports), median_ms(loads)


def in_process_reload(runs: int) -> float:
    jaxcc.load_cpp_inline("bench_seed", SEED_SRC, SEED_FUNCTIONS)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        jaxcc.load_cpp_inline("bench_seed", SEED_SRC, SEED_FUNCTIONS)
        samples.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(samples)


def cold_build(runs: int) -> float:
    samples = []
    previous = jaxcc.get_cache_dir()
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            jaxcc.set_cache_dir(cache)
            t0 = time.perf_counter()
            jaxcc.load_cpp_inline("bench_cold", SEED_SRC, SEED_FUNCTIONS, auto_register=False)
            samples.append(time.perf_counter() - t0)
    jaxcc.set_cache_dir(previous)
    return median_ms(samples)


def build_hand_written(workdir: str) -> ctypes.CDLL:
    src = os.path.join(workdir, "hand.cc")
    lib = os.path.join(workdir, "hand.so")
    with open(src, "w") as f:
        f.write(HAND_WRITTEN)
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O3",
            "-fPIC",
            "-shared",
            "-fvisibility=hidden",
            "-DNDEBUG",
            "-isystem",
            jax.ffi.include_dir(),
            src,
            "-o",
            lib,
        ],
        check=True,
    )
    return ctypes.CDLL(lib)


def per_call(fn, x, calls: int) -> float:
    jax.block_until_ready(fn(x))
    t0 = time.perf_counter()
    for _ in range(calls):
        y = fn(x)
    jax.block_until_ready(y)
    return (time.perf_counter() - t0) / calls


def call_overhead(hand_target: str, rounds: int, calls: int, size: int) -> tuple[float, float]:
    mod = jaxcc.load_cpp_inline("bench_seed", SEED_SRC, SEED_FUNCTIONS)
    x = jnp.arange(size, dtype=jnp.float32)
    ours = jax.jit(mod.add_one)
    hand = jax.jit(
        lambda v: jax.ffi.ffi_call(hand_target, jax.ShapeDtypeStruct(v.shape, v.dtype))(v)
    )
    np.testing.assert_array_equal(ours(x), hand(x))
    ours_t, hand_t = [], []
    for _ in range(rounds):  # interleaved so drift hits both sides alike
        ours_t.append(per_call(ours, x, calls))
        hand_t.append(per_call(hand, x, calls))
    return 1e6 * statistics.median(ours_t), 1e6 * statistics.median(hand_t)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    cpu = platform.processor() or platform.machine()
    print(
        f"machine: {cpu}, {os.cpu_count()} cores, python {platform.python_version()}, "
        f"jax {jax.__version__}, jaxcc {jaxcc.__version__}"
    )
    print(f"cache: {jaxcc.get_cache_dir()}\n")

    import_ms, warm_ms = warm_load_fresh_process(args.rounds)
    reload_us = in_process_reload(2000)
    cold_ms = cold_build(3)
    workdir = tempfile.mkdtemp(prefix="jaxcc-bench-")
    hand_lib = build_hand_written(workdir)
    jax.ffi.register_ffi_target(
        "bench_hand.add_one", jax.ffi.pycapsule(hand_lib.HandAddOne), platform="cpu"
    )
    ours_us, hand_us = call_overhead("bench_hand.add_one", args.rounds, args.calls, 16)
    ours_big, hand_big = call_overhead("bench_hand.add_one", args.rounds, 300, 1 << 16)

    rows = [
        (
            "warm load, fresh process (cache hit)",
            f"{warm_ms:.2f} ms",
            "target <= 2 ms",
            f"{warm_ms / 2.0:.2f}x of target",
        ),
        ("  (import jaxcc, for reference)", f"{import_ms:.2f} ms", "", ""),
        (
            "in-process reload",
            f"{reload_us:.2f} us",
            "target <= 50 us",
            f"{reload_us / 50:.2f}x of target",
        ),
        ("cold build of the seeds' CPU module", f"{cold_ms:.0f} ms", "", ""),
        (
            "per call, jit add_one, 16 floats: jaxcc",
            f"{ours_us:.2f} us",
            f"hand-written {hand_us:.2f} us",
            f"ratio {ours_us / hand_us:.3f}",
        ),
        (
            "per call, jit add_one, 65536 floats: jaxcc",
            f"{ours_big:.2f} us",
            f"hand-written {hand_big:.2f} us",
            f"ratio {ours_big / hand_big:.3f}",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, other, ratio in rows:
        print(f"{name:<{width}}  {value:>12}  {other:<26} {ratio}")


if __name__ == "__main__":
    main()

"""CUDA kernels on a GPU: per-call time under jit, inside lax.fori_loop with and without CUDA-graph
capture, and vector_add bandwidth as a fraction of the GPU's peak. Needs an NVIDIA GPU and a
CUDA-enabled jaxlib; exits with a message elsewhere.

Run:  python benchmarks/bench_cuda_gpu.py [--peak-gbs 3350]   (H100 SXM HBM3: 3350 GB/s)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp

import jaxcc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from cuda_sources import SCALE_BY, VECTOR_ADD  # noqa: E402


def median_seconds(fn, *args, repeats=200) -> float:
    jax.block_until_ready(fn(*args))
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            out = fn(*args)
        jax.block_until_ready(out)
        samples.append((time.perf_counter() - start) / repeats)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peak-gbs", type=float, default=3350.0)
    args = parser.parse_args()
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        print("no GPU backend: nothing to measure (this benchmark needs an NVIDIA GPU)")
        return
    print(f"device: {gpu.device_kind}, jax {jax.__version__}")
    add = jaxcc.load_cuda_inline("bench_gpu_add", VECTOR_ADD)
    graph = jaxcc.load_cuda_inline("bench_gpu_scale_graph", SCALE_BY, allow_cuda_graph=True)
    nograph = jaxcc.load_cuda_inline("bench_gpu_scale_nograph", SCALE_BY, allow_cuda_graph=False)

    small = jnp.ones(1024, jnp.float32)
    jit_add = jax.jit(add.vector_add)
    per_call = median_seconds(jit_add, small, small)
    xla_add = median_seconds(jax.jit(lambda a, b: a + b), small, small)

    def loop_of(mod):
        return jax.jit(
            lambda x: jax.lax.fori_loop(0, 100, lambda i, v: mod.scale_by(v, scale_factor=1.0), x)
        )

    with_graph = median_seconds(loop_of(graph), small, repeats=20) / 100
    without_graph = median_seconds(loop_of(nograph), small, repeats=20) / 100

    n = 1 << 26
    big_a = jnp.ones(n, jnp.float32)
    big_b = jnp.ones(n, jnp.float32)
    seconds = median_seconds(jit_add, big_a, big_b, repeats=20)
    gbs = 3 * 4 * n / seconds / 1e9
    rows = [
        ("vector_add, 1024 floats, per jitted call", per_call * 1e6, "us"),
        ("XLA a + b, 1024 floats, per jitted call", xla_add * 1e6, "us"),
        ("scale_by in fori_loop, per iteration, graph allowed", with_graph * 1e6, "us"),
        ("scale_by in fori_loop, per iteration, no graph", without_graph * 1e6, "us"),
        (f"vector_add bandwidth, {n} floats", gbs, "GB/s"),
    ]
    for label, value, unit in rows:
        print(f"{label:<58} {value:10.2f} {unit}")
    print(f"ratio jaxcc / XLA per call: {per_call / xla_add:.2f}")
    print(f"ratio graph / no graph in fori_loop: {with_graph / without_graph:.2f}")
    print(f"bandwidth fraction of peak ({args.peak_gbs:.0f} GB/s): {gbs / args.peak_gbs:.2f}")


if __name__ == "__main__":
    main()

"""The edit-rebuild loop: after editing a kernel body, a rebuild that reuses the FFI wrapper
object of the previous build (docs/cache.md) against a cold build of the same module, side by
side, rounds interleaved. Each round edits the body (a different constant), so neither side is a
cache hit.

Run:  python benchmarks/bench_edit_rebuild.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time

import jax

import jaxcc

SOURCE = r"""
#include "brainevent/common.h"

void add_one(const BE::Tensor x, BE::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + OFFSET;
}

void scale_by(const BE::Tensor x, BE::Tensor out, float factor) {
    for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * factor;
}
"""
FUNCTIONS = ["add_one", "scale_by"]


def timed_load(cache: str, round_index: int) -> tuple[float, bool]:
    jaxcc.set_cache_dir(cache)
    source = SOURCE.replace("OFFSET", f"{round_index + 1}.0f")
    start = time.perf_counter()
    module = jaxcc.load_cpp_inline("bench_edit", source, FUNCTIONS, auto_register=False)
    seconds = time.perf_counter() - start
    assert not module.cache_hit
    return seconds, module.wrapper_reused


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    previous = jaxcc.get_cache_dir()
    cold, edited = [], []
    with tempfile.TemporaryDirectory() as root:
        warm_cache = os.path.join(root, "kept")
        timed_load(warm_cache, -1)  # the build before the first edit
        for i in range(args.rounds):
            seconds, reused = timed_load(warm_cache, i)
            assert reused, "the edited build should reuse the wrapper object"
            edited.append(seconds)
            seconds, reused = timed_load(os.path.join(root, f"cold{i}"), i)
            assert not reused
            cold.append(seconds)
    jaxcc.set_cache_dir(previous)
    c, e = statistics.median(cold), statistics.median(edited)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, jax {jax.__version__}")
    print("| rebuild of the seeds' module after a kernel-body edit | time | ratio to cold |")
    print("|---|---|---|")
    print(f"| cold (empty cache: kernel unit + wrapper unit + link) | {c:.2f} s | 1.00 |")
    print(f"| jaxcc (wrapper object reused: kernel unit + link) | {e:.2f} s | {e / c:.2f} |")


if __name__ == "__main__":
    main()

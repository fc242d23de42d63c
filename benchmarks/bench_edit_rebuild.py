"""The edit-rebuild loop: after editing a kernel body, a rebuild that reuses the objects of the
previous build's unchanged units (docs/cache.md) against a cold build of the same module, side by
side, rounds interleaved. Each round edits the body (a different constant), so neither side is a
cache hit.

With --cuda-dir: `load_cuda_dir` of a 4-file directory in the default cache path (no
build_directory), a full build into an empty cache against a rebuild after editing one file
(no GPU needed; nvcc must be found). Runs with any jaxcc install, so an older one can be measured
with the same script.

Run:  python benchmarks/bench_edit_rebuild.py [--rounds 7] [--cuda-dir [--arch 9.0]]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
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


def cuda_dir_rounds(rounds: int, arch: str) -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from cuda_sources import VECTOR_ADD

    previous = jaxcc.get_cache_dir()
    full, edited, reused = [], [], []
    kwargs = dict(compute_capability=arch, auto_register=False)
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as cache:
            jaxcc.set_cache_dir(cache)
            src = os.path.join(work, "kernels")
            os.makedirs(src)
            for i in range(4):
                body = VECTOR_ADD.replace("add_kernel", f"add_kernel_{i}")
                with open(os.path.join(src, f"k{i}.cu"), "w") as f:
                    f.write(body.replace("vector_add", f"vector_add_{i}"))
            start = time.perf_counter()
            jaxcc.load_cuda_dir(src, name="bench_cuda_dir", **kwargs)
            full.append(time.perf_counter() - start)
            path = os.path.join(src, f"k{r % 4}.cu")
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace("a[idx] + b[idx]", "a[idx] + b[idx] + 0.0f"))
            start = time.perf_counter()
            module = jaxcc.load_cuda_dir(src, name="bench_cuda_dir", **kwargs)
            edited.append(time.perf_counter() - start)
            assert not module.cache_hit
            reused.append(getattr(module, "objects_reused", 0))
    jaxcc.set_cache_dir(previous)
    f, e = statistics.median(full), statistics.median(edited)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, jax {jax.__version__}")
    print(f"load_cuda_dir of 4 files, default cache path, sm_{arch.replace('.', '')}; medians")
    print("| build | time | ratio to full |")
    print("|---|---|---|")
    print(f"| full (empty cache) | {f:.2f} s | 1.00 |")
    print(f"| after editing one file (units reused: {max(reused)}) | {e:.2f} s | {e / f:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cuda-dir", action="store_true", help="load_cuda_dir of 4 files")
    parser.add_argument("--arch", default="9.0")
    args = parser.parse_args()
    if args.cuda_dir:
        cuda_dir_rounds(args.rounds, args.arch)
        return
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

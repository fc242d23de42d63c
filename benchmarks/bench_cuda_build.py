"""CUDA build benchmark (no GPU needed): jaxcc's split translation units against one nvcc unit
that includes the XLA FFI headers (how brainevent builds), and an incremental rebuild of an 8-file
directory after touching one file against a full build.

Run:  python benchmarks/bench_cuda_build.py [--rounds N] [--arch 9.0]
Prints medians and ratios; figures go to benchmarks/RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import jax

import jaxcc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from cuda_sources import SCALE_BY, VECTOR_ADD  # noqa: E402

SEED_MODULE = VECTOR_ADD + SCALE_BY.replace(
    '#include <cuda_runtime.h>\n#include "brainevent/common.h"\n', ""
)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def jaxcc_cold_build(arch: str) -> float:
    with tempfile.TemporaryDirectory() as cache:
        jaxcc.set_cache_dir(cache)
        return timed(
            lambda: jaxcc.load_cuda_inline(
                "bench_seed_cuda", SEED_MODULE, compute_capability=arch, auto_register=False
            )
        )


def single_unit_build(arch: str, nvcc: str) -> float:
    """The generated kernel unit and FFI wrapper pasted into one .cu, compiled and linked by one
    nvcc call: the XLA FFI headers go through nvcc's front end and host pass."""
    with tempfile.TemporaryDirectory() as work:
        build = os.path.join(work, "gen")
        with tempfile.TemporaryDirectory() as cache:
            jaxcc.set_cache_dir(cache)
            jaxcc.load_cuda_inline(
                "bench_seed_gen",
                SEED_MODULE,
                compute_capability=arch,
                build_directory=build,
                auto_register=False,
            )
        single = os.path.join(work, "single.cu")
        with open(single, "w") as out:
            for part in ("kernel_0.cu", "ffi_wrapper.cc"):
                with open(os.path.join(build, part)) as f:
                    out.write(f.read() + "\n")
        major, minor = arch.split(".")
        cmd = [
            nvcc, "-std=c++17", "-O3", "-shared", "-Xcompiler=-fPIC",
            f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}",
            "-I", jax.ffi.include_dir(), "-I", jaxcc.include_dir(),
            single, "-o", os.path.join(work, "single.so"),
        ]  # fmt: skip
        return timed(lambda: subprocess.run(cmd, check=True, capture_output=True))


def make_directory(root: str, files: int) -> None:
    os.makedirs(root, exist_ok=True)
    for i in range(files):
        body = VECTOR_ADD.replace("add_kernel", f"add_kernel_{i}").replace(
            "vector_add", f"vector_add_{i}"
        )
        with open(os.path.join(root, f"k{i}.cu"), "w") as f:
            f.write(body)


def directory_builds(arch: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as cache:
        jaxcc.set_cache_dir(cache)
        src = os.path.join(work, "kernels")
        make_directory(src, 8)
        kwargs = dict(compute_capability=arch, auto_register=False)
        build = os.path.join(work, "build")
        full = timed(
            lambda: jaxcc.load_cuda_dir(src, name="bench_dir", build_directory=build, **kwargs)
        )
        path = os.path.join(src, "k3.cu")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("a[idx] + b[idx]", "a[idx] + b[idx] + 0.0f"))
        rebuild = timed(
            lambda: jaxcc.load_cuda_dir(src, name="bench_dir", build_directory=build, **kwargs)
        )
        return full, rebuild


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arch", default="9.0")
    args = parser.parse_args()
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    print(
        f"machine: {platform.node()} {os.cpu_count()} cores, nvcc "
        f"{[line for line in version.splitlines() if 'release' in line][0].strip()}"
    )
    split = [jaxcc_cold_build(args.arch) for _ in range(args.rounds)]
    single = [single_unit_build(args.arch, nvcc) for _ in range(args.rounds)]
    dirs = [directory_builds(args.arch) for _ in range(args.rounds)]
    full = [d[0] for d in dirs]
    rebuild = [d[1] for d in dirs]
    rows = [
        ("cold build, seeds' CUDA module: jaxcc split units", statistics.median(split)),
        ("cold build, same module as one nvcc unit with FFI headers", statistics.median(single)),
        ("8-file directory: full build", statistics.median(full)),
        ("8-file directory: rebuild after touching one file", statistics.median(rebuild)),
    ]
    print(f"\n{'measure (median of ' + str(args.rounds) + ')':<62} {'seconds':>8}")
    for label, value in rows:
        print(f"{label:<62} {value:>8.2f}")
    print(
        f"\nratio split / single unit: {statistics.median(split) / statistics.median(single):.2f}"
        " (target <= 0.5)"
    )
    print(
        f"ratio rebuild / full:      {statistics.median(rebuild) / statistics.median(full):.2f}"
        " (target <= 0.25)"
    )


if __name__ == "__main__":
    main()

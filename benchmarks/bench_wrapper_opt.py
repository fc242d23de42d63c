"""The generated FFI wrapper at -O3 against -O2, -O1 and -Os (decision 44): compile time of the
wrapper unit, and per-call time of the same kernel behind each, side by side in one run.

Levels run in a rotating order each round, so no level always goes first. The seeds' module is
built once with `build_directory=` so its generated units are kept; the
wrapper unit is then compiled at both levels with the flags jaxcc uses, each linked with the same
kernel object into a library of its own, and both are registered as FFI targets and called from
jitted code, interleaved round by round.

Run:  python benchmarks/bench_wrapper_opt.py [--rounds 11] [--calls 2000]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import statistics
import subprocess
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from bench_core import SEED_FUNCTIONS, SEED_SRC, per_call

import jaxcc

LEVELS = ["-O3", "-O2", "-O1", "-Os"]  # -O3 first: the others are compared with it


def rotated(items: list, by: int) -> list:
    by %= len(items)
    return items[by:] + items[:by]


def wrapper_flags(level: str) -> list[str]:
    return [
        "g++", "-std=c++17", level, "-fPIC", "-fvisibility=hidden", "-fvisibility-inlines-hidden",
        "-DNDEBUG", "-isystem", jax.ffi.include_dir(), "-isystem", jaxcc.include_dir(),
    ]  # fmt: skip


def compile_seconds(build: str, level: str) -> tuple[float, str]:
    obj = os.path.join(build, f"wrapper{level}.o")
    command = wrapper_flags(level) + ["-c", os.path.join(build, "ffi_wrapper.cc"), "-o", obj]
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start, obj


def link_and_register(build: str, level: str, wrapper_obj: str) -> str:
    lib = os.path.join(build, f"seed{level}.so")
    kernel_obj = os.path.join(build, "kernel_0.o")
    subprocess.run(["g++", "-shared", "-fPIC", kernel_obj, wrapper_obj, "-o", lib], check=True)
    handle = ctypes.CDLL(lib)
    target = f"bench_wrapper{level}.add_one"
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handle.jaxcc_ffi_add_one), platform="cpu")
    return target


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as build:
        jaxcc.load_cpp_inline(
            "bench_wrapper_opt", SEED_SRC, SEED_FUNCTIONS, build_directory=build,
            force_rebuild=True, auto_register=False,
        )  # fmt: skip
        compiles = {level: [] for level in LEVELS}
        objects = {}
        for round_index in range(args.rounds):  # interleaved: drift hits every level alike
            for level in rotated(LEVELS, round_index):
                seconds, objects[level] = compile_seconds(build, level)
                compiles[level].append(seconds)
        targets = {lvl: link_and_register(build, lvl, obj) for lvl, obj in objects.items()}
        rows = []
        for size in (16, 65536):
            x = jnp.arange(size, dtype=jnp.float32)
            fns = {
                lvl: jax.jit(
                    lambda v, t=t: jax.ffi.ffi_call(t, jax.ShapeDtypeStruct(v.shape, v.dtype))(v)
                )
                for lvl, t in targets.items()
            }
            for fn in fns.values():
                np.testing.assert_array_equal(fn(x), np.asarray(x) + 1)
            times = {level: [] for level in LEVELS}
            for round_index in range(args.rounds):
                for level in rotated(LEVELS, round_index):
                    times[level].append(per_call(fns[level], x, args.calls))
            rows.append((f"per call, jitted add_one, {size} floats", "µs", times, 1e6))
    rows.insert(0, ("compile the seeds' wrapper unit", "s", compiles, 1.0))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, jax {jax.__version__}")
    others = LEVELS[1:]
    print(
        f"| measurement | {' | '.join(LEVELS)} | " + " | ".join(f"{o} / -O3" for o in others) + " |"
    )
    print("|---" * (1 + len(LEVELS) + len(others)) + "|")
    for label, unit, samples, scale in rows:
        medians = {level: scale * statistics.median(samples[level]) for level in LEVELS}
        cells = [f"{medians[level]:.2f} {unit}" for level in LEVELS]
        cells += [f"{medians[o] / medians['-O3']:.3f}" for o in others]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

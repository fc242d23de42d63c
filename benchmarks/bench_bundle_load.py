"""Loading prebuilt kernels, side by side (issue 13 item 9): a fresh process loads the seeds'
module (add_one + scale_by) from a jaxcc bundle with no compiler on PATH, from jaxcc's warm cache,
and from brainevent's warm cache, interleaved round by round (the first side rotates).

Run:  python benchmarks/bench_bundle_load.py [--rounds 15] [--brainevent-python PY]
brainevent runs in its own interpreter (`--brainevent-python`, e.g. a Python 3.12 venv with
brainevent 0.3; left out when not given or not importable). Measured per process after `import
jax` and the loader's own import: the load call, then the first eager call of add_one through
jax.ffi.ffi_call on its target (trace, compile, run); the process's wall time is printed too.
Each side's cache is warmed first."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

from bench_core import SEED_SRC

# Explicit tokens for both functions: brainevent 0.3 infers none.
FUNCTIONS = {"add_one": ["arg", "ret"], "scale_by": ["arg", "ret", "attr.factor:float32"]}

BUNDLE_PROBE = textwrap.dedent(
    """
    import sys, time, jax, jax.numpy as jnp
    import jaxcc
    t0 = time.perf_counter()
    mod = jaxcc.load_library(sys.argv[1])
    t1 = time.perf_counter()
    x = jnp.ones(16)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    jax.ffi.ffi_call("bench_bundle_seed.add_one", out)(x).block_until_ready()
    print(t1 - t0, time.perf_counter() - t1)
    """
)

CACHE_PROBE = textwrap.dedent(
    """
    import sys, time, json, jax, jax.numpy as jnp
    import {package} as loader
    t0 = time.perf_counter()
    mod = loader.load_cpp_inline("bench_bundle_seed", sys.argv[1], json.loads(sys.argv[2]))
    t1 = time.perf_counter()
    x = jnp.ones(16)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    jax.ffi.ffi_call("bench_bundle_seed.add_one", out)(x).block_until_ready()
    print(t1 - t0, time.perf_counter() - t1)
    """
)


def run_probe(python: str, code: str, args: list[str], env: dict) -> tuple[float, float, float]:
    start = time.perf_counter()
    out = subprocess.run(
        [python, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"probe failed ({python}):\n{out.stderr[-2000:]}")
    load, first_call = (float(v) for v in out.stdout.split()[-2:])
    return load, first_call, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--brainevent-python", help="interpreter with brainevent installed")
    args = parser.parse_args()
    import json

    import jaxcc

    functions = json.dumps(FUNCTIONS)
    with tempfile.TemporaryDirectory() as root:
        cache = os.path.join(root, "cache")
        bundle = os.path.join(root, "bundle")
        source = os.path.join(root, "bench_bundle_seed.cc")
        with open(source, "w") as f:
            f.write(SEED_SRC)
        env = dict(os.environ, JAXCC_CACHE_DIR=cache)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "jaxcc",
                "build",
                source,
                "--name",
                "bench_bundle_seed",
                "--functions",
                ",".join(FUNCTIONS),
                "--out",
                bundle,
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        empty_bin = os.path.join(root, "empty-bin")
        os.mkdir(empty_bin)
        no_compiler = dict(
            env,
            PATH=empty_bin,
            CXX=os.path.join(root, "no-g++"),
            JAXCC_NVCC=os.path.join(root, "no-nvcc"),
        )
        jaxcc_cache = CACHE_PROBE.format(package="jaxcc")
        sides = {
            "jaxcc bundle, no compiler on PATH": (
                sys.executable,
                BUNDLE_PROBE,
                [bundle],
                no_compiler,
            ),
            "jaxcc warm cache": (sys.executable, jaxcc_cache, [SEED_SRC, functions], env),
        }
        if args.brainevent_python:
            be_env = dict(os.environ)
            be_code = CACHE_PROBE.format(package="brainevent")
            version = subprocess.run(
                [args.brainevent_python, "-c", "import brainevent; print(brainevent.__version__)"],
                capture_output=True,
                text=True,
                check=False,
            )
            if version.returncode == 0:
                name = f"brainevent {version.stdout.strip()} warm cache (own interpreter)"
                sides[name] = (args.brainevent_python, be_code, [SEED_SRC, functions], be_env)
            else:
                print("brainevent not importable there: no brainevent side", file=sys.stderr)
        for python, code, probe_args, probe_env in sides.values():
            run_probe(python, code, probe_args, probe_env)  # warm each side's cache
        samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
        names = list(sides)
        for round_index in range(args.rounds):
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                samples[name].append(run_probe(*sides[name]))

    def median_ms(name: str, column: int) -> float:
        return 1e3 * statistics.median(s[column] for s in samples[name])

    reference = median_ms(names[0], 0)
    print(f"jaxcc {jaxcc.__version__}, {args.rounds} rounds, medians")
    print(f"{'side':<58} {'load':>9} {'vs bundle':>10} {'1st call':>9} {'process':>9}")
    for name in names:
        load = median_ms(name, 0)
        print(
            f"{name:<58} {load:>7.2f}ms {load / reference:>9.2f}x "
            f"{median_ms(name, 1):>7.1f}ms {median_ms(name, 2):>7.0f}ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Warm load, side by side: several Python interpreters (each with its own jaxcc installed, e.g. a
venv of an older commit) load the same cached module in fresh processes, interleaved round by
round, and the medians and their ratio to the first interpreter are printed.

Run:  python benchmarks/bench_warm_load.py --python /path/a/python --python /path/b/python
      [--rounds 21] [--headers N]
Each side gets a cache directory of its own, warmed before timing. Measured per process, after
`import jax` and `import jaxcc`: one load_cpp_inline that hits the cache, then in-process reloads
(in-process table hits; best of 5 x 500).

Where the warm load goes (`--breakdown`, on by default): the Python stages are timed by wrapping
jaxcc's own functions in the probe process (request build, environment, the core call,
registration with JAX, CompiledModule), and the core's stages come from
`jaxcc._core.last_load_trace()` where the installed jaxcc has it (older ones print the core call
as one figure). Medians per stage, per side.

`--headers N` (default 0) makes the module include N headers of its own from an include directory
that follows another on the include path, so the warm load also checks N tracked headers (their
stamps) and the paths that would shadow them (decision 146); the headers are settled (3 s old)
before the first load.

`--library` makes the module link a static archive of its own (`-L<dir> -lbenchk`), so the warm
load also checks what the link read (decision 175) and the library directory's names.

`--instructions` also counts the instructions of one warm load per side under valgrind's
callgrind (collection on only inside the load: it runs as a ctypes callback and callgrind
toggles on `ffi_call`): a figure the machine's load cannot move, where a fresh process's wall
time varies 0.6-1.3 ms. Valgrind hides SHA-NI, so SHA-256 runs its portable code there, which
costs ~30x the hardware's per block; the count without it ("no SHA") is the one to compare
(decision 265)."""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

from bench_core import SEED_SRC

SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "scripts"

PROBE = textwrap.dedent(
    """
    import json, sys, time, timeit, jax
    import jaxcc
    from jaxcc import _core
    jaxcc.set_cache_dir(sys.argv[2])
    stages = {}
    if sys.argv[4] == "1":
        sys.path.insert(0, sys.argv[5])
        import load_stages  # scripts/load_stages.py; stages this jaxcc lacks are left out
        load_stages.time_stages(stages)
    functions = {"add_one": None, "scale_by": ["arg", "ret", "attr.factor:float32"]}
    kwargs = json.loads(sys.argv[6])
    t0 = time.perf_counter()
    mod = jaxcc.load_cpp_inline("bench_warm", sys.argv[1], functions, **kwargs)
    t1 = time.perf_counter()
    first = dict(stages)  # the reloads below call the wrapped functions again
    assert mod.cache_hit or sys.argv[3] == "warmup", "expected a cache hit"
    trace = getattr(_core, "last_load_trace", None)
    core = {"core: " + k: v for k, v in (trace() if trace else [])}
    again = lambda: jaxcc.load_cpp_inline("bench_warm", sys.argv[1], functions, **kwargs)
    reload = min(timeit.repeat(again, number=500, repeat=5)) / 500
    print(json.dumps([t1 - t0, reload, jaxcc.__file__, {**first, **core}]))
    """
)


SOURCE = SEED_SRC
LOAD_KWARGS: dict = {}


def with_headers(root: str, count: int) -> None:
    """Makes the module include `count` headers from <root>/inc, after <root>/vendor (empty) on
    the include path."""
    global SOURCE, LOAD_KWARGS
    inc, vendor = pathlib.Path(root, "inc"), pathlib.Path(root, "vendor")
    inc.mkdir()
    vendor.mkdir()
    for i in range(count):
        (inc / f"bench_h{i}.h").write_text(f"#define BENCH_H{i} {i}\n")
    SOURCE = "".join(f'#include "bench_h{i}.h"\n' for i in range(count)) + SEED_SRC
    LOAD_KWARGS = {"extra_include_paths": [str(vendor), str(inc)]}
    time.sleep(3.2)  # settled: their stamps are trusted from the first build on


def with_library(root: str) -> None:
    """Makes the module call a function of a static archive <root>/lib/libbenchk.a."""
    global SOURCE, LOAD_KWARGS
    lib = pathlib.Path(root, "lib")
    lib.mkdir()
    (lib / "k.cc").write_text('extern "C" float bench_k() { return 1.0f; }\n')
    subprocess.run(
        ["g++", "-fPIC", "-O2", "-c", str(lib / "k.cc"), "-o", str(lib / "k.o")], check=True
    )
    subprocess.run(["ar", "rcs", str(lib / "libbenchk.a"), str(lib / "k.o")], check=True)
    SOURCE = (
        'extern "C" float bench_k();\n' + SOURCE + "\nfloat bench_k_use() { return bench_k(); }\n"
    )
    LOAD_KWARGS = {**LOAD_KWARGS, "extra_ldflags": [f"-L{lib}", "-lbenchk"]}
    time.sleep(3.2)


def probe(python: str, cache: str, mode: str, breakdown: bool = False):
    out = subprocess.run(
        [
            python,
            "-c",
            PROBE,
            SOURCE,
            cache,
            mode,
            "1" if breakdown else "0",
            str(SCRIPTS),
            json.dumps(LOAD_KWARGS),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    load, reload, origin, stages = json.loads(out.strip().splitlines()[-1])
    return load, reload, origin, stages


INSTRUCTION_PROBE = textwrap.dedent(
    """
    import ctypes, json, sys, jax, jaxcc
    jaxcc.set_cache_dir(sys.argv[2])
    functions = {"add_one": None, "scale_by": ["arg", "ret", "attr.factor:float32"]}
    kwargs = json.loads(sys.argv[3])
    hits = []
    def load():
        hits.append(jaxcc.load_cpp_inline("bench_warm", sys.argv[1], functions, **kwargs).cache_hit)
    ctypes.CFUNCTYPE(None)(load)()  # callgrind collects inside ffi_call: the load alone
    assert hits == [True], hits
    """
)


def count_instructions(python: str, cache: str) -> tuple[int, int]:
    """(instructions of one warm load, of them in SHA-256's compression) under callgrind. Run
    three times, the last counted: valgrind's environment differs from a plain run's, so the first
    load under it takes the full path and writes a warm record of its own."""
    real = subprocess.run([python, "-c", "import sys; print(sys.executable)"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory() as out_dir:
        out = f"{out_dir}/callgrind.out"
        for _ in range(3):
            subprocess.run(
                ["valgrind", "--tool=callgrind", "--collect-atstart=no",
                 "--toggle-collect=ffi_call", f"--callgrind-out-file={out}", real, "-c",
                 INSTRUCTION_PROBE, SOURCE, cache, json.dumps(LOAD_KWARGS)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
        report = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True,
                                check=True).stdout  # fmt: skip
    total = sha = 0
    for line in report.splitlines():
        words = line.split()
        if not words or not words[0].replace(",", "").isdigit():
            continue
        count = int(words[0].replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = count
        elif "sha256" in line and "Compress" in line:
            sha += count
    return total, sha


def print_instructions(pythons, caches, origins) -> None:
    counts = [count_instructions(p, c) for p, c in zip(pythons, caches, strict=True)]
    base_total, base_sha = counts[0]
    print("\ninstructions of one warm load (callgrind; SHA-256 portable under valgrind)")
    print(f"{'jaxcc':<60} {'all':>9} {'ratio':>6} {'no SHA':>9} {'ratio':>6}")
    for origin, (total, sha) in zip(origins, counts, strict=True):
        print(
            f"{origin:<60} {total:>9,} {total / base_total:>6.3f} {total - sha:>9,} "
            f"{(total - sha) / (base_total - base_sha):>6.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", default=[], help="interpreter (repeatable)")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--headers", type=int, default=0, help="headers the module includes")
    parser.add_argument("--library", action="store_true", help="link a static archive")
    parser.add_argument(
        "--no-breakdown", dest="breakdown", action="store_false", help="skip the per-stage rounds"
    )
    parser.add_argument(
        "--instructions", action="store_true", help="also count one load's instructions (valgrind)"
    )
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    with tempfile.TemporaryDirectory() as root:
        caches = [f"{root}/cache{i}" for i in range(len(pythons))]
        if args.headers:
            with_headers(root, args.headers)
        if args.library:
            with_library(root)
        origins = [probe(p, c, "warmup")[2] for p, c in zip(pythons, caches, strict=True)]
        loads = [[] for _ in pythons]
        reloads = [[] for _ in pythons]
        breakdowns = [{} for _ in pythons]
        for round_index in range(args.rounds):
            # Rotate who goes first, so drift in the machine's speed hits every side alike.
            order = list(range(len(pythons)))
            order = order[round_index % len(order) :] + order[: round_index % len(order)]
            for i in order:
                load, reload, _, _ = probe(pythons[i], caches[i], "timed")
                loads[i].append(load)
                reloads[i].append(reload)
                if args.breakdown:
                    # Separate processes: the wrappers themselves cost a little.
                    _, _, _, stages = probe(pythons[i], caches[i], "timed", breakdown=True)
                    for stage, seconds in stages.items():
                        breakdowns[i].setdefault(stage, []).append(seconds)
        if args.instructions:
            print_instructions(pythons, caches, origins)
    base = statistics.median(loads[0])
    reload_base = statistics.median(reloads[0])
    print(f"warm load in a fresh process, median of {args.rounds} (interleaved)")
    print(f"{'jaxcc':<60} {'warm load':>10} {'ratio':>6} {'reload':>9} {'ratio':>6}")
    for i, origin in enumerate(origins):
        load = statistics.median(loads[i])
        reload = statistics.median(reloads[i])
        print(
            f"{origin:<60} {load * 1e3:>8.3f}ms {load / base:>6.2f} {reload * 1e6:>7.1f}us "
            f"{reload / reload_base:>6.2f}"
        )
    if args.breakdown:
        for i, origin in enumerate(origins):
            print(f"\nwhere the warm load goes ({origin}), medians, separate instrumented runs:")
            for stage, values in breakdowns[i].items():
                print(f"  {stage:<36} {statistics.median(values) * 1e3:>8.3f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

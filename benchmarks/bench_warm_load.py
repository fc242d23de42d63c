"""Warm load, side by side: several Python interpreters (each with its own jaxcc installed, e.g. a
venv of an older commit) load the same cached module in fresh processes, interleaved round by
round, and the medians and their ratio to the first interpreter are printed.

Run:  python benchmarks/bench_warm_load.py --python /path/a/python --python /path/b/python
      [--rounds 21]
Each side gets a cache directory of its own, warmed before timing. Measured per process, after
`import jax` and `import jaxcc`: one load_cpp_inline that hits the cache, then in-process reloads
(in-process table hits; best of 5 x 500)."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap

from bench_core import SEED_SRC

PROBE = textwrap.dedent(
    """
    import sys, time, timeit, jax
    import jaxcc
    jaxcc.set_cache_dir(sys.argv[2])
    functions = {"add_one": None, "scale_by": ["arg", "ret", "attr.factor:float32"]}
    t0 = time.perf_counter()
    mod = jaxcc.load_cpp_inline("bench_warm", sys.argv[1], functions)
    t1 = time.perf_counter()
    assert mod.cache_hit or sys.argv[3] == "warmup", "expected a cache hit"
    again = lambda: jaxcc.load_cpp_inline("bench_warm", sys.argv[1], functions)
    reload = min(timeit.repeat(again, number=500, repeat=5)) / 500
    print(t1 - t0, reload, jaxcc.__file__)
    """
)


def probe(python: str, cache: str, mode: str) -> tuple[float, float, str]:
    out = subprocess.run(
        [python, "-c", PROBE, SEED_SRC, cache, mode], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), float(out[1]), out[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", default=[], help="interpreter (repeatable)")
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    with tempfile.TemporaryDirectory() as root:
        caches = [f"{root}/cache{i}" for i in range(len(pythons))]
        origins = [probe(p, c, "warmup")[2] for p, c in zip(pythons, caches, strict=True)]
        loads = [[] for _ in pythons]
        reloads = [[] for _ in pythons]
        for round_index in range(args.rounds):
            # Rotate who goes first, so drift in the machine's speed hits every side alike.
            order = list(range(len(pythons)))
            order = order[round_index % len(order) :] + order[: round_index % len(order)]
            for i in order:
                load, reload, _ = probe(pythons[i], caches[i], "timed")
                loads[i].append(load)
                reloads[i].append(reload)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cold build of the seeds' CPU module (add_one + scale_by) into an empty cache, each round in a
fresh process, at -O3 (jaxcc's default) and -O0; optionally interleaved with other interpreters
(another jaxcc install, e.g. main's) so that a shared machine's load hits both sides alike.

Run:  python benchmarks/bench_cold_build.py [--rounds N] [--against /path/to/other/python ...]
Prints medians per interpreter and level, and the ratios to the first interpreter.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

PROBE = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[2])
    from bench_core import SEED_SRC, SEED_FUNCTIONS
    import jaxcc
    jaxcc.set_cache_dir(sys.argv[1])
    t0 = time.perf_counter()
    jaxcc.load_cpp_inline("bench_cold", SEED_SRC, SEED_FUNCTIONS, auto_register=False,
                          optimization_level=int(sys.argv[3]))
    print(time.perf_counter() - t0)
    """
)


def cold_build(python: str, level: int) -> float:
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run(
            [python, "-c", PROBE, cache, os.path.dirname(os.path.abspath(__file__)), str(level)],
            check=True,
            capture_output=True,
            text=True,
        )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", nargs="*", default=[], help="other interpreters to interleave")
    args = parser.parse_args()
    pythons = [sys.executable, *args.against]
    samples: dict[tuple[str, int], list[float]] = {(p, lv): [] for p in pythons for lv in (3, 0)}
    for _ in range(args.rounds):
        for level in (3, 0):
            for python in pythons:
                samples[(python, level)].append(cold_build(python, level))
    print(f"cold build, seeds' CPU module, empty cache, fresh process; medians of {args.rounds}")
    for level in (3, 0):
        base = statistics.median(samples[(pythons[0], level)])
        for python in pythons:
            median = statistics.median(samples[(python, level)])
            print(f"  -O{level}  {median:6.2f} s  ({median / base:.2f}x)  {python}")


if __name__ == "__main__":
    main()

"""jaxcc against brainevent and TVM-FFI (+ jax-tvm-ffi), side by side: the same add_one kernel
through each tool, fresh processes, sides interleaved round by round, medians and ratios to jaxcc.

Run:  python benchmarks/bench_peers.py --python VENV/bin/python [--rows ROWS] [--rounds N]
                                       [--json OUT.json]
      python benchmarks/bench_peers.py --setup VENV     (creates VENV with the peers and jaxcc)
VENV's interpreter must have jax, jaxcc, brainevent, apache-tvm-ffi and jax-tvm-ffi installed (all
in one environment, so every side runs on the same Python and jax). `--setup` makes one: Python
3.12 from pyenv with brainevent 0.3 where it exists, else this interpreter with brainevent 0.2.1
(printed, and recorded in the JSON). A side whose package is missing is left out, not faked.

Rows (--rows, comma-separated; default all):
  cold_o3       cold build of the module, every tool at -O3 (fresh cache or build directory)
  cold_default  cold build at each tool's default flags
  warm          warm load in a fresh process (cache hit, after `import jax` and the tool's import)
  import        `import <tool>` after `import jax`, fresh process
  per_call      per call, jitted ffi_call, 16 / 4096 / 65536 floats, one process, interleaved
  in_loop       per call inside one jitted fori_loop of --loop calls (no Python dispatch: XLA's
                custom-call overhead plus each tool's handler), same sizes, interleaved
  eager         jaxcc XLACustomKernel eager call vs a jitted ffi_call of the same target
Figures are medians over --rounds; ratios are side / jaxcc (below 1: the peer is faster). The
per_call and in_loop rows pool --processes processes and also print the median of the ratios
paired within each round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

from peer_probes import EAGER, JAXCC_SOURCE, PER_CALL, PROBE, TVM_SOURCE

ROWS = ("cold_o3", "cold_default", "warm", "import", "per_call", "in_loop", "eager")
SIDES = ("jaxcc", "brainevent", "tvm_ffi")
SIZES = (16, 4096, 65536)


def run_json(python: str, args: list[str], stdin: str = "", env: dict | None = None):
    full_env = dict(os.environ)
    # As in an activated venv: its bin directory first on PATH. TVM-FFI runs `ninja` from PATH
    # on every load_inline; found through a pyenv shim (a bash script) instead of the venv's
    # ninja wheel, its warm load measured 60 ms instead of 4 ms.
    bin_dir = os.path.dirname(os.path.abspath(python))
    full_env["PATH"] = bin_dir + os.pathsep + full_env.get("PATH", "")
    full_env.update(env or {})
    proc = subprocess.run(
        [python, "-c", *args], input=stdin, capture_output=True, text=True, env=full_env
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed ({args[1:3]}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def versions(python: str) -> dict:
    code = textwrap.dedent(
        """
        import importlib.metadata as m, json, platform
        out = {"python": platform.python_version()}
        for d in ("jax", "jaxlib", "jaxcc", "brainevent", "apache-tvm-ffi", "jax-tvm-ffi"):
            try:
                out[d] = m.version(d)
            except m.PackageNotFoundError:
                pass
        print(json.dumps(out))
        """
    )
    return run_json(python, [code])


def available_sides(found: dict) -> list[str]:
    sides = ["jaxcc"] if "jaxcc" in found else []
    if "brainevent" in found:
        sides.append("brainevent")
    if "apache-tvm-ffi" in found and "jax-tvm-ffi" in found:
        sides.append("tvm_ffi")
    return sides


def source_of(side: str) -> str:
    return TVM_SOURCE if side == "tvm_ffi" else JAXCC_SOURCE


def fresh_load(python: str, side: str, flags: str, cache: str, action: str = "load") -> dict:
    # brainevent and jaxcc read their cache directories from the environment; TVM-FFI gets its
    # build directory as an argument of load_inline.
    env = {"BRAINEVENT_CACHE_DIR": cache, "JAXCC_CACHE_DIR": cache}
    return run_json(python, [PROBE, side, action, cache, flags], source_of(side), env)


def rotated(items: list, r: int) -> list:
    return items[r % len(items) :] + items[: r % len(items)]


def guarded(side: str, failed: dict, fn, *args):
    """Runs one probe; a side whose probe fails is reported once and left out of the row."""
    if side in failed:
        return None
    try:
        return fn(*args)
    except RuntimeError as e:
        failed[side] = str(e).splitlines()[-1] if str(e) else "failed"
        print(f"  {side}: probe failed, left out of this row: {e}", file=sys.stderr)
        return None


def row_cold(python, sides, rounds, flags) -> dict:
    samples = {s: [] for s in sides}
    failed: dict = {}
    for r in range(rounds):
        for side in rotated(sides, r):
            with tempfile.TemporaryDirectory() as cache:
                probe = guarded(side, failed, fresh_load, python, side, flags, cache)
                if probe is not None:
                    samples[side].append(probe["load"])
    return {s: v for s, v in samples.items() if v}


def row_warm_and_import(python, sides, rounds) -> tuple[dict, dict]:
    warm = {s: [] for s in sides}
    imports = {s: [] for s in sides}
    with tempfile.TemporaryDirectory() as root:
        caches = {s: os.path.join(root, s) for s in sides}
        failed: dict = {}
        for side in sides:  # the build that later loads hit
            guarded(side, failed, fresh_load, python, side, "O3", caches[side])
        for r in range(rounds):
            for side in rotated(sides, r):
                probe = guarded(side, failed, fresh_load, python, side, "O3", caches[side])
                if probe is not None:
                    warm[side].append(probe["load"])
                    imports[side].append(probe["import"])
    return {s: v for s, v in warm.items() if v}, {s: v for s, v in imports.items() if v}


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def print_row(title: str, samples: dict, unit: str, scale: float) -> dict:
    base = median(samples.get("jaxcc", []))
    cells = []
    summary = {}
    for side, values in samples.items():
        m = median(values)
        summary[side] = {"median": m, "ratio_to_jaxcc": m / base if base else None}
        cells.append(f"{side} {m * scale:.3f} {unit} ({m / base:.2f}x)" if base else side)
    print(f"{title:<34} " + " | ".join(cells))
    return summary


def paired_ratios(per_side: dict, summary: dict) -> dict:
    """Adds to each side's summary the median over rounds of side / jaxcc measured in the same
    round of the same process (the figure least moved by drift between rounds), and prints
    them."""
    base_runs = per_side.get("jaxcc")
    if not base_runs:
        return summary
    cells = []
    for side, runs in per_side.items():
        ratios = [
            v / b
            for run, base in zip(runs, base_runs, strict=True)
            for v, b in zip(run, base, strict=True)
        ]
        summary[side]["paired_ratio_to_jaxcc"] = median(ratios)
        wins = sum(r > 1 for r in ratios)
        cells.append(f"{side} {median(ratios):.4f}x (jaxcc faster in {wins}/{len(ratios)})")
    print(f"{'  paired, same round':<34} " + " | ".join(cells[1:]))
    return summary


def measure(
    python: str, rows: list[str], rounds: int, calls: int, loop_calls: int, processes: int
) -> dict:
    found = versions(python)
    sides = available_sides(found)
    results: dict = {"versions": found, "sides": sides, "rounds": rounds, "rows": {}}
    results["machine"] = f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs"
    print(f"versions: {json.dumps(found)}")
    print(f"sides: {', '.join(sides)}; medians of {rounds} rounds, ratio = side / jaxcc\n")
    out = results["rows"]
    if "cold_o3" in rows:
        out["cold_o3"] = print_row(
            "cold build, all -O3", row_cold(python, sides, rounds, "O3"), "s", 1
        )
    if "cold_default" in rows:
        out["cold_default"] = print_row(
            "cold build, default flags", row_cold(python, sides, rounds, "default"), "s", 1
        )
    if "warm" in rows or "import" in rows:
        warm, imports = row_warm_and_import(python, sides, rounds)
        if "warm" in rows:
            out["warm"] = print_row("warm load, fresh process", warm, "ms", 1e3)
        if "import" in rows:
            out["import"] = print_row("import <tool> after jax", imports, "ms", 1e3)
    per_call_rows = (
        ("per_call", 0, "jitted", "us", 1e6),
        ("in_loop", loop_calls, "in a loop", "ns", 1e9),
    )
    for row, loop, label, unit, scale in per_call_rows:
        if row not in rows:
            continue
        sizes = ",".join(map(str, SIZES))
        args = [PER_CALL, JAXCC_SOURCE, TVM_SOURCE, str(rounds), str(calls), sizes, str(loop)]
        # Several processes: each maps the libraries at other addresses, and a layout that
        # happens to favour one side in one process is a 1% effect at 16 floats.
        pooled: dict = {}
        for _ in range(processes):
            for n, samples in run_json(python, args).items():
                for side, values in samples.items():
                    pooled.setdefault(n, {}).setdefault(side, []).append(values)
        out[row] = {}
        for n, per_side in pooled.items():
            samples = {side: [v for run in runs for v in run] for side, runs in per_side.items()}
            summary = print_row(f"per call, {label}, {n} floats", samples, unit, scale)
            out[row][n] = paired_ratios(per_side, summary)
    if "eager" in rows and "jaxcc" in sides:
        samples = run_json(python, [EAGER, JAXCC_SOURCE, str(rounds), str(max(calls // 4, 50))])
        base = median(samples["ffi_call (eager)"])
        out["eager"] = {
            k: {"median": median(v), "ratio": median(v) / base} for k, v in samples.items()
        }
        cells = [
            f"{k} {median(v) * 1e6:.2f} us ({median(v) / base:.2f}x)" for k, v in samples.items()
        ]
        print(f"{'jaxcc eager, 16 floats':<34} " + " | ".join(cells))
    return results


def setup(venv: str, repo: str) -> str:
    """Creates `venv` with jax (this interpreter's version), the peers and this jaxcc tree."""
    import importlib.metadata as metadata

    jax_version = metadata.version("jax")
    py312 = "/root/.pyenv/versions/3.12.1/bin/python"
    base = py312 if os.path.exists(py312) else shutil.which("python3.12")
    brainevent = "brainevent==0.3.0"
    if base is None:
        base, brainevent = sys.executable, "brainevent==0.2.1"
        print("no Python 3.12: falling back to brainevent 0.2.1 on this interpreter")
    subprocess.run([base, "-m", "venv", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    pip = [python, "-m", "pip", "install", "-q"]
    subprocess.run(
        [*pip, f"jax=={jax_version}", f"jaxlib=={jax_version}", brainevent, "apache-tvm-ffi"]
        + ["jax-tvm-ffi", "scikit-build-core", "nanobind", "ninja"],
        check=True,
    )
    subprocess.run([*pip, "--no-build-isolation", "--no-deps", repo], check=True)
    print(f"set up {venv} ({brainevent})")
    return python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter with every tool")
    parser.add_argument("--setup", metavar="VENV", help="create VENV with the peers and jaxcc")
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated: " + ",".join(ROWS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000, help="calls per per-call sample")
    parser.add_argument("--loop", type=int, default=2000, help="calls per in_loop sample")
    parser.add_argument(
        "--processes", type=int, default=3, help="processes for per_call and in_loop"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args()
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {','.join(ROWS)}")
    python = args.python
    if args.setup:
        python = setup(args.setup, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    results = measure(python, rows, args.rounds, args.calls, args.loop, args.processes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

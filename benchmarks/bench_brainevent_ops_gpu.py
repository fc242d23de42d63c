"""brainevent 0.3.0's own CUDA operators on an NVIDIA GPU: through jaxcc against through
brainevent's own loader, the same .cu kernels (issue 21 item 5).

Each side runs in fresh processes with brainevent 0.3.0 imported; the jaxcc side loads the
test-only shim first (tests/brainevent_on_jaxcc/plugin.py), so brainevent's operators build their
kernels with jaxcc.load_cuda_file and run as jaxcc's XLACustomKernel; the brainevent side is
brainevent as installed. For every primitive with a `cuda_raw` GPU kernel and benchmark data
(brainevent's own `def_benchmark_data` generators), the first `--configs` configurations are
called through `backend='cuda_raw'` under `jax.jit`.

Rows:
  ready     wall seconds from the first lowering to every operator compiled: the CUDA builds
            (lowerings run `--jobs` at a time in threads; both loaders release the GIL while nvcc
            runs) and XLA's compiles. Round 1 builds into empty caches (cold); later rounds hit.
  per call  median per jitted call (batches of `--calls` calls, then a block), per operator and
            configuration, median over the rounds; ratio = jaxcc / brainevent (below 1: jaxcc is
            faster). Results are compared between the sides (allclose): a mismatch is reported.
Sides alternate which goes first round by round.

BENCH_OPS_DUMP_HLO=DIR writes each side's program (StableHLO, and HLO after XLA's passes) there.

Run:  python benchmarks/bench_brainevent_ops_gpu.py [--rounds 2] [--configs 2] [--jobs 16]
                                                    [--json OUT.json] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests")

PROBE = textwrap.dedent(
    """
    import concurrent.futures, itertools, json, os, sys, time
    side, cache, configs_per, jobs, calls, outdir = sys.argv[1], sys.argv[2], int(sys.argv[3]), \\
        int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    only = set(json.loads(sys.argv[7]))
    if side == "jaxcc":
        os.environ["JAXCC_CACHE_DIR"] = cache
        sys.path.insert(0, sys.argv[8])
        import brainevent_on_jaxcc.plugin  # noqa: F401  (installs the shim before brainevent)
    import jax, numpy as np
    import brainevent
    from brainevent import _registry
    if side == "brainevent":
        brainevent.set_cache_dir(cache)
    else:
        import jaxcc
        assert brainevent._op.XLACustomKernel is jaxcc.XLACustomKernel
    np.random.seed(0)  # some data generators draw from NumPy's global generator
    sys.path.insert(0, sys.argv[9])
    from brainevent_ops_timing import LOOP, loopable, looped, timed
    items = []
    for name, kernel in sorted(_registry.get_registry().items()):
        if only and name not in only:
            continue
        if "cuda_raw" not in kernel.available_backends("gpu") or kernel._benchmark_data_fn is None:
            continue
        for config in itertools.islice(kernel._benchmark_data_fn(platform="gpu"), configs_per):
            kw = dict(config.kernel_kwargs)
            def call(*a, _k=kernel, _kw=kw, _b="cuda_raw"):
                return _k._call_fn(*a, backend=_b, **_kw)
            def reference(*a, _k=kernel, _kw=kw):
                return _k._call_fn(*a, backend="jax_raw", **_kw)
            loop = looped(kernel, kw) if loopable(config.args) else None
            has_ref = "jax_raw" in kernel.available_backends("gpu")
            items.append((name, config.name, jax.jit(call), config.args, loop,
                          jax.jit(reference) if has_ref else None))
    start = time.perf_counter()
    failed = {}
    def lower(item):
        try:
            exe = item[2].lower(*item[3]).compile()
        except Exception as exc:  # reported per operator
            failed[item[0] + " " + item[1]] = f"{type(exc).__name__}: {str(exc)[:300]}"
            return None, None
        try:
            loop = item[4].lower(*item[3]).compile() if item[4] is not None else None
        except Exception as exc:
            failed[item[0] + " " + item[1] + " (loop)"] = f"{type(exc).__name__}: {str(exc)[:300]}"
            loop = None
        dump = os.environ.get("BENCH_OPS_DUMP_HLO")
        if dump:
            # The program each side runs, before and after XLA's passes (why a row differs).
            base = os.path.join(dump, side, (item[0] + "-" + item[1]).replace("/", "_"))
            os.makedirs(os.path.dirname(base), exist_ok=True)
            with open(base + ".pre.txt", "w") as f:
                f.write(item[2].lower(*item[3]).as_text())
            with open(base + ".post.txt", "w") as f:
                f.write(exe.as_text())
        return exe, loop
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        compiled = list(pool.map(lower, items))
    ready = time.perf_counter() - start

    rows, outputs, wrong = [], {}, []
    for (name, label, f, args, _, ref), (exe, loop) in zip(items, compiled):
        if exe is None:
            continue
        out = jax.block_until_ready(exe(*args))
        key = name + " | " + label
        if ref is not None:
            try:
                want = jax.block_until_ready(ref(*args))
                got_l, want_l = jax.tree.leaves(out), jax.tree.leaves(want)
                # The math result is the first output; later ones are workspaces/status words.
                if not np.allclose(np.asarray(got_l[0], np.float64),
                                   np.asarray(want_l[0], np.float64), rtol=1e-3, atol=1e-3):
                    wrong.append(key)
            except Exception as exc:
                failed[key + " (jax_raw reference)"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        row = {"key": key, "us": timed(exe, args, 1, calls, 15)}
        if loop is not None:
            row["loop_us"] = timed(loop, args, LOOP, 2, 7)
        rows.append(row)
        for i, leaf in enumerate(jax.tree.leaves(out)):
            outputs[f"{len(rows) - 1}:{i}"] = np.asarray(leaf)
    np.savez(os.path.join(outdir, side + ".npz"), keys=np.array([r["key"] for r in rows]),
             **outputs)
    print("RESULT " + json.dumps({"ready_s": ready, "rows": rows, "failed": failed,
                                  "items": len(items), "wrong_vs_jax_raw": wrong}))
    """
)


def run_side(python, side, cache, args, outdir):
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    env.pop("JAXCC_SHIM_OFF", None)
    proc = subprocess.run(
        [python, "-c", PROBE, side, cache, str(args.configs), str(args.jobs), str(args.calls),
         outdir, json.dumps(args.only or []), TESTS, HERE],
        capture_output=True, text=True, env=env, timeout=args.timeout,
    )  # fmt: skip
    line = next((s for s in proc.stdout.splitlines() if s.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        raise SystemExit(f"{side} failed (rc {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(line[len("RESULT ") :])


def compare_outputs(outdir_a, outdir_b) -> list[str]:
    import numpy as np

    a, b = np.load(os.path.join(outdir_a, "jaxcc.npz")), np.load(outdir_b + "/brainevent.npz")
    keys_a, keys_b = list(a["keys"]), list(b["keys"])
    differ = []
    for ia, key in enumerate(keys_a):
        if key not in keys_b:
            continue
        ib = keys_b.index(key)
        i = 0
        while f"{ia}:{i}" in a.files and f"{ib}:{i}" in b.files:
            x, y = a[f"{ia}:{i}"], b[f"{ib}:{i}"]
            if x.shape != y.shape or not np.allclose(x, y, rtol=1e-4, atol=1e-4, equal_nan=True):
                differ.append(f"{key} (output {i})")
            i += 1
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--configs", type=int, default=2, help="configurations per operator")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--calls", type=int, default=50, help="calls per timed batch")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--only", nargs="*", help="primitive names (default: every one)")
    parser.add_argument("--cache-root", help="the two sides' caches (default: a new temp dir)")
    parser.add_argument("--json")
    args = parser.parse_args()
    root = args.cache_root or tempfile.mkdtemp(prefix="bench_be_ops_")
    results = {"jaxcc": [], "brainevent": []}
    differ: list[str] = []
    for r in range(args.rounds):
        outdirs = {}
        for side in ("jaxcc", "brainevent") if r % 2 == 0 else ("brainevent", "jaxcc"):
            outdirs[side] = tempfile.mkdtemp(prefix=f"be_ops_{side}_")
            res = run_side(args.python, side, os.path.join(root, side), args, outdirs[side])
            results[side].append(res)
            state = "cold" if r == 0 else "warm"
            print(
                f"round {r + 1} {side}: {res['items']} operator configs, ready in "
                f"{res['ready_s']:.1f} s ({state}), {len(res['failed'])} failed",
                flush=True,
            )
            for key, why in res["failed"].items():
                print(f"    FAILED {key}: {why}")
        if r == 0:
            differ = compare_outputs(outdirs["jaxcc"], outdirs["brainevent"])
    per = {side: {} for side in results}
    loop = {side: {} for side in results}
    for side, runs in results.items():
        for res in runs:
            for row in res["rows"]:
                per[side].setdefault(row["key"], []).append(row["us"])
                if "loop_us" in row:
                    loop[side].setdefault(row["key"], []).append(row["loop_us"])
    keys = [k for k in per["jaxcc"] if k in per["brainevent"]]
    ratios, loop_ratios, loop_diffs = [], [], []
    print(
        f"\n{'operator | config':60} {'dispatch us: jaxcc':>18} {'brainevent':>10} {'ratio':>6}"
        f" {'in-loop us: jaxcc':>17} {'brainevent':>10} {'ratio':>6}"
    )
    for key in keys:
        j, b = statistics.median(per["jaxcc"][key]), statistics.median(per["brainevent"][key])
        ratios.append(j / b)
        line = f"{key[:60]:60} {j:18.2f} {b:10.2f} {j / b:6.2f}"
        if key in loop["jaxcc"] and key in loop["brainevent"]:
            lj = statistics.median(loop["jaxcc"][key])
            lb = statistics.median(loop["brainevent"][key])
            loop_ratios.append(lj / lb)
            loop_diffs.append(lj - lb)
            line += f" {lj:17.2f} {lb:10.2f} {lj / lb:6.2f}"
        print(line)

    def spread(values):
        if not values:
            return None
        return {
            "median": statistics.median(values),
            "geomean": statistics.geometric_mean(values) if min(values) > 0 else None,
            "min": min(values),
            "max": max(values),
        }

    summary = {
        "operator_configs": len(keys),
        "dispatch_ratio": spread(ratios),
        "in_loop_ratio": spread(loop_ratios),
        "in_loop_difference_us": spread(loop_diffs),
        "ready_s": {s: [round(x["ready_s"], 2) for x in runs] for s, runs in results.items()},
        "wrong_vs_jax_raw": {
            s: sorted({k for x in runs for k in x["wrong_vs_jax_raw"]})
            for s, runs in results.items()
        },
        "failed_on_one_side_only": sorted(
            set(results["jaxcc"][0]["failed"]) ^ set(results["brainevent"][0]["failed"])
        ),
        "outputs_differ": differ,
        "only_on_one_side": sorted(set(per["jaxcc"]) ^ set(per["brainevent"])),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"summary": summary, "per_call_us": per, "runs": results}, f, indent=1)


if __name__ == "__main__":
    main()

"""brainevent 0.3.0's CUDA operators per call, through brainevent's own loader and through jaxcc,
in ONE process, the two interleaved (issue 21 item 5: parity on the GPU).

bench_brainevent_ops_gpu.py runs each side in its own processes (the shim is process-wide), and
identical programs read up to 30% apart between processes there. Here brainevent runs as
installed, with its `load_cuda_file` teed (tests/brainevent_on_jaxcc/twin.py): every .cu file an
operator loads is built by brainevent's loader and by jaxcc's (targets `jx_<module>.<fn>`), and
each operator configuration is jitted twice, once lowered normally (brainevent's handler) and
once inside `twin.jaxcc_targets()` (jaxcc's handler for the same kernel source; the rest of the
program is the same). The compiled programs are checked: the jaxcc one must name only `jx_`
targets where the brainevent one names brainevent's. Then both are timed round by round,
alternating which goes first: per iteration of a jitted 100-step loop (no Python dispatch) and
per jitted call. The outputs of the two are compared (allclose).

Needs a GPU, brainevent 0.3.0 and jaxcc. Run:
    python benchmarks/bench_brainevent_ops_gpu_paired.py [--configs 2] [--rounds 7] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from brainevent_ops_timing import LOOP, loopable, looped, timed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--json")
    args = parser.parse_args()
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    from brainevent_on_jaxcc import twin

    twin.install()
    import brainevent  # noqa: F401
    import jax
    import numpy as np
    from brainevent import _registry

    np.random.seed(0)
    rows, problems = [], []
    for name, kernel in sorted(_registry.get_registry().items()):
        if args.only and name not in args.only:
            continue
        if "cuda_raw" not in kernel.available_backends("gpu") or kernel._benchmark_data_fn is None:
            continue
        for config in itertools.islice(kernel._benchmark_data_fn(platform="gpu"), args.configs):
            kw = dict(config.kernel_kwargs)
            key = f"{name} | {config.name}"
            sides = {}
            try:
                for side in ("brainevent", "jaxcc"):
                    call = jax.jit(
                        lambda *a, _k=kernel, _kw=kw: _k._call_fn(*a, backend="cuda_raw", **_kw)
                    )  # noqa: E501
                    loop = looped(kernel, kw) if loopable(config.args) else None
                    with twin.jaxcc_targets() if side == "jaxcc" else contextlib.nullcontext():
                        exe = call.lower(*config.args).compile()
                        loop_exe = loop.lower(*config.args).compile() if loop else None
                    sides[side] = (exe, loop_exe)
            except Exception as exc:  # noqa: BLE001 - reported per configuration
                problems.append(f"{key}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            text_be, text_jx = sides["brainevent"][0].as_text(), sides["jaxcc"][0].as_text()
            if twin.PREFIX not in text_jx and any(m + "." in text_be for m in twin.teed_modules):
                problems.append(f"{key}: the jaxcc program does not call jaxcc's targets")
                continue
            outs = {s: jax.block_until_ready(sides[s][0](*config.args)) for s in sides}
            got_be, got_jx = jax.tree.leaves(outs["brainevent"]), jax.tree.leaves(outs["jaxcc"])
            same = len(got_be) == len(got_jx) and all(
                np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), 1e-4, 1e-4)
                for a, b in zip(got_be, got_jx, strict=True)
            )
            samples = {s: {"call": [], "loop": []} for s in sides}
            for r in range(args.rounds):
                for side in ("brainevent", "jaxcc") if r % 2 == 0 else ("jaxcc", "brainevent"):
                    exe, loop_exe = sides[side]
                    samples[side]["call"].append(timed(exe, config.args, 1, 20, 5))
                    if loop_exe is not None:
                        samples[side]["loop"].append(timed(loop_exe, config.args, LOOP, 1, 3))
            row = {"key": key, "same_result": same, "calls_jaxcc_targets": twin.PREFIX in text_jx}
            for kind in ("call", "loop"):
                if samples["jaxcc"][kind]:
                    j = statistics.median(samples["jaxcc"][kind])
                    b = statistics.median(samples["brainevent"][kind])
                    row[kind] = {"jaxcc_us": j, "brainevent_us": b, "ratio": j / b}
            rows.append(row)
            loop = row.get("loop", {})
            print(f"{key[:60]:60} call {row['call']['ratio']:.3f}"
                  + (f"  loop {loop['jaxcc_us']:.2f} / {loop['brainevent_us']:.2f} us "
                     f"{loop['ratio']:.3f}" if loop else "")
                  + ("" if same else "  RESULTS DIFFER"), flush=True)  # fmt: skip
    summary = {}
    for kind in ("call", "loop"):
        ratios = [r[kind]["ratio"] for r in rows if kind in r and r["calls_jaxcc_targets"]]
        if ratios:
            summary[kind] = {"n": len(ratios), "median": statistics.median(ratios),
                             "min": min(ratios), "max": max(ratios)}  # fmt: skip
    summary["results_differ"] = [r["key"] for r in rows if not r["same_result"]]
    summary["problems"] = problems
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"summary": summary, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

"""The summary of scripts/gpu-check.sh: OUTDIR/summary.json and summary.md from the steps and
the pytest JUnit files, with skipped tests counted apart from passed ones (issue 25: a skip used
to count as a pass, so a GPU machine without Triton reported PASSED).

    gpu_check_summary.py OUTDIR HAVE_GPU SECONDS GPU_COUNT COMPUTE_CAPABILITY [FAILED_STEP...]

On a GPU machine every test is expected to run except those EXPECTED_SKIPS allows on it (two-GPU
tests on a one-GPU machine, ...); any other skip fails the check (exit 1), as a failure does.
Without a GPU the skips are reported and allowed: only the CPU halves were meant to run."""

import json
import os
import re
import sys
import xml.etree.ElementTree as ET

# (reason pattern, when a skip with that reason is expected on a GPU machine, why)
EXPECTED_SKIPS = [
    (r"needs two GPUs", lambda gpus, cc: gpus < 2, "two-GPU tests on a machine with one GPU"),
    (r"a GPU is present", lambda gpus, cc: True, "tests of the no-GPU error path"),
    (r"needs sm_90 or newer", lambda gpus, cc: cc < 9.0, "Hopper-only Triton features"),
]


def skip_expected(reason: str, have_gpu: bool, gpus: int, cc: float) -> bool:
    if not have_gpu:
        return True  # the CPU halves only: what a GPU would run is skipped by design
    return any(re.search(p, reason) and when(gpus, cc) for p, when, _ in EXPECTED_SKIPS)


def main(argv) -> int:
    out, have_gpu, seconds = argv[1], argv[2] == "1", int(argv[3])
    gpus, cc, failed = int(argv[4] or 0), float(argv[5] or 0), argv[6:]
    summary = {
        "gpu": have_gpu,
        "gpu_count": gpus,
        "compute_capability": cc,
        "seconds": seconds,
        "failed_steps": failed,
        "steps": [],
        "tests": {},
    }
    with open(os.path.join(out, "steps.tsv")) as f:
        for line in f:
            name, rc, took = line.rstrip("\n").split("\t")
            summary["steps"].append({"name": name, "exit": int(rc), "seconds": int(took)})
    for kind in ("cpu-tests", "gpu-tests", "gpu-tests-static"):
        path = os.path.join(out, f"{kind}.xml")
        if not os.path.exists(path):
            continue
        results = []
        for case in ET.parse(path).getroot().iter("testcase"):
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error"):
                    outcome = "failed"
                elif child.tag == "skipped" and outcome == "passed":
                    reason = child.get("message") or ""
                    expected = skip_expected(reason, have_gpu, gpus, cc)
                    outcome = f"{'skipped' if expected else 'unexpected skip'}: {reason}"
            results.append(
                {
                    "test": f"{case.get('classname')}::{case.get('name')}",
                    "outcome": outcome,
                    "seconds": float(case.get("time") or 0),
                }
            )
        summary["tests"][kind] = results
    bench_path = os.path.join(out, "bench_cuda_gpu.json")
    if os.path.exists(bench_path):
        with open(bench_path) as f:
            summary["benchmark"] = json.load(f)
    for name in ("versions.txt", "nvidia-smi.txt"):
        path = os.path.join(out, name)
        if os.path.exists(path):
            with open(path) as f:
                summary[name.split(".")[0]] = f.read().strip()
    results = [r for rs in summary["tests"].values() for r in rs]
    summary["unexpected_skips"] = [
        r["test"] for r in results if r["outcome"].startswith("unexpected skip")
    ]
    summary["ok"] = (
        not failed
        and not summary["unexpected_skips"]
        and all(not r["outcome"].startswith("failed") for r in results)
    )
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)

    md = ["# jaxcc GPU check", ""]
    md.append(
        f"**{'PASSED' if summary['ok'] else 'FAILED'}** in {seconds} s; "
        + (
            "GPU: " + (summary.get("nvidia-smi") or "(no nvidia-smi output)").splitlines()[0]
            if have_gpu
            else "no GPU on this machine: CPU halves only"
        )
    )
    md += [
        "",
        "```",
        summary.get("versions", ""),
        "```",
        "",
        "## Steps",
        "",
        "| step | exit | seconds |",
        "|---|---|---|",
    ]
    md += [f"| {s['name']} | {s['exit']} | {s['seconds']} |" for s in summary["steps"]]
    bench = summary.get("benchmark")
    if bench:
        md += [
            "",
            f"## Benchmark ({bench['device']}, jax {bench['jax']})",
            "",
            f"XLA_FLAGS: `{bench['xla_flags']}`; capture verified: {bench['capture']['ok']} "
            f"({json.dumps(bench['capture'])})",
            "",
            "| measurement | value |",
            "|---|---|",
        ]
        md += [f"| {k} | {v:.2f} µs |" for k, v in bench["per_call_us"].items()]
        md += [f"| {k} bandwidth | {v:.1f} GB/s |" for k, v in bench["bandwidth_gbs"].items()]
        if "bandwidth_fraction_of_kernel" in bench:
            md.append(
                f"| vector_add / its kernel alone | {bench['bandwidth_fraction_of_kernel']:.3f} "
                "(target ≥ 0.95) |"
            )
        md += [
            f"| vector_add / copy bandwidth | {bench['bandwidth_fraction_of_copy']:.3f} "
            "(the kernel's; 0.94 on an H100, 0.82 on an H200) |",
            f"| graph / no graph per fori_loop iteration | {bench['graph_over_no_graph']:.2f} |",
        ]
    for kind, results in summary["tests"].items():
        counts = {}
        for r in results:
            key = r["outcome"].split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        md += [
            "",
            f"## {kind} ({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))})",
            "",
            "| test | outcome | seconds |",
            "|---|---|---|",
        ]
        md += [f"| `{r['test']}` | {r['outcome']} | {r['seconds']:.2f} |" for r in results]
    if summary["unexpected_skips"]:
        md += ["", "## Skipped where they must run (the check fails)", ""]
        md += [f"- `{t}`" for t in summary["unexpected_skips"]]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md[:3]))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env bash
# The whole GPU verification of jaxcc in one command (docs/gpu.md):
#
#   scripts/gpu-check.sh OUTDIR
#
# Builds jaxcc from this working tree (pip install --no-build-isolation --no-deps: no network or
# registry needed), runs the CPU halves (the bridges' CPU tests, tests/test_cuda_readiness.py,
# examples/gpu_backends.py --build-only), and on a machine with an NVIDIA GPU every `gpu`-marked
# test, benchmarks/bench_cuda_gpu.py and examples/gpu_backends.py. Writes OUTDIR/summary.md and
# OUTDIR/summary.json (pass/fail per test, per-call times, vector_add bandwidth against the card's
# measured device-to-device copy bandwidth, graph vs no-graph) plus one log per step. Exits 1 if
# anything failed; without a GPU it says so and exits 0 once the CPU halves pass.
#
# Environment: PYTHON (default python3) is the interpreter whose packages (jax with CUDA, triton,
# numba-cuda, nanobind, scikit-build-core) are used; jaxcc is installed into a virtual
# environment under OUTDIR that sees them (--system-site-packages), or into PYTHON itself when
# no virtual environment can be made. JAXCC_GPU_CHECK_NO_INSTALL=1 uses the installed jaxcc.
set -uo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: scripts/gpu-check.sh OUTDIR" >&2
  exit 2
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1" || exit 2
OUT="$(cd "$1" && pwd)"
BASE_PYTHON="${PYTHON:-python3}"
START=$(date +%s)
FAILED=()
STEPS="$OUT/steps.tsv"
: >"$STEPS"

say() { printf '[gpu-check %4ss] %s\n' "$(($(date +%s) - START))" "$*"; }

# step NAME TIMEOUT_SECONDS COMMAND...: runs COMMAND with its output in OUTDIR/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local began=$(date +%s)
  say "$name ..."
  (cd "$ROOT" && timeout "$limit" "$@") >"$OUT/$name.log" 2>&1
  local rc=$?
  local seconds=$(($(date +%s) - began))
  printf '%s\t%s\t%s\n' "$name" "$rc" "$seconds" >>"$STEPS"
  if [[ $rc -ne 0 ]]; then
    FAILED+=("$name")
    say "$name FAILED (exit $rc, ${seconds}s; log: $OUT/$name.log)"
    tail -n 25 "$OUT/$name.log" | sed 's/^/    /'
  else
    say "$name ok (${seconds}s)"
  fi
  return $rc
}

# --- the GPU, if any ---------------------------------------------------------------------------
HAVE_GPU=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >"$OUT/nvidia-smi.txt" 2>&1; then
  HAVE_GPU=1
  nvidia-smi >>"$OUT/nvidia-smi.txt" 2>&1
  say "GPU: $(head -n 1 "$OUT/nvidia-smi.txt")"
else
  say "no NVIDIA GPU here (nvidia-smi -L failed or is missing): running the CPU halves only"
fi

# --- build jaxcc from the working tree ---------------------------------------------------------
PY="$BASE_PYTHON"
if [[ "${JAXCC_GPU_CHECK_NO_INSTALL:-0}" != 1 ]]; then
  # A virtual environment only sees the base interpreter's packages; when PYTHON is itself a
  # virtual environment (or the new one cannot import what the build needs) jaxcc goes into it.
  if "$BASE_PYTHON" -c "import sys; sys.exit(sys.prefix != sys.base_prefix)" 2>/dev/null &&
    "$BASE_PYTHON" -m venv --system-site-packages "$OUT/venv" >"$OUT/venv.log" 2>&1 &&
    "$OUT/venv/bin/python" -c "import jax, nanobind, scikit_build_core" >>"$OUT/venv.log" 2>&1; then
    PY="$OUT/venv/bin/python"
  else
    say "installing into $BASE_PYTHON itself (no usable virtual environment; see venv.log)"
  fi
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
  if ! step build 420 "$PY" -m pip install --no-build-isolation --no-deps --no-index . ; then
    say "the build failed: nothing else can run"
  fi
fi
export JAXCC_CACHE_DIR="$OUT/jaxcc-cache" # one cache for every step (launchers built once)
# Steps run side by side; XLA would otherwise take 75% of the card per process.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export PYTHONDONTWRITEBYTECODE=1
"$PY" - >"$OUT/versions.txt" 2>&1 <<'EOF'
import importlib, platform, subprocess
print("python", platform.python_version())
for name in ("jax", "jaxlib", "jaxcc", "triton", "numba", "numba_cuda", "cupy", "nanobind"):
    try:
        print(name, getattr(importlib.import_module(name), "__version__", "?"))
    except Exception as e:  # noqa: BLE001
        print(name, "not importable:", type(e).__name__, e)
try:
    print(subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1])
except Exception as e:  # noqa: BLE001
    print("nvcc: not found", e)
EOF

if [[ ${#FAILED[@]} -eq 0 ]]; then
  JAX_GPU=0
  if [[ $HAVE_GPU == 1 ]]; then
    if "$PY" -c "import jax, sys; sys.exit(0 if jax.devices('gpu') else 1)" >"$OUT/jax-gpu.log" 2>&1; then
      JAX_GPU=1
    else
      FAILED+=("jax-sees-the-gpu")
      say "nvidia-smi sees a GPU but JAX does not (see jax-gpu.log): install jax[cuda13]"
    fi
  fi

  # --- the CPU halves (always), alongside the GPU tests when there is a GPU ----------------------
  CPU_TESTS=(tests/custom_kernel/test_triton_bridge.py tests/custom_kernel/test_numba_cuda_bridge.py
    tests/custom_kernel/test_numba_bridge.py tests/test_cuda_readiness.py)
  # A background subshell cannot add to FAILED: its exit status says whether a step failed.
  (
    rc=0
    step cpu-tests 420 "$PY" -m pytest -q -m "not gpu" -p no:cacheprovider \
      --junitxml="$OUT/cpu-tests.xml" "${CPU_TESTS[@]}" || rc=1
    step example-build-only 300 "$PY" examples/gpu_backends.py --build-only --arch 9.0 || rc=1
    exit $rc
  ) &
  CPU_PID=$!
  if [[ $JAX_GPU == 1 ]]; then
    step gpu-tests 420 "$PY" -m pytest -q -m gpu -p no:cacheprovider -rs \
      --junitxml="$OUT/gpu-tests.xml" tests
  fi
  wait $CPU_PID || FAILED+=("cpu-halves")

  # --- on the GPU: the example and the benchmark (alone on the machine, for clean timings) -------
  if [[ $JAX_GPU == 1 ]]; then
    step example-gpu 300 "$PY" examples/gpu_backends.py --png "$OUT/gpu_backends.png"
    step bench-cuda-gpu 300 "$PY" benchmarks/bench_cuda_gpu.py --json "$OUT/bench_cuda_gpu.json"
  fi
fi

# --- one summary --------------------------------------------------------------------------------
SUMMARY_OK=1
"$PY" - "$OUT" "$HAVE_GPU" "$(($(date +%s) - START))" "${FAILED[@]}" <<'EOF' || SUMMARY_OK=0
import json, os, sys
import xml.etree.ElementTree as ET

out, have_gpu, seconds, failed = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), sys.argv[4:]
summary = {"gpu": have_gpu, "seconds": seconds, "failed_steps": failed, "steps": [], "tests": {}}
with open(os.path.join(out, "steps.tsv")) as f:
    for line in f:
        name, rc, took = line.rstrip("\n").split("\t")
        summary["steps"].append({"name": name, "exit": int(rc), "seconds": int(took)})
for kind in ("cpu-tests", "gpu-tests"):
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
                outcome = "skipped: " + (child.get("message") or "")
        results.append({"test": f"{case.get('classname')}::{case.get('name')}",
                        "outcome": outcome, "seconds": float(case.get("time") or 0)})
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
summary["ok"] = not failed and all(
    not r["outcome"].startswith("failed") for rs in summary["tests"].values() for r in rs)
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump(summary, f, indent=2)

md = ["# jaxcc GPU check", ""]
md.append(f"**{'PASSED' if summary['ok'] else 'FAILED'}** in {seconds} s; "
          + ("GPU: " + summary.get("nvidia-smi", "").splitlines()[0] if have_gpu
             else "no GPU on this machine: CPU halves only"))
md += ["", "```", summary.get("versions", ""), "```", "", "## Steps", "",
       "| step | exit | seconds |", "|---|---|---|"]
md += [f"| {s['name']} | {s['exit']} | {s['seconds']} |" for s in summary["steps"]]
bench = summary.get("benchmark")
if bench:
    md += ["", f"## Benchmark ({bench['device']}, jax {bench['jax']})", "",
           f"XLA_FLAGS: `{bench['xla_flags']}`; capture verified: {bench['capture']['ok']} "
           f"({json.dumps(bench['capture'])})", "", "| measurement | value |", "|---|---|"]
    md += [f"| {k} | {v:.2f} µs |" for k, v in bench["per_call_us"].items()]
    md += [f"| {k} bandwidth | {v:.1f} GB/s |" for k, v in bench["bandwidth_gbs"].items()]
    md += [f"| vector_add / copy bandwidth | {bench['bandwidth_fraction_of_copy']:.3f} (target ≥ 0.9) |",
           f"| graph / no graph per fori_loop iteration | {bench['graph_over_no_graph']:.2f} |"]
for kind, results in summary["tests"].items():
    counts = {}
    for r in results:
        key = r["outcome"].split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    md += ["", f"## {kind} ({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))})", "",
           "| test | outcome | seconds |", "|---|---|---|"]
    md += [f"| `{r['test']}` | {r['outcome']} | {r['seconds']:.2f} |" for r in results]
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(md) + "\n")
print("\n".join(md[:3]))
EOF

if [[ $SUMMARY_OK == 1 ]]; then
  say "summary: $OUT/summary.md, $OUT/summary.json"
else
  say "no summary: $PY could not write it"
  FAILED+=("summary")
fi
if [[ ${#FAILED[@]} -ne 0 ]]; then
  say "FAILED: ${FAILED[*]}"
  exit 1
fi
if [[ $HAVE_GPU == 0 ]]; then
  say "no GPU: the CPU halves passed; run this again on a machine with an NVIDIA GPU"
fi
exit 0

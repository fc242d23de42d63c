#!/usr/bin/env bash
# A GPU session's device checks as ONE device call (docs/gpu.md, "A session with a GPU"):
#
#   scripts/gpu-session.sh OUTDIR [SECONDS]
#
# A session is lent 15 minutes of device time, a machine's start included, and one command may
# run 10; so everything runs in one call, in the order of what only a GPU can show, each step
# started only while its usual time fits in SECONDS (default 540) since the start:
#   1. scripts/gpu-check.sh: every `gpu` test under both runtimes side by side (the default,
#      JAX's shared runtime since decision 152, and JAXCC_CUDA_RUNTIME=static), the example,
#      bench_cuda_gpu.py, brainevent's own CUDA-path tests through the shim, in triage mode, for
#      the directories no GPU session has run yet (_dense, _jit_uniform, _event, _jit_scalar,
#      _jit_normal and _fcn have passed; _csr and _tcsr now, _op after them;
#      BRAINEVENT_GPU_DIRS overrides); 349 s on an H200 with _jit_normal and _fcn
#      (seventeenth session). tests/gpu/test_state_gpu.py (cuBLAS handle per call site) has
#      not run on a GPU yet
#   2. scripts/gpu-brainevent.sh shared: the corpus with the shared runtime and the warm probe
#      in a JAX GPU process, now naming the slowest warm index stages (about 85 s)
#   3. benchmarks/bench_gpu_resources.py: State and Scratch against the same work per call
#      (never run on a GPU yet; about 30 s)
#   4. benchmarks/bench_first_call_gpu.py --rounds 2: Numba-CUDA and Pallas first calls, jaxcc
#      against brainevent (never run on a GPU yet; about 90 s)
#   5. benchmarks/bench_parallel.py on the machine's 16 cores (5 s)
#   6. scripts/gpu-brainevent.sh paired: per-call parity of brainevent's CUDA operators, both
#      kernel layers in one process (what time is left, at least 90 s)
# The wheels .whl/ holds (scripts/gpu-wheels.sh, run on a machine that reaches PyPI; carry
# `.whl`) are installed into /tmp/site first. Everything is written under /tmp/gpu-session; what
# comes back fits the device tool's limit of 8 files: OUTDIR/session.log, the check's summary.md
# and summary.json, the JSON of steps 2-4 and 6 (steps 3 and 4 into one file), and logs.tgz with
# every log.
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: scripts/gpu-session.sh OUTDIR [SECONDS]" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1" && OUT="$(cd "$1" && pwd)"
BUDGET=${2:-540}
WORK=/tmp/gpu-session
rm -rf "$WORK" && mkdir -p "$WORK"
START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - START))); }
say() { printf '[gpu-session %4ss] %s\n' "$(($(date +%s) - START))" "$*" | tee -a "$OUT/session.log"; }
export PYTHONUNBUFFERED=1

if compgen -G "$ROOT/.whl/*.whl" >/dev/null; then
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$ROOT"/.whl/*.whl >"$WORK/wheels.log" 2>&1; then
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  else
    say "installing the carried wheels failed (wheels.log): brainevent steps will be skipped"
  fi
else
  say "no .whl/ carried (scripts/gpu-wheels.sh): brainevent steps will be skipped"
fi

FAILED=()
export BRAINEVENT_GPU_DIRS=${BRAINEVENT_GPU_DIRS:-_csr _tcsr}
export BRAINEVENT_GPU_TRIAGE=${BRAINEVENT_GPU_TRIAGE-1}
say "1. gpu-check ($(left) s left; brainevent's CUDA tests of $BRAINEVENT_GPU_DIRS)"
"$ROOT/scripts/gpu-check.sh" "$WORK/check" 2>&1 | tee -a "$OUT/session.log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || FAILED+=(gpu-check)
cp "$WORK/check/summary.md" "$WORK/check/summary.json" "$OUT/" 2>/dev/null
# gpu-check installed jaxcc into its virtual environment: the later steps use that one.
PY=python3
[[ -x $WORK/check/venv/bin/python ]] && PY=$WORK/check/venv/bin/python

have_brainevent=0
"$PY" -c "import brainevent, brainstate" >/dev/null 2>&1 && have_brainevent=1
if [[ $have_brainevent == 1 && $(left) -ge 110 ]]; then
  say "2. gpu-brainevent shared ($(left) s left)"
  PYTHON=$PY "$ROOT/scripts/gpu-brainevent.sh" "$WORK/be" shared 2>&1 | tee -a "$OUT/session.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || FAILED+=(shared)
  cp "$WORK/be/shared-corpus.json" "$WORK/be/shared-load.json" "$OUT/" 2>/dev/null
else
  say "2. skipped (brainevent importable: $have_brainevent; $(left) s left, 110 needed)"
fi
if [[ $(left) -ge 60 ]]; then
  say "3. bench_gpu_resources ($(left) s left)"
  timeout $(($(left) - 10)) "$PY" benchmarks/bench_gpu_resources.py --json "$WORK/resources.json" \
    2>&1 | tee "$WORK/bench_gpu_resources.log" | tee -a "$OUT/session.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || FAILED+=(resources)
fi
if [[ $have_brainevent == 1 && $(left) -ge 120 ]]; then
  say "4. bench_first_call_gpu ($(left) s left)"
  timeout $(($(left) - 10)) "$PY" benchmarks/bench_first_call_gpu.py --rounds 2 \
    --json "$WORK/first_call.json" 2>&1 | tee "$WORK/bench_first_call_gpu.log" |
    tee -a "$OUT/session.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || FAILED+=(first-call)
fi
"$PY" - "$WORK" "$OUT/benchmarks.json" <<'EOF2'
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
found = {p.stem: json.loads(p.read_text()) for p in (work / "resources.json", work / "first_call.json") if p.exists()}
pathlib.Path(sys.argv[2]).write_text(json.dumps(found, indent=1))
EOF2
if [[ $(left) -ge 60 ]]; then
  # The pool's speed-up on the device machine's 16 cores (issue 41; the VM has 2).
  say "5. bench_parallel on $(nproc) cores ($(left) s left)"
  JAX_PLATFORMS=cpu timeout $(($(left) - 10)) "$PY" benchmarks/bench_parallel.py --rounds 3 \
    --calls 10 --no-brainevent 2>&1 | tee "$WORK/bench_parallel.log" | tee -a "$OUT/session.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || FAILED+=(parallel)
fi
if [[ $have_brainevent == 1 && $(left) -ge 90 ]]; then
  say "6. gpu-brainevent paired ($(left) s left)"
  PYTHON=$PY timeout $(($(left) - 15)) "$ROOT/scripts/gpu-brainevent.sh" "$WORK/be" paired 2>&1 |
    tee -a "$OUT/session.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || FAILED+=(paired)
  cp "$WORK/be/paired.json" "$OUT/" 2>/dev/null
else
  say "6. skipped ($(left) s left, 90 needed)"
fi

# Every log, without caches, virtual environments or build trees.
tar czf "$OUT/logs.tgz" -C "$WORK" --exclude='*-cache' --exclude='*-caches' --exclude=venv \
  --exclude='*.so' . 2>/dev/null
say "done in $(($(date +%s) - START)) s; failed: ${FAILED[*]:-none}"
[[ ${#FAILED[@]} -eq 0 ]]

#!/usr/bin/env bash
# brainevent 0.3.0's CUDA operators through jaxcc on an NVIDIA GPU (issue 21 items 3-5):
#
#   scripts/gpu-brainevent.sh OUTDIR [STEP...]
#
# Needs a Python (PYTHON, default python3) with jaxcc, brainevent==0.3.0 and brainstate
# installed and JAX for CUDA. Steps (default: all, in this order), each with a log in OUTDIR;
# on the H100 machine (16 cores) they took: corpus 108 s, cold about 200 s, load 30 s, ops 110 s
# a round, peers about 100 s (`paired` not yet run), so through a device tool that allows 10
# minutes a command, name two or three steps a call (corpus before load and cold's --warm-all).
#   corpus   every .cu of the package built with jaxcc.load_cuda_file for sm_80 + sm_90, all
#            cores (scripts/brainevent_corpus.py); leaves the cache OUTDIR/corpus-cache
#   cold     bench_brainevent_corpus.py: the whole corpus cold, jaxcc vs brainevent's loader,
#            for this GPU's architecture, all cores each, then the warm rows and --warm-all
#   load     scripts/gpu_load_probe.py: warm CUDA loads in a JAX GPU process (docs/gpu.md)
#   ops      bench_brainevent_ops_gpu.py: every cuda_raw operator, per-call time and results,
#            through jaxcc vs through brainevent's own loader
#   paired   bench_brainevent_ops_gpu_paired.py: the same operators through both kernel layers in
#            ONE process, interleaved (tests/brainevent_on_jaxcc/twin.py): per-call parity
#   peers    bench_peers_gpu.py: vector_add through jaxcc, brainevent (and TVM-FFI if installed)
#   shared   the corpus again with JAXCC_CUDA_RUNTIME=shared (decision 136: modules link JAX's own
#            wheel runtime) into OUTDIR/shared-cache, then gpu_load_probe.py over it: the warm
#            all-60 total with JAX's backend up (not in the default list: name it)
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: scripts/gpu-brainevent.sh OUTDIR [STEP...]" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1" && OUT="$(cd "$1" && pwd)"
shift
STEPS=("$@")
[[ ${#STEPS[@]} -gt 0 ]] || STEPS=(corpus cold load paired ops peers)
PY=${PYTHON:-python3}
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
ARCH=${ARCH:-9.0}
JOBS=$(nproc)
START=$(date +%s)
FAILED=()
step() {
  local name=$1 limit=$2
  shift 2
  local began=$(date +%s)
  echo "[gpu-brainevent $(($(date +%s) - START))s] $name ..."
  (cd "$ROOT" && timeout "$limit" "$@") 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "[gpu-brainevent $(($(date +%s) - START))s] $name exit $rc ($(($(date +%s) - began))s)"
  [[ $rc -eq 0 ]] || FAILED+=("$name")
}
for s in "${STEPS[@]}"; do
  case $s in
    corpus) step corpus 300 "$PY" scripts/brainevent_corpus.py --cache-dir "$OUT/corpus-cache" \
      --jobs "$JOBS" --json "$OUT/corpus.json" ;;
    cold)
      warm_all=()
      [[ -d $OUT/corpus-cache ]] && warm_all=(--warm-all "$OUT/corpus-cache")
      step cold 400 "$PY" benchmarks/bench_brainevent_corpus.py --files all --arch "$ARCH" \
        --jobs "$JOBS" --rounds 3 --cache-root "$OUT/cold-caches" "${warm_all[@]}" ;;
    load) step load 300 "$PY" scripts/gpu_load_probe.py "$OUT/corpus-cache" --json "$OUT/load.json" ;;
    ops) step ops 400 "$PY" benchmarks/bench_brainevent_ops_gpu.py --rounds 3 --configs 2 \
      --jobs "$JOBS" --cache-root "$OUT/ops-caches" --json "$OUT/ops.json" ;;
    paired) step paired 400 "$PY" benchmarks/bench_brainevent_ops_gpu_paired.py --configs 2 \
      --rounds 7 --json "$OUT/paired.json" ;;
    peers) step peers 200 "$PY" benchmarks/bench_peers_gpu.py --rounds 3 --json "$OUT/peers.json" ;;
    shared)
      step shared-corpus 300 env JAXCC_CUDA_RUNTIME=shared "$PY" scripts/brainevent_corpus.py \
        --cache-dir "$OUT/shared-cache" --jobs "$JOBS" --json "$OUT/shared-corpus.json"
      step shared-load 300 env JAXCC_CUDA_RUNTIME=shared "$PY" scripts/gpu_load_probe.py \
        "$OUT/shared-cache" --json "$OUT/shared-load.json" ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
  esac
done
[[ ${#FAILED[@]} -eq 0 ]] || { echo "FAILED: ${FAILED[*]}"; exit 1; }

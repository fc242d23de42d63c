#!/usr/bin/env bash
# brainevent 0.3.0's own operator tests on jaxcc (issue 21 item 4), through the test-only shim
# tests/brainevent_on_jaxcc/plugin.py, which replaces brainevent's kernel layer (loaders,
# XLACustomKernel, numba_kernel, ...) with jaxcc's. Every test directory of the installed package
# runs on jaxcc and on brainevent itself (JAXCC_SHIM_OFF=1), on the CPU; the script prints the
# counts and times of both and exits 1 when jaxcc does worse than brainevent.
#   ./scripts/brainevent-on-jaxcc.sh [--triage] [-n N] [PYTHON] [DIR...]
# Full mode (default): both sides run every test of DIR; the counts must be equal.
# --triage: jaxcc runs every test of DIR, then brainevent runs ONLY the tests that did not pass on
#   jaxcc (failed, errored or skipped), so each is classified "the same on brainevent" or
#   "jaxcc's" (passes on brainevent, fails on jaxcc) at a fraction of the cost; exit 1 when any
#   is jaxcc's. The node ids and both outcomes land in build/brainevent-on-jaxcc/<dir>.triage.
# -n N: pytest-xdist with N workers on both sides (only on an otherwise idle machine).
# --gpu: leave JAX on its default platform (the GPU where there is one) instead of
#   JAX_PLATFORMS=cpu, so the tests take their CUDA paths (scripts/gpu-check.sh uses this).
# -k EXPR: only the tests pytest's -k selects, on both sides (e.g. -k cuda_raw with --gpu).
# PYTHON: an interpreter with brainevent 0.3.0, brainstate, numba and jaxcc installed (default
# build/venv312/bin/python); DIR: package directories such as _dense _csr, or . for the package's
# top-level *_test.py (default: all, smaller first). _csr and _fcn's tests also import braintools
# (pip install braintools; without it their collection fails and the row shows rc=2). Each run
# uses a private jaxcc cache that starts empty, so jaxcc's times include every compile.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
triage=0
workers=()
platform=(JAX_PLATFORMS=cpu)
select_k=()
while [ $# -gt 0 ]; do
  case $1 in
    --triage) triage=1; shift ;;
    -n) workers=(-n "$2"); shift 2 ;;
    --gpu) platform=(); shift ;;
    -k) select_k=(-k "$2"); shift 2 ;;
    *) break ;;
  esac
done
python=${1:-build/venv312/bin/python}
shift || true
# A bare command name (gpu-check.sh passes python3) is looked up on PATH; a relative path is
# made absolute, since the runs happen in the package's directory.
if [[ $python != */* ]]; then python=$(command -v "$python") || exit 2
elif [[ $python != /* ]]; then python=$PWD/$python; fi
package=$("$python" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("brainevent").origin))') || {
  echo "brainevent-on-jaxcc: $python has no brainevent" >&2
  exit 2
}
version=$("$python" -c 'import importlib.metadata as m; print(m.version("brainevent"))')
[ "$version" = 0.3.0 ] || echo "brainevent-on-jaxcc: brainevent $version, not 0.3.0" >&2
if [ $# -gt 0 ]; then dirs=("$@"); else
  # Smallest first (lines of tests), so a run cut short has covered the most directories.
  mapfile -t dirs < <(cd "$package" && for d in _*/ .; do
    [ "$d" = . ] && files=(./*_test.py) || files=("$d"*_test.py "$d"*/*_test.py)
    echo "$(cat "${files[@]}" 2>/dev/null | wc -l) ${d%/}"; done | sort -n | awk '$1 > 0 {print $2}')
fi
tests=$PWD/tests
log=$PWD/build/brainevent-on-jaxcc
mkdir -p "$log"
status=0

# run SIDE DIR SELECTFILE: one pytest session; sets $summary (pass/fail/skip s) and writes the
# outcomes of its tests to $log/<dir>.<side>.outcomes.
run() {
  local side=$1 dir=$2 select=$3 off=0 name=${2//\//_} targets cache start
  [ "$name" = . ] && name=top
  [ "$side" = brainevent ] && off=1
  # "." is the package's top level: its own *_test.py files, not the subdirectories'.
  if [ "$dir" = . ]; then targets=$(cd "$package" && ls ./*_test.py); else targets=$dir; fi
  cache=$(mktemp -d)
  rm -f "$log/$name.$side.outcomes" "$log/$name.$side.outcomes.partial"
  start=$(date +%s)
  (cd "$package" && env "${platform[@]}" JAXCC_SHIM_OFF=$off JAXCC_CACHE_DIR=$cache \
    JAXCC_SHIM_OUTCOMES=$log/$name.$side.outcomes JAXCC_SHIM_SELECT=$select \
    PYTHONPATH=$tests "$python" -m pytest -p brainevent_on_jaxcc.plugin \
    -p no:cacheprovider "${workers[@]}" "${select_k[@]}" -q -rfE $targets) \
    > "$log/$name.$side.log" 2>&1
  local rc=$? seconds=$(( $(date +%s) - start ))
  rm -rf "$cache"
  local f=$log/$name.$side.outcomes
  [ -f "$f" ] || : > "$f"
  summary="$(grep -c ^passed "$f")/$(grep -cE '^(failed|error)' "$f")/$(grep -c ^skipped "$f") ${seconds}s"
  # pytest exits 0, 1 (failures) or 5 (nothing selected); anything else (an internal error, a
  # crash of the interpreter) means the counts are partial: say so, and fail the run.
  case $rc in 0 | 1 | 5) ;; *) summary+=" rc=$rc"; status=1 ;; esac
}

if [ $triage = 0 ]; then
  printf '%-14s %-24s %-24s\n' directory "jaxcc (pass/fail/skip s)" "brainevent"
else
  printf '%-14s %-24s %-34s %s\n' directory "jaxcc (pass/fail/skip s)" \
    "brainevent on jaxcc's non-passed" "classified"
fi
for dir in "${dirs[@]}"; do
  name=${dir//\//_}; [ "$name" = . ] && name=top
  run jaxcc "$dir" ""
  ours=$summary
  if [ $triage = 0 ]; then
    run brainevent "$dir" ""
    printf '%-14s %-24s %-24s\n' "$dir" "$ours" "$summary"
    [ "${ours% *}" = "${summary% *}" ] || status=1
    continue
  fi
  grep -v ^passed "$log/$name.jaxcc.outcomes" | cut -f2- > "$log/$name.select"
  if [ -s "$log/$name.select" ]; then
    run brainevent "$dir" "$log/$name.select"
  else
    summary="-"; : > "$log/$name.brainevent.outcomes"
  fi
  # Join the two sides by node id: a test that did not pass on jaxcc but passed on brainevent is
  # jaxcc's; one that fails (or skips) on both is brainevent's own.
  classified=$(python3 - "$log/$name" <<'PY'
import sys
base = sys.argv[1]
def read(side):
    with open(f"{base}.{side}.outcomes", encoding="utf-8") as f:
        return dict(reversed(line.rstrip("\n").split("\t", 1)) for line in f if line.strip())
ours, theirs = read("jaxcc"), read("brainevent")
rows, same, mine = [], 0, 0
for node, outcome in sorted(ours.items()):
    if outcome == "passed":
        continue
    other = theirs.get(node, "not run")
    # jaxcc's: brainevent passes it, skips what jaxcc fails, or never ran it (look at it).
    is_mine = other in ("passed", "not run") or (outcome != "skipped" and other == "skipped")
    mine += is_mine
    same += not is_mine
    rows.append(f"{'JAXCC' if is_mine else 'same'}\t{outcome}\t{other}\t{node}\n")
with open(f"{base}.triage", "w", encoding="utf-8") as f:
    f.write("class\tjaxcc\tbrainevent\tnode id\n")
    f.writelines(rows)
print(f"{same} same, {mine} jaxcc's")
PY
)
  printf '%-14s %-24s %-34s %s\n' "$dir" "$ours" "$summary" "$classified"
  case $classified in *" 0 jaxcc's") ;; *) status=1 ;; esac
done
echo "logs: $log/<dir>.<side>.log (failures listed at their ends), <dir>.<side>.outcomes," \
  "<dir>.triage (triage mode: each non-passed test with both outcomes)"
exit $status

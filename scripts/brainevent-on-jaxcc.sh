#!/usr/bin/env bash
# brainevent 0.3.0's own operator tests on jaxcc (issue 21 item 4), through the test-only shim
# tests/brainevent_on_jaxcc/plugin.py, which replaces brainevent's kernel layer (loaders,
# XLACustomKernel, numba_kernel, ...) with jaxcc's. Every test directory of the installed package
# runs twice, on jaxcc and on brainevent itself (JAXCC_SHIM_OFF=1), on the CPU; the script prints
# the counts and times of both and exits 1 when jaxcc's counts differ from brainevent's.
#   ./scripts/brainevent-on-jaxcc.sh [PYTHON] [DIR...]
# PYTHON: an interpreter with brainevent 0.3.0, brainstate, numba and jaxcc installed (default
# build/venv312/bin/python); DIR: package directories such as _dense _csr (default: all). Each
# run uses a private jaxcc cache that starts empty, so jaxcc's times include every compile.
set -uo pipefail
cd "$(dirname "$0")/.."
python=${1:-build/venv312/bin/python}
shift || true
[[ $python = /* ]] || python=$PWD/$python
package=$("$python" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("brainevent").origin))') || {
  echo "brainevent-on-jaxcc: $python has no brainevent" >&2
  exit 2
}
version=$("$python" -c 'import importlib.metadata as m; print(m.version("brainevent"))')
[ "$version" = 0.3.0 ] || echo "brainevent-on-jaxcc: brainevent $version, not 0.3.0" >&2
if [ $# -gt 0 ]; then dirs=("$@"); else
  mapfile -t dirs < <(cd "$package" && ls -d _*/ | tr -d / && echo .)
fi
tests=$PWD/tests
log=build/brainevent-on-jaxcc
mkdir -p "$log"
status=0
printf '%-14s %-22s %-22s\n' directory "jaxcc (pass/fail/skip s)" "brainevent"
for dir in "${dirs[@]}"; do
  # "." is the package's top level: its own *_test.py files, not the subdirectories'.
  if [ "$dir" = . ]; then targets=$(cd "$package" && ls ./*_test.py); else targets=$dir; fi
  row=()
  for side in jaxcc brainevent; do
    off=0; [ $side = brainevent ] && off=1
    cache=$(mktemp -d)
    start=$(date +%s)
    (cd "$package" && JAXCC_SHIM_OFF=$off JAX_PLATFORMS=cpu JAXCC_CACHE_DIR=$cache \
      PYTHONPATH=$tests "$python" -m pytest -p brainevent_on_jaxcc.plugin \
      -p no:cacheprovider -q -rfE $targets) > "$log/${dir//\//_}.$side.log" 2>&1
    seconds=$(( $(date +%s) - start ))
    rm -rf "$cache"
    summary=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error|skipped)' "$log/${dir//\//_}.$side.log" | tail -1)
    count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '[0-9]+' || echo 0; }
    row+=("$(count passed)/$(( $(count failed) + $(count error) ))/$(count skipped) ${seconds}s")
  done
  printf '%-14s %-22s %-22s\n' "$dir" "${row[0]}" "${row[1]}"
  [ "${row[0]% *}" = "${row[1]% *}" ] || status=1
done
echo "logs: $log/<dir>.<side>.log (failures listed at their ends)"
exit $status

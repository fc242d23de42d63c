#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, build/fuzz) and runs them all at once, each for
# about JAXCC_FUZZ_SECONDS (default 30) of one core, starting from a scratch copy of its corpus in
# fuzz/corpus/ so the repository's corpus stays as committed. Exits non-zero if any target crashed, timed out or
# broke an invariant; the input that did it is kept under build/fuzz/artifacts/<target>/.
#   JAXCC_FUZZ_SECONDS=600 ./scripts/fuzz.sh              # longer run
#   ./scripts/fuzz.sh fuzz_signature                      # one target
#   build/fuzz/src/fuzz/fuzz_signature <crash file>       # replay one input
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${JAXCC_FUZZ_SECONDS:-30}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_arg_spec fuzz_signature fuzz_macro_expander)
CXX_FUZZ=${CXX_FUZZ:-clang++}
if ! command -v "$CXX_FUZZ" >/dev/null; then
  echo "fuzz: $CXX_FUZZ not found; run scripts/setup.sh (installs clang) or set CXX_FUZZ" >&2
  exit 1
fi

build=build/fuzz
cmake -S . -B "$build" -G Ninja -DJAXCC_FUZZ=ON -DJAXCC_BUILD_PYTHON=OFF \
  -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# Per target: longest input tried (bytes), and its token dictionary.
declare -A max_len=([fuzz_arg_spec]=1024 [fuzz_signature]=4096 [fuzz_macro_expander]=4096)
declare -A dict=([fuzz_arg_spec]=fuzz/arg_spec.dict [fuzz_signature]=fuzz/signature.dict
  [fuzz_macro_expander]=fuzz/macro_expander.dict)

# run_target TARGET: one libFuzzer run; its summary line goes to build/fuzz/run/TARGET/summary.
# Each libFuzzer process uses one core; the targets run side by side (below).
run_target() {
  local target=$1 name=${1#fuzz_} work=$build/run/$1 artifacts=$build/artifacts/$1 rc=0 line
  rm -rf "$work"
  mkdir -p "$work/corpus" "$artifacts"
  cp -R "fuzz/corpus/$name/." "$work/corpus/"
  local log=$work/fuzz.log
  echo "fuzz: running $target for $wall s beside the others, about $seconds s of one core (corpus fuzz/corpus/$name, log $log)"
  # -timeout: one input taking seconds is a hang worth a report; -rss_limit_mb: a blow-up too.
  "$build/src/fuzz/$target" "$work/corpus" -dict="${dict[$target]}" \
    -max_len="${max_len[$target]}" -max_total_time="$wall" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  local runs speed added cov crash
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log" >&2
    line="fuzz: $target ${runs:-?} runs in $wall s, CRASHED (exit $rc): input ${crash:-not written, see $log}"
  else
    line="fuzz: $target ${runs:-?} runs in $wall s (${speed:-?} exec/s, coverage ${cov:-?}, ${added:-0} new units), 0 crashes"
  fi
  echo "$line" | tee "$work/summary"
  echo "$rc" >"$work/rc"
}

# Every target starts at once. With more targets than cores each runs longer in wall time, so
# that each still gets about $seconds of one core: three targets on two cores take 90 s, where
# two rounds (two targets, then the third beside an idle core) took 120 s (decision 145).
cores=$(nproc)
wall=$seconds
if [ "${#targets[@]}" -gt "$cores" ]; then
  wall=$(((seconds * ${#targets[@]} + cores - 1) / cores))
fi
for target in "${targets[@]}"; do
  run_target "$target" &
done
wait

failed=0
echo "fuzz: summary"
for target in "${targets[@]}"; do
  work=$build/run/$target
  printf '  %s\n' "$(cat "$work/summary" 2>/dev/null || echo "fuzz: $target: no result")"
  [ "$(cat "$work/rc" 2>/dev/null)" = 0 ] || failed=1
done
exit "$failed"

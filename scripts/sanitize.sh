#!/usr/bin/env bash
# The C++ unit tests again, built with AddressSanitizer and UndefinedBehaviorSanitizer
# (JAXCC_SANITIZE=ON, no recovery) in build/asan-<compiler>: any leak, out-of-bounds access or
# undefined behaviour fails the test that triggers it. -O0: the build takes half the time of
# -O1's (177 against 328 s on two cores with g++) for a run 5 s longer, and no access is optimised
# away from the checks. Clang by default (CXX_SANITIZE=g++ for GCC's sanitizers): the same
# checks, the build in three quarters of g++'s time (150 against 198 s), and jaxcc's headers
# compiled by the other compiler users build kernels with, where the Release ctest phase compiles
# them with g++ (decision 167).
set -euo pipefail
cd "$(dirname "$0")/.."

CXX_SANITIZE=${CXX_SANITIZE:-clang++}
if ! command -v "$CXX_SANITIZE" >/dev/null; then
  echo "sanitize: $CXX_SANITIZE not found; run scripts/setup.sh (installs clang) or set CXX_SANITIZE" >&2
  exit 1
fi
build=build/asan-$(basename "$CXX_SANITIZE" | tr -d +)  # asan-clang, asan-g
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DJAXCC_SANITIZE=ON -DJAXCC_BUILD_TESTS=ON \
  -DJAXCC_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
  -DCMAKE_CXX_COMPILER="$(command -v "$CXX_SANITIZE")" >/dev/null
cmake --build "$build" -j "$(nproc)"
built=$(date +%s)

# halt_on_error is the default for ASan; UBSan must also stop and say where.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Left to the ctest phase: the five NvccCompileTest cases that only run nvcc (with its own host
# compiler, g++) on the kernel headers, and a program it built. Nothing of theirs is built with
# the sanitizers, the same commands run in the Release ctest phase, and under ASan they took
# 60 s of the 204 s of tests (decision 255). The two HostCompiler* cases stay: they compile the
# headers with this build's compiler (clang), which the ctest phase does not.
nvcc_only='^NvccCompileTest\.(Seed002KernelsCompileUnchanged|DeviceApiCompilesWithoutWarnings'
nvcc_only+='|Brainevent03ApiCompiles|DataPtrCheckRunsInCudaHostCode|Brainevent03XlaFacingHeadersCompile)$'
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -E "$nvcc_only"
done_at=$(date +%s)
echo "sanitize: build $((built - start)) s, ctest $((done_at - built)) s (ASan+UBSan, $CXX_SANITIZE, $build)"

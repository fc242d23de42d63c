#!/usr/bin/env bash
# The full test suite: C++ unit tests (GoogleTest via ctest), again under ASan+UBSan, the fuzz
# targets for a bounded time, then pytest with real JAX and g++.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

PYTHON=${PYTHON:-python3}
JAX_INCLUDE=$("$PYTHON" -c "import jax.ffi; print(jax.ffi.include_dir())")
cmake -S . -B build/ctest -G Ninja -DJAXCC_BUILD_TESTS=ON -DJAXCC_BUILD_PYTHON=OFF \
  -DJAXCC_FFI_INCLUDE_DIR="$JAX_INCLUDE" >/dev/null
cmake --build build/ctest -j "$(nproc)"
ctest --test-dir build/ctest --output-on-failure -j "$(nproc)"

# The same unit tests under ASan+UBSan, then each fuzz target for JAXCC_FUZZ_SECONDS (60).
./scripts/sanitize.sh
./scripts/fuzz.sh

# Tests run against the installed package, with a private cache per test session.
"$PYTHON" -m pytest tests -q -n "$(nproc)" "$@"

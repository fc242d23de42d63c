#!/usr/bin/env bash
# Installs everything jaxcc needs on a fresh Debian/Ubuntu machine, then builds and installs
# jaxcc itself. Safe to run again: it installs only what is missing and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

# For developers only (a user's `pip install` needs none of these but g++, decision 99):
# nlohmann-json3-dev serves builds without build isolation, libssl-dev the C++ tests' comparison
# of jaxcc's SHA-256 with OpenSSL's (decision 98), libopenblas-dev the CPU BLAS example.
apt_packages=(g++ cmake ninja-build libssl-dev nlohmann-json3-dev libgtest-dev ccache libopenblas-dev)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
# clang brings libFuzzer for scripts/fuzz.sh; any clang++ on the PATH will do. Debian 12 ships
# the fuzzer runtime in libclang-rt-dev (Ubuntu 22.04 inside clang's own packages).
if ! command -v clang++ >/dev/null 2>&1; then
  missing+=(clang)
  apt-cache show libclang-rt-dev >/dev/null 2>&1 && missing+=(libclang-rt-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} (apt-get)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
pip_packages=(jax numpy ninja "nanobind>=2.0" "scikit-build-core>=0.10" pytest pytest-xdist
  numba numba-cuda warp-lang triton matplotlib flatbuffers mypy hypothesis)
if ! "$PYTHON" -c "import jax, numpy, ninja, nanobind, scikit_build_core, pytest, xdist, numba, numba_cuda, warp, triton, matplotlib, flatbuffers, mypy, hypothesis" 2>/dev/null; then
  echo "setup: installing Python packages (pip)"
  "$PYTHON" -m pip install -q --disable-pip-version-check "${pip_packages[@]}"
fi

# ccache lets the builds of jaxcc for the other Pythons (scripts/matrix.sh) reuse the compiled
# core; CMake reads the launcher from the environment when it configures a new build directory.
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache}
fi
echo "setup: building and installing jaxcc (pip install .)"
"$PYTHON" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps . 

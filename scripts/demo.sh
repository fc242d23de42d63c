#!/usr/bin/env bash
# The main job: set up, then compile inline kernels and run them from jitted JAX code.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
"${PYTHON:-python3}" examples/demo.py

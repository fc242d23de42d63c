#!/usr/bin/env bash
# Builds every CUDA source of brainevent 0.3.0 with jaxcc.load_cuda_file, unchanged, for sm_80
# and sm_90, and checks each module's FFI targets against brainevent's own annotation parser
# (scripts/brainevent_corpus.py). Prints one line per file, then `N of 60 files, F functions, T s`.
#
#   ./scripts/brainevent-corpus.sh [--cold] [--jobs N] [--arch X.Y ...] [corpus paths]
#
# Needs a Python with jaxcc and brainevent==0.3.0 installed: $JAXCC_CORPUS_PYTHON, else
# build/venv312/bin/python, else build/venv-py312/bin/python (scripts/matrix.sh's 3.12 leg).
# Loads run --jobs at a time (default: the number of cores), each a jaxcc build of its own.
# The cache is build/brainevent-corpus-cache, kept between runs so that a second run is a warm
# check (60 files in about 3 s); --cold empties it first (29 minutes on 2 loaded cores, both
# architectures).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${JAXCC_CORPUS_PYTHON:-}
for candidate in build/venv312/bin/python build/venv-py312/bin/python; do
  [ -n "$python" ] && break
  [ -x "$candidate" ] && python=$candidate
done
if [ -z "$python" ] || ! "$python" -c "import jaxcc, brainevent" 2>/dev/null; then
  echo "brainevent-corpus: needs a Python with jaxcc and brainevent==0.3.0 (set" \
    "JAXCC_CORPUS_PYTHON, or run ./scripts/matrix.sh test 3.12 first)" >&2
  exit 2
fi
cache=build/brainevent-corpus-cache
if [ "${1:-}" = --cold ]; then
  shift
  rm -rf "$cache"
fi
exec "$python" scripts/brainevent_corpus.py --cache-dir "$cache" "$@"

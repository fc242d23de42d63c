"""brainevent 0.3.0's own CUDA operator sources build with jaxcc.load_cuda_file, unchanged, and
register exactly the FFI targets brainevent's loader would (scripts/brainevent_corpus.py).

A representative subset runs here: one file per directory of brainevent's package, covering
plain entry points, macro-stamped ones, cuBLAS, and the one file that cannot build anywhere.
scripts/brainevent-corpus.sh runs all 61. brainevent needs Python >= 3.12: on older legs these
tests skip. The builds use a persistent cache (build/brainevent-corpus-cache, shared with the
script; $JAXCC_CORPUS_CACHE overrides), so only the first run after a change to jaxcc's headers
or code generation pays for nvcc; the cache is content-addressed, so a hit is the same build.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

import jaxcc

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytest.importorskip("brainevent", reason="brainevent 0.3.0 (Python >= 3.12) is not installed")


def _corpus_module():
    spec = importlib.util.spec_from_file_location(
        "brainevent_corpus", ROOT / "scripts" / "brainevent_corpus.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


corpus = _corpus_module()
BRAINEVENT = corpus.brainevent_dir()


@pytest.fixture(scope="module")
def corpus_cache():
    import os

    cache = os.environ.get("JAXCC_CORPUS_CACHE") or str(ROOT / "build" / "brainevent-corpus-cache")
    previous = jaxcc.get_cache_dir()
    jaxcc.set_cache_dir(cache)
    yield cache
    jaxcc.set_cache_dir(previous)


def test_the_table_names_every_source_of_the_installed_package():
    files = corpus.corpus_files(BRAINEVENT)
    assert len(files) == 61, files
    assert set(files) == set(corpus.MODULE_NAMES)
    assert set(corpus.SUBSET) <= set(files)

    # One file of each directory of the package is in the subset (the three _jit_* directories
    # are one family, generated alike).
    def family(path):
        top = path.split("/")[0]
        return "_jit" if top.startswith("_jit_") else top

    assert {family(f) for f in corpus.SUBSET} == {family(f) for f in files}


# sm_80 for every file of the subset, and one also for sm_90: both architectures the script
# builds, within the test budget.
CASES = [(rel, ["8.0"]) for rel in corpus.SUBSET if rel != "_csr/csr_to_csc.cu"]
CASES.append(("_csr/csr_to_csc.cu", ["8.0", "9.0"]))


@pytest.mark.parametrize("rel, archs", CASES, ids=[c[0] for c in CASES])
def test_subset_builds_with_brainevent_target_names(corpus_cache, rel, archs):
    outcome = corpus.load_one(BRAINEVENT, rel, archs)
    assert outcome.ok, outcome.detail
    if rel in corpus.UNBUILDABLE:
        assert outcome.functions == 0
    else:
        assert outcome.functions > 0


def test_a_missing_header_is_a_compile_error_naming_it(corpus_cache):
    rel = "_tcsr/tile_mm/binary_csrmm_tile.cu"
    name, kwargs = corpus.load_options(rel, ["8.0"], str(BRAINEVENT / "include"))
    with pytest.raises(jaxcc.errors.CompileError) as info:
        jaxcc.load_cuda_file(BRAINEVENT / rel, name=name, **kwargs)
    text = str(info.value)
    assert "bn_tile.cuh" in text
    assert "binary_csrmm_tile.cu:" in text  # at the user's own line
    assert "extra_include_paths" in text  # and the fix

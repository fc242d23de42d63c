"""GPU tests: run only where JAX has a CUDA backend; skipped cleanly (not failed) elsewhere."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _jax_has_gpu() -> bool:
    import jax

    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def pytest_collection_modifyitems(config, items):
    if _jax_has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and a CUDA-enabled jaxlib")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

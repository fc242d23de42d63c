"""CUDA modules carry the static CUDA runtime (decisions 23, 109): they NEED no libcudart, so
loading one never chooses the runtime JAX's own CUDA plugin gets later, and a module loads in a
fresh process without a GPU backend mapping no CUDA runtime library at all."""

import os
import re
import subprocess

import pytest
from conftest import run_python
from cuda_sources import VECTOR_ADD
from test_cuda_build import nvcc_on_path, pytestmark  # noqa: F401 (skip rule, autouse fixture)

import jaxcc


def dynamic_section(library: str) -> tuple[list[str], list[str]]:
    """(NEEDED names, RUNPATH folders) of a shared library, from readelf."""
    out = subprocess.run(["readelf", "-d", library], capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    runpath = [
        d
        for m in re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r\w*path: \[([^\]]+)\]", out)
        for d in m.split(":")
    ]
    return needed, runpath


@pytest.fixture(autouse=True)
def static_runtime(monkeypatch):
    """These tests are about the static runtime, the default where no nvidia-cuda-runtime wheel is
    installed and the choice of JAXCC_CUDA_RUNTIME=static everywhere (decision 152): set it, so a
    machine with JAX's GPU wheels (where the default is the wheel's shared runtime) tests it too."""
    monkeypatch.setenv("JAXCC_CUDA_RUNTIME", "static")


@pytest.fixture
def module(unique_name):
    return jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, compute_capability="8.0")


def cudart_needed(module) -> list[str]:
    needed, _ = dynamic_section(module.path)
    return [n for n in needed if n.startswith("libcudart")]


# Loads the module again (a warm hit) in a fresh process with no GPU backend, then prints every
# mapped CUDA runtime library.
LOAD_AND_LIST = """
import sys, jax, jaxcc
from cuda_sources import VECTOR_ADD
from test_cuda_build import nvcc_on_path, pytestmark  # noqa: F401 (skip rule, autouse fixture)
assert not any(d.platform == "gpu" for d in jax.devices()), "meant for a process without a GPU"
mod = jaxcc.load_cuda_inline(sys.argv[1], VECTOR_ADD, compute_capability="8.0")
assert mod.function_names == ["vector_add"]
maps = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libcudart" in line})
print("MAPPED", *maps)
"""


def test_cuda_module_needs_no_shared_runtime(module):
    # A NEEDED libcudart.so.N would be satisfied by whichever copy a process loaded first under
    # that SONAME: the toolkit's, if a jaxcc module came before JAX's GPU backend (decision 109).
    assert cudart_needed(module) == []


def test_module_loads_in_a_fresh_process_without_a_gpu_backend(module, unique_name):
    here = os.path.dirname(os.path.abspath(__file__))
    code = f"import sys; sys.argv = ['-', {unique_name!r}]; sys.path.insert(0, {here!r})\n"
    result = run_python(code + LOAD_AND_LIST)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [ln for ln in result.stdout.splitlines() if ln.startswith("MAPPED")][-1]
    assert line.split()[1:] == []  # the module's runtime is inside it

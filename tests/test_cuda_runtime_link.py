"""CUDA modules link the shared CUDA runtime with a RUNPATH to the toolkit's copy (decision 109):
without JAX's GPU backend a fresh process finds it there, and a runtime already loaded under the
same SONAME (as in a JAX GPU process) is used instead of a second one."""

import os
import re
import shutil
import subprocess

import pytest
from conftest import run_python
from cuda_sources import VECTOR_ADD

import jaxcc

pytestmark = pytest.mark.skipif(
    shutil.which("nvcc") is None
    and not os.path.exists("/usr/local/cuda/bin/nvcc")
    and not os.environ.get("CUDA_HOME"),
    reason="nvcc is not installed",
)


@pytest.fixture(autouse=True)
def nvcc_on_path(monkeypatch):
    if shutil.which("nvcc") is None and os.path.exists("/usr/local/cuda/bin/nvcc"):
        monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")


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


@pytest.fixture
def module(unique_name):
    return jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, compute_capability="8.0")


def cudart_of(module) -> tuple[str, str]:
    """(SONAME the module needs, the folder its RUNPATH finds it in)."""
    needed, runpath = dynamic_section(module.path)
    cudart = [n for n in needed if re.fullmatch(r"libcudart\.so\.\d+", n)]
    assert len(cudart) == 1, f"expected the shared CUDA runtime in NEEDED, got {needed}"
    folders = [d for d in runpath if os.path.exists(os.path.join(d, cudart[0]))]
    assert folders, f"no RUNPATH folder {runpath} holds {cudart[0]}"
    return cudart[0], folders[0]


# Loads the module again (a warm hit) in a fresh process with no GPU backend, then prints every
# mapped CUDA runtime.
LOAD_AND_LIST = """
import ctypes, sys, jax, jaxcc
from cuda_sources import VECTOR_ADD
for path in sys.argv[2:]:
    ctypes.CDLL(path)
assert not any(d.platform == "gpu" for d in jax.devices()), "meant for a process without a GPU"
mod = jaxcc.load_cuda_inline(sys.argv[1], VECTOR_ADD, compute_capability="8.0")
assert mod.function_names == ["vector_add"]
maps = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libcudart" in line})
print("MAPPED", *maps)
"""


def run_load(name: str, *preload: str) -> list[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    code = f"import sys; sys.argv = ['-', *{[name, *preload]!r}]; sys.path.insert(0, {here!r})\n"
    result = run_python(code + LOAD_AND_LIST)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [ln for ln in result.stdout.splitlines() if ln.startswith("MAPPED")][-1]
    return line.split()[1:]


def test_cuda_module_needs_the_shared_runtime_and_finds_it_by_runpath(module):
    soname, folder = cudart_of(module)
    assert os.path.realpath(os.path.join(folder, soname))
    # Without the static runtime the library is a fraction of the megabyte it was.
    assert os.path.getsize(module.path) < 512 * 1024


def test_module_loads_in_a_fresh_process_without_a_gpu_backend(module, unique_name):
    soname, folder = cudart_of(module)
    mapped = run_load(unique_name)
    assert [os.path.realpath(p) for p in mapped] == [os.path.realpath(os.path.join(folder, soname))]


def test_a_runtime_already_loaded_under_the_soname_is_used(module, unique_name, tmp_path):
    # What a JAX GPU process has: its own copy (the nvidia wheel's) loaded before the module.
    soname, folder = cudart_of(module)
    elsewhere = tmp_path / soname
    shutil.copy(os.path.realpath(os.path.join(folder, soname)), elsewhere)
    mapped = run_load(unique_name, str(elsewhere))
    assert mapped == [str(elsewhere)], "the module mapped a second CUDA runtime"

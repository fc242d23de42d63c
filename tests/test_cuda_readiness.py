"""The CUDA path's GPU readiness, checked without a GPU (needs nvcc only): what every generated
CUDA handler does around the user's function, visible in the built library, and CUDA functions
that would run on the default stream refused at load. The GPU halves are in
tests/gpu/test_cuda_kernels.py; scripts/gpu-check.sh runs both."""

import pathlib
import shutil
import subprocess

import pytest
from cuda_sources import VECTOR_ADD

import jaxcc

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

STREAMLESS = """
#include "jaxcc/jaxcc.h"
// A CUDA function that launches on the default stream: unordered with XLA's stream.
void f(const jaxcc::Tensor x, jaxcc::Tensor out, float s) {}
"""


def test_a_cuda_function_without_a_stream_is_refused_at_load_with_the_fix(unique_name, monkeypatch):
    # A spec error: raised before any toolchain is looked for (no nvcc needed to hear it).
    monkeypatch.setenv("JAXCC_NVCC", "/nonexistent/nvcc")
    with pytest.raises(jaxcc.SpecError) as raised:
        jaxcc.load_cuda_inline(unique_name, STREAMLESS, ["f"], compute_capability="8.0")
    message = str(raised.value)
    assert "CUDA function 'f' has no stream parameter" in message
    assert "int64_t stream" in message and "(cudaStream_t)stream>>>" in message
    # The same function is fine on the CPU, where there is no stream to order with.
    assert jaxcc.load_cpp_inline(unique_name + "_cpu", STREAMLESS, ["f"]).function_names == ["f"]


@needs_nvcc
@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm")
def test_the_runtime_entry_points_of_the_handlers_resolve_in_the_built_library(unique_name):
    # Every handler clears and then reads the CUDA error state around the user's function and
    # makes the device of XLA's stream current (jaxcc/detail/cuda_call.h, unit-tested against a
    # fake runtime in src/codegen/cuda_call_test.cc). cudaStreamGetDevice is a weak reference
    # there: it must resolve in a real link, or multi-GPU calls would silently stay on the
    # current device.
    mod = jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, compute_capability="8.0")
    entry_points = {"cudaGetLastError", "cudaStreamGetDevice", "cudaStreamIsCapturing"}
    needed = subprocess.run(
        ["readelf", "-d", mod.path], capture_output=True, text=True, check=True
    ).stdout
    if "libcudart.so" not in needed:  # the module's own static runtime: defined inside it
        assert entry_points <= _defined(mod.path)
        return
    # JAX's shared runtime (decisions 136, 152): the module names libcudart, the dynamic linker
    # resolves the entry points there, and the runtime it finds must define all three.
    resolved = subprocess.run(["ldd", mod.path], capture_output=True, text=True).stdout
    (runtime,) = [ln.split("=>")[1].split()[0] for ln in resolved.splitlines() if "libcudart" in ln]
    assert entry_points <= _defined(runtime, dynamic=True), runtime


def _defined(path, dynamic=False):
    argv = ["nm", "-D", "--defined-only", path] if dynamic else ["nm", path]
    symbols = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return {
        line.split()[-1].split("@")[0]
        for line in symbols.splitlines()
        if line.split()[-2:-1] in (["T"], ["t"])
    }


@needs_nvcc
@pytest.mark.parametrize("runtime_header_first", [False, True])
def test_the_call_scope_header_compiles_with_and_without_the_cuda_headers(
    tmp_path, runtime_header_first
):
    # The generated wrapper includes it without the CUDA include directory (its own
    # declarations); a unit holding kernel and wrapper together (bench_cuda_build.py's single
    # nvcc unit) has <cuda_runtime_api.h> first and must use the header's declarations.
    cuda_include = pathlib.Path(shutil.which("nvcc")).resolve().parent.parent / "include"
    source = tmp_path / "scope.cc"
    source.write_text(
        ("#include <cuda_runtime_api.h>\n" if runtime_header_first else "")
        + '#include "jaxcc/detail/cuda_call.h"\n'
        + 'void call(void* s) { jaxcc::detail::CudaCallScope scope(s, "f"); scope.Check(); }\n'
    )
    compiler = shutil.which("g++") or shutil.which("c++")
    done = subprocess.run(
        [compiler, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror",
         "-I", jaxcc.include_dir(), "-I", str(cuda_include), str(source)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

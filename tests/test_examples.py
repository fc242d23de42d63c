"""The examples keep working: the GPU-backends example compiles everything a GPU run needs
(`--build-only`) on any machine with nvcc, Triton and numba-cuda."""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.skipif(
    importlib.util.find_spec("triton") is None or importlib.util.find_spec("numba_cuda") is None,
    reason="needs triton and numba-cuda",
)
def test_gpu_backends_example_builds_every_backend_without_a_gpu():
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "gpu_backends.py"), "--build-only",
         "--arch", "8.0", "--n", "4096"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    for line in (
        "jaxcc CUDA module for sm_80: built and cached",
        "launch plan checked",
        "Numba-CUDA kernel:",
        "launchers (Triton, Numba-CUDA) for 2 inputs and 1 output: built and cached",
    ):
        assert line in result.stdout, result.stdout


def _cpu_blas_example():
    spec = importlib.util.spec_from_file_location(
        "cpu_blas_example", os.path.join(ROOT, "examples", "cpu_blas.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpu_blas_example_matches_jnp_dot_with_and_without_the_pool():
    """examples/cpu_blas.py: cblas_sgemm from inline C++ (`extra_ldflags=["-lopenblas"]`), one
    call and row blocks on XLA's pool, both against jnp.dot; skipped without libopenblas-dev."""
    if not _cpu_blas_example().blas_available():
        pytest.skip("needs OpenBLAS (apt-get install -y libopenblas-dev)")
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "cpu_blas.py")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("sgemm", "sgemm_pool"):
        assert f"{name}: matches jnp.dot" in result.stdout, result.stdout


def test_autodiff_example_differentiates_a_cpp_kernel_through_its_rules():
    """examples/custom_kernel_autodiff.py: an XLACustomKernel with per-input JVP rules and a
    transpose rule; jit(grad), check_grads in both modes and vmap(grad) against the analytic
    gradients (the script asserts them)."""
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "custom_kernel_autodiff.py")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok: jit(grad), check_grads (fwd, rev) and vmap(grad) agree" in result.stdout

"""brainevent 0.3.0's own operator tests, run on jaxcc through the test-only shim
(tests/brainevent_on_jaxcc/plugin.py; issue 21 item 4). A subset that fits the suite's budget;
scripts/brainevent-on-jaxcc.sh runs every test directory of the package on both kernel layers.

Needs brainevent 0.3.0, brainstate and numba (the Python >= 3.12 leg installs them); skipped
elsewhere."""

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def brainevent_package() -> Path:
    for name in ("brainevent", "brainstate", "numba"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (the Python >= 3.12 leg installs it)")
    if importlib.metadata.version("brainevent") != "0.3.0":
        pytest.skip("the shim targets brainevent 0.3.0's kernel layer")
    return Path(importlib.util.find_spec("brainevent").origin).parent


# Forward, transposed and gradient tests of the dense event operators on their Numba CPU kernels:
# 14 tests, a few kernel configurations each.
SUBSET = "test_densemv_forward_no_transpose or test_densemm_forward_transpose or " \
    "test_densemv_grad_weights_transpose"  # fmt: skip


# One test of each other directory scripts/brainevent-on-jaxcc.sh covers: a cheap forward test of
# an operator (one shape, bool events: a few kernels to compile; none from a file that imports
# braintools, which CI does not install), the _op helpers jaxcc's defjvp and
# general_batching_rule replace, on a plain single-result primitive, and two _op tests below.
REPRESENTATIVES = (
    "_jit_scalar/binary_test.py::test_binary_jitsmv_forward_matches_reference[0.1-bool-False-False-shape0-numba]",
    "_jit_uniform/binary_test.py::test_binary_jitumv_forward_matches_reference[0.1-bool-False-False-shape0-numba]",
    "_jit_normal/binary_test.py::test_binary_jitnmv_forward_matches_reference[0.1-bool-False-False-shape0-numba]",
    "_fcn/float_test.py::test_fcnmv[True-True]",
    "_csr/binary_indexed_test.py::test_indexed_mv_event_is_active_iff_nonzero[True-True-bool-numba]",
    "_tcsr/binary_test.py::test_tcsr_active_nan_weight_still_propagates[bool-numba]",
    "_op/util_test.py::test_h2_defjvp_single_result_primitive",
    "_op/util_test.py::test_m1_general_batching_rule_mixed_still_works",
    # numba_cuda_kernel's brainevent 0.3 launch form and its wrap-time refusal (decision 119), and
    # brainevent's exception name for a backend that fails while traced (decision 120).
    "_op/numba_cuda_ffi_test.py::TestNumbaCudaKernelLaunchValidation::test_explicit_grid_block_with_vmap_method_raises",
    "_op/main_test.py::test_f17_kernel_generator_failure_is_wrapped_with_alternatives",
)


def run_shimmed(
    package: Path, cache: Path, *, off: bool = False, select: str = SUBSET, targets=None
):
    env = dict(
        os.environ, JAX_PLATFORMS="cpu", JAXCC_CACHE_DIR=str(cache), PYTHONPATH=str(TESTS),
        JAXCC_SHIM_OFF="1" if off else "0",
    )  # fmt: skip
    chosen = list(targets) if targets else ["_dense/binary_test.py", "-k", select]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "brainevent_on_jaxcc.plugin", "-p",
         "no:cacheprovider", "-p", "no:xdist", *chosen],
        cwd=package, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def test_brainevent_dense_operators_pass_on_jaxcc(tmp_path):
    package = brainevent_package()
    out = run_shimmed(package, tmp_path / "cache")
    assert "kernel layer: jaxcc" in out.stdout, out.stdout[-3000:]
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert re.search(r"\b14 passed\b", out.stdout), out.stdout[-2000:]
    # The operators' Numba kernels went through jaxcc's bridge: its cache holds their code.
    assert any(p.name.startswith("numba_kernel_") for p in (tmp_path / "cache").iterdir())


def test_one_brainevent_test_per_directory_passes_on_jaxcc(tmp_path):
    package = brainevent_package()
    out = run_shimmed(package, tmp_path / "cache", targets=REPRESENTATIVES)
    assert "kernel layer: jaxcc" in out.stdout, out.stdout[-3000:]
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert re.search(rf"\b{len(REPRESENTATIVES)} passed\b", out.stdout), out.stdout[-2000:]


def test_the_shim_replaces_the_whole_kernel_layer(tmp_path):
    brainevent_package()
    sys.path.insert(0, str(TESTS))
    code = (
        "import brainevent_on_jaxcc.plugin as shim, brainevent, jaxcc\n"
        "import brainevent._op as op, brainevent._op.main as main\n"
        "import brainevent._dense.binary as dense\n"
        "assert set(shim.patched) == set(shim.REPLACED), shim.patched\n"
        "assert op.XLACustomKernel is main.XLACustomKernel is jaxcc.XLACustomKernel\n"
        "assert dense.numba_kernel is jaxcc.numba_kernel\n"
        "assert dense.XLACustomKernel is jaxcc.XLACustomKernel\n"
        "assert op.load_cuda_file.__wrapped__ is jaxcc.load_cuda_file\n"
        "import brainevent.config as config\n"
        "assert config.set_backend is jaxcc.set_backend\n"
        "assert brainevent.KernelRegistrationError is jaxcc.KernelRegistrationError\n"
        "print('ok')\n"
    )
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(TESTS))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert out.stdout.strip().endswith("ok"), out.stderr[-3000:]


def test_the_shims_loaders_find_brainevents_private_headers(tmp_path):
    # brainevent's .cu files include its private `cuda_common.h` from the package's include/,
    # which brainevent's loader puts on the include path; so does the shim's (its cuda_raw
    # kernels build on the GPU only through it). A real nvcc build through brainevent's name.
    brainevent_package()
    code = (
        "import pathlib, brainevent_on_jaxcc.plugin, brainevent, jaxcc\n"
        "import brainevent._op as op\n"
        "root = pathlib.Path(brainevent.__file__).parent\n"
        "assert '#include \"cuda_common.h\"' in (root / '_jit_uniform/float_jitu.cu').read_text()\n"
        "m = op.load_cuda_file(root / '_jit_uniform/float_jitu.cu', name='jit_uniform_jitu',\n"
        "                      compute_capability='8.0')\n"
        "print(sorted(m.targets)[:1])\n"
        "print('ok')\n"
    )
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        PYTHONPATH=str(TESTS),
        JAXCC_CACHE_DIR=str(tmp_path / "cache"),
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert out.stdout.strip().endswith("ok"), out.stderr[-3000:]


def test_the_twin_builds_each_file_with_both_loaders_and_lowers_to_jaxccs_on_request(tmp_path):
    # benchmarks/bench_brainevent_ops_gpu_paired.py times brainevent's operators through both
    # kernel layers in one process: brainevent's loader is teed to jaxcc's (targets jx_<module>),
    # and ffi_call lowers to the jaxcc twin inside twin.jaxcc_targets() only.
    brainevent_package()
    code = (
        "import pathlib, sys\n"
        "from brainevent_on_jaxcc import twin\n"
        "twin.install()\n"
        "import jax, jax.numpy as jnp, brainevent, brainevent._op as op, jaxcc\n"
        "import brainevent._jit_uniform.float as jitu\n"
        "assert jitu.load_cuda_file is op.load_cuda_file\n"
        "root = pathlib.Path(brainevent.__file__).parent\n"
        "op.load_cuda_file(root / '_jit_uniform/float_jitu.cu', name='jit_uniform_jitu',\n"
        "                  compute_capability='8.0')\n"
        "assert twin.teed_modules == {'jit_uniform_jitu'}, twin.teed_modules\n"
        "assert 'jx_jit_uniform_jitu.jitu_trans_f32' in jaxcc.list_registered_targets()\n"
        "def f(x):\n"
        "    out = jax.ShapeDtypeStruct(x.shape, x.dtype)\n"
        "    return jax.ffi.ffi_call('jit_uniform_jitu.jitu_trans_f32', out)(x)\n"
        "def lowered(fn):\n"
        "    return fn.trace(jnp.ones(4)).lower(lowering_platforms=('cuda',)).as_text()\n"
        "plain = lowered(jax.jit(f))\n"
        "with twin.jaxcc_targets():\n"
        "    teed = lowered(jax.jit(lambda x: f(x)))\n"
        "assert '@jx_jit_uniform_jitu.jitu_trans_f32' in teed, teed\n"
        "assert '@jit_uniform_jitu.jitu_trans_f32' in plain and 'jx_' not in plain, plain\n"
        "print('ok')\n"
    )
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        PYTHONPATH=str(TESTS),
        JAXCC_SHIM_OFF="1",
        JAXCC_CACHE_DIR=str(tmp_path / "cache"),
        BRAINEVENT_CACHE_DIR=str(tmp_path / "be"),
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert out.stdout.strip().endswith("ok"), out.stdout[-2000:] + out.stderr[-3000:]

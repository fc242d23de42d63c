"""CUDA kernels on a real GPU: the seeds' tutorial verbatim, a dtype matrix, large arrays, several
outputs, CUDA errors as Python exceptions (unchecked launches included), capture in a CUDA graph
decided by the handler's trait (proved by a probe, not read from HLO text), and multi-GPU."""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cuda_sources import MIXED, SCALE_BY, VECTOR_ADD
from graph_probe import graph_xla_flags

import jaxcc
import jaxcc as brainevent

pytestmark = pytest.mark.gpu
HERE = os.path.dirname(os.path.abspath(__file__))


def test_seed_tutorial_verbatim(tmp_path, unique_name):
    # Section 1: vector_add discovered from its @BE annotation, called through jax.ffi.ffi_call.
    mod = brainevent.load_cuda_inline(
        name=f"{unique_name}_my_kernels", cuda_sources=VECTOR_ADD, functions=None
    )
    a = jnp.ones(1024, dtype=jnp.float32)
    b = jnp.full(1024, 2.0, dtype=jnp.float32)
    result = jax.ffi.ffi_call(
        f"{unique_name}_my_kernels.vector_add", jax.ShapeDtypeStruct(a.shape, a.dtype)
    )(a, b)
    np.testing.assert_array_equal(np.asarray(result[:5]), [3.0] * 5)
    assert mod.function_names == ["vector_add"]

    # Section 2: a float32 attribute.
    brainevent.load_cuda_inline(name=f"{unique_name}_scale_ops", cuda_sources=SCALE_BY)
    result = jax.ffi.ffi_call(
        f"{unique_name}_scale_ops.scale_by", jax.ShapeDtypeStruct(a.shape, a.dtype)
    )(a, scale_factor=np.float32(3.0))
    np.testing.assert_array_equal(np.asarray(result[:5]), [3.0] * 5)

    # Section 3: compiler options.
    fast = brainevent.load_cuda_inline(
        name=f"{unique_name}_fast_kernels",
        cuda_sources=SCALE_BY,
        optimization_level=3,
        use_fast_math=True,
    )
    np.testing.assert_allclose(np.asarray(fast.scale_by(a, scale_factor=3.0)), 3.0)

    # Section 4: from a file, under jax.jit.
    path = tmp_path / "my_kernel.cu"
    path.write_text(VECTOR_ADD)
    from_file = brainevent.load_cuda_file(str(path), name=f"{unique_name}_file")

    @jax.jit
    def add_jit(a, b):
        return jax.ffi.ffi_call(
            f"{unique_name}_my_kernels.vector_add", jax.ShapeDtypeStruct(a.shape, a.dtype)
        )(a, b)

    np.testing.assert_array_equal(np.asarray(add_jit(a, b)[:5]), [3.0] * 5)
    np.testing.assert_array_equal(np.asarray(jax.jit(from_file.vector_add)(a, b)), 3.0)


@pytest.fixture(scope="module")
def mixed():
    return jaxcc.load_cuda_inline("gpu_mixed_ops", MIXED)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float16, jnp.int32, jnp.float64])
def test_dtype_matrix_with_two_outputs(mixed, dtype):
    if dtype == jnp.float64 and not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)
    x = jnp.arange(1000).astype(dtype)
    outs = [jax.ShapeDtypeStruct(x.shape, x.dtype)] * 2
    y, twice = jax.jit(lambda v: mixed.affine(v, outs=outs, a=2.0, b=1.0))(x)
    expected = 2.0 * np.asarray(x, dtype=np.float64) + 1.0
    np.testing.assert_allclose(np.asarray(y, dtype=np.float64), expected, rtol=1e-3)
    np.testing.assert_allclose(np.asarray(twice, dtype=np.float64), 2.0 * np.asarray(x, np.float64))


def test_large_arrays(mixed):
    n = 1 << 28  # 256 Mi floats, 1 GiB per buffer
    x = jnp.ones(n, jnp.float32)
    outs = [jax.ShapeDtypeStruct(x.shape, x.dtype)] * 2
    y, twice = mixed.affine(x, outs=outs, a=3.0, b=-1.0)
    assert float(y[0]) == 2.0 and float(y[-1]) == 2.0 and float(jnp.sum(twice)) == 2.0 * n


def test_a_failing_launch_raises_and_the_next_call_works(mixed):
    x = jnp.ones(8, jnp.float32)
    with pytest.raises(Exception, match="(?i)cuda|launch|invalid"):
        jax.block_until_ready(mixed.bad_launch(x))
    y, _ = mixed.affine(x, outs=[jax.ShapeDtypeStruct(x.shape, x.dtype)] * 2, a=1.0, b=1.0)
    assert float(y[0]) == 2.0


def test_be_cuda_check_raises_a_python_exception(mixed):
    x = jnp.ones(8, jnp.float32)
    with pytest.raises(Exception, match="(?i)cuda"):
        jax.block_until_ready(mixed.bad_memcpy(x))
    # The failed cudaMemcpyAsync left its error pending on the thread when BE_CUDA_CHECK threw.
    # The handler clears it on the way out: under JAXCC_CUDA_RUNTIME=shared the runtime is XLA's,
    # whose next kernel load would otherwise fail ("There was an error before calling
    # cuModuleGetFunction"; seen on an H200). New programs make XLA load new kernels.
    for k in range(3):
        fresh = jax.jit(lambda v, k=k: jnp.sin(v) * (3.0 + k) + 0.5)
        np.testing.assert_allclose(np.asarray(fresh(x)), np.sin(1.0) * (3.0 + k) + 0.5, 1e-6)


def probe_in_fresh_process(name: str, allowed: bool, flags: str) -> dict:
    """graph_probe.run in a fresh interpreter: XLA reads XLA_FLAGS once, at backend start."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flags).strip()
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "graph_probe.py"), name, "1" if allowed else "0"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_graph_trait_decides_whether_xla_captures_the_call(unique_name):
    # Command buffers forced on for custom calls of any size: a handler with the trait is
    # recorded by stream capture (it runs while XLA's stream is capturing; XLA re-records when
    # buffer addresses change, so the number of calls is not asserted); without the trait XLA
    # calls it on every execution and never while capturing. The probe counts both, so this
    # fails if capture does not happen, or happens without the trait.
    flags = graph_xla_flags()
    graph = probe_in_fresh_process(f"{unique_name}_graph", True, flags)
    assert graph["captured_calls"] >= 1, graph
    plain = probe_in_fresh_process(f"{unique_name}_plain", False, flags)
    assert plain["captured_calls"] == 0, plain
    assert plain["handler_calls"] == 2 * plain["executions"], plain
    # With command buffers switched off, even the compatible handler is never captured.
    off = probe_in_fresh_process(f"{unique_name}_off", True, "--xla_gpu_enable_command_buffer=")
    assert off["captured_calls"] == 0 and off["handler_calls"] == 2 * off["executions"], off


UNCHECKED = r"""
#include <cuda_runtime.h>
#include "jaxcc/jaxcc.h"

__global__ void fill_kernel(float* out, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 1.0f;
}

// Launches 4096 threads per block (above every GPU's limit) and checks nothing.
void unchecked_fill(const jaxcc::Tensor x, jaxcc::Tensor out, int64_t stream) {
  fill_kernel<<<1, 4096, 0, (cudaStream_t)stream>>>(out.data_ptr<float>(), out.numel());
}
"""


def test_an_unchecked_failed_launch_is_raised_with_the_functions_name(unique_name):
    # Nothing in unchecked_fill looks at its launch; the generated handler reads the error the
    # call left (cudaGetLastError) and raises it, naming the function.
    mod = jaxcc.load_cuda_inline(f"{unique_name}_fill", UNCHECKED, ["unchecked_fill"])
    x = jnp.zeros(64, jnp.float32)
    # CUDA 12 reports an oversized block as InvalidConfiguration, CUDA 13 as InvalidValue.
    with pytest.raises(
        Exception, match=r"unchecked_fill(.|\n)*cudaErrorInvalid(Configuration|Value)"
    ):
        jax.block_until_ready(mod.unchecked_fill(x))
    # The seed's vector_add on an empty array launches a grid of zero blocks, which fails the
    # same way (unless XLA elides a call with an empty result).
    add = jaxcc.load_cuda_inline(f"{unique_name}_add", VECTOR_ADD)
    empty = jnp.zeros(0, jnp.float32)
    try:
        assert jax.block_until_ready(add.vector_add(empty, empty)).shape == (0,)
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        assert "vector_add" in str(e) and "cudaErrorInvalid" in str(e), e
    a = jnp.ones(16, jnp.float32)
    np.testing.assert_array_equal(np.asarray(add.vector_add(a, a)), 2.0)  # the next call works


def test_every_gpu_runs_its_own_calls(unique_name):
    # Multi-GPU: the handler makes the device of XLA's stream current, so a call placed on the
    # second GPU launches there (not on the thread's current device).
    gpus = jax.devices("gpu")
    if len(gpus) < 2:
        pytest.skip("needs two GPUs")
    mod = jaxcc.load_cuda_inline(f"{unique_name}_multi", VECTOR_ADD)
    for gpu in gpus:
        a = jax.device_put(jnp.arange(1024, dtype=jnp.float32), gpu)
        out = jax.jit(mod.vector_add)(a, a)
        assert out.devices() == {gpu}
        np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(1024, dtype=np.float32))


MULTI_GPU_PROBE = """
import sys, jax, jax.numpy as jnp, numpy as np, jaxcc
sys.path.insert(0, sys.argv[1])
from cuda_sources import VECTOR_ADD
mod = jaxcc.load_cuda_inline(sys.argv[2], VECTOR_ADD)
for gpu in jax.devices("gpu"):
    a = jax.device_put(jnp.arange(4096, dtype=jnp.float32), gpu)
    np.testing.assert_array_equal(np.asarray(jax.jit(mod.vector_add)(a, a)), 2 * np.asarray(a))
print("ok", len(jax.devices("gpu")))
"""


def test_cuda_visible_devices_permutations(unique_name):
    count = len(jax.devices("gpu"))
    if count < 2:
        pytest.skip("needs two GPUs")
    tests_dir = os.path.dirname(HERE)
    for order in (list(range(count)), list(reversed(range(count)))):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(map(str, order)))
        done = subprocess.run(
            [sys.executable, "-c", MULTI_GPU_PROBE, tests_dir, f"{unique_name}_{order[0]}"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0 and done.stdout.split()[-1] == str(count), done.stderr

"""CUDA kernels on a real GPU: the seeds' tutorial verbatim, a dtype matrix, large arrays, several
outputs, CUDA errors as Python exceptions, and a kernel captured in a CUDA graph."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cuda_sources import MIXED, SCALE_BY, VECTOR_ADD

import jaxcc
import jaxcc as brainevent

pytestmark = pytest.mark.gpu


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


GRAPH_PROBE = """
import sys, jax, jax.numpy as jnp, numpy as np, jaxcc
sys.path.insert(0, sys.argv[1])
from cuda_sources import SCALE_BY
mod = jaxcc.load_cuda_inline(sys.argv[2], SCALE_BY, allow_cuda_graph=sys.argv[3] == "1")

@jax.jit
def repeated(x):
    return jax.lax.fori_loop(0, 10, lambda i, v: mod.scale_by(v, scale_factor=1.5), x)

x = jnp.ones(4096, jnp.float32)
np.testing.assert_allclose(np.asarray(repeated(x)), 1.5**10, rtol=1e-5)
text = repeated.lower(x).compile().as_text()
print("COMMAND_BUFFER" if "command_buffer" in text else "NO_COMMAND_BUFFER")
"""


def test_kernel_inside_fori_loop_is_captured_as_a_cuda_graph(unique_name):
    import os
    import subprocess
    import sys

    # Make XLA consider graphs of any size with custom calls in them, so the one-kernel loop body
    # qualifies; the handler's command-buffer trait then decides.
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "")
        + " --xla_gpu_graph_min_graph_size=1 --xla_gpu_enable_command_buffer=+CUSTOM_CALL"
    )
    tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    results = {}
    # Without the trait the loop's own fusions may still form command buffers, so only the
    # positive case is asserted.
    for allowed in ("1",):
        done = subprocess.run(
            [sys.executable, "-c", GRAPH_PROBE, tests_dir, f"{unique_name}_{allowed}", allowed],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        results[allowed] = done.stdout.split()[-1]
    assert results["1"] == "COMMAND_BUFFER", results

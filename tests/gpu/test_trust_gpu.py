"""Issues 37 and 39 on a real GPU (issue 41's list for this turn): a wrong dtype on the CUDA path
is a typed error before any launch, and check_kernel's CUDA-graph and stream rows pass for a
correct CUDA kernel. Written without a GPU (the session's device time was spent before these
features landed): the next GPU session runs them in scripts/gpu-check.sh's `gpu` steps."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc

pytestmark = pytest.mark.gpu

TYPED_SCALE = r"""
#include <cuda_runtime.h>
#include "jaxcc/jaxcc.h"

__global__ void typed_scale_kernel(const float* x, float* out, int n, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * factor;
}

// @BE typed_scale arg ret attr.factor:float32 stream
void typed_scale(const jaxcc::Tensor x, jaxcc::Tensor out, float factor, int64_t stream) {
    int n = static_cast<int>(x.numel());
    typed_scale_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), n, factor);
}
"""


@pytest.fixture(scope="module")
def typed():
    return jaxcc.load_cuda_inline("trust_gpu_typed", TYPED_SCALE)


def test_a_wrong_dtype_on_the_cuda_path_is_a_typed_error_before_the_launch(typed):
    x = jnp.arange(8, dtype=jnp.float32)
    np.testing.assert_allclose(typed.typed_scale(x, factor=2.0), np.arange(8) * 2.0)
    # On a GPU the call is dispatched asynchronously: the handler's error surfaces when the result
    # is used, as JAX's runtime error carrying jaxcc's message (decision 163).
    with pytest.raises(
        (jaxcc.KernelError, jax.errors.JaxRuntimeError),
        match="parameter '(x|out)' is int32, but the kernel reads it",
    ):
        typed.typed_scale(jnp.arange(8, dtype=jnp.int32), factor=2.0).block_until_ready()
    # The check left no CUDA error behind: the next call and XLA's next program still work.
    np.testing.assert_allclose(typed.typed_scale(x, factor=3.0), np.arange(8) * 3.0)
    np.testing.assert_allclose(jax.jit(lambda v: v + 1)(x), np.arange(8) + 1)


def test_check_kernel_passes_a_correct_cuda_kernel_with_its_graph_and_stream_rows(typed):
    x = jnp.linspace(-1.0, 1.0, 256, dtype=jnp.float32)
    report = jaxcc.check_kernel(typed.typed_scale, x, factor=1.5, skip=["bundle", "sharding"])
    assert report.ok, str(report)
    for row in ("cuda_graph", "stream"):
        assert report[row].status == "passed", str(report)

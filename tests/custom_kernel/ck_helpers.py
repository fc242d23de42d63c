"""Kernels shared by the XLACustomKernel tests: `mul(x, y) = x * y` (float32, any shape) in C++
(jaxcc) and in Numba, plus a deliberately different backend to see which one ran; the scaled
Numba kernel the Numba bridge's cache and compile tests make per configuration; whether JAX
sees a GPU."""

import functools
import uuid

import jax
import jax.numpy as jnp
import numba
import numpy as np

import jaxcc

CPP_SOURCE = r"""
#include "jaxcc/jaxcc.h"

// Elementwise, so it handles any leading batch axis as well.
void mul(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  const float* b = y.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] * b[i];
}

void scaled(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  for (int64_t i = 0; i < out.numel(); ++i)
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * factor;
}
"""


@functools.cache
def cpp_module():
    return jaxcc.load_cpp_inline("ck_test_ops", CPP_SOURCE, ["mul", "scaled"])


@numba.njit
def mul_numba(x, y, out):
    a, b, o = x.reshape(-1), y.reshape(-1), out.reshape(-1)
    for i in range(o.size):
        o[i] = a[i] * b[i]


@numba.njit
def mul_plus_ten_numba(x, y, out):
    a, b, o = x.reshape(-1), y.reshape(-1), out.reshape(-1)
    for i in range(o.size):
        o[i] = a[i] * b[i] + 10


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def make_mul(prefix="mul", *, vectorized=False, offset_backend=False, distinct_numba=False):
    """An XLACustomKernel with 'cpp' (default) and 'numba' CPU backends computing x * y, and
    optionally an 'offset' backend computing x * y + 100 (to tell which backend ran).
    `distinct_numba`: the numba backend computes x * y + 10, so a test can tell it from cpp."""
    kernel = jaxcc.XLACustomKernel(unique(prefix))
    module = cpp_module()
    kernel.def_cpp_kernel(lambda **params: module.mul, vectorized=vectorized)
    numba_fn = mul_plus_ten_numba if distinct_numba else mul_numba
    kernel.def_numba_kernel(
        lambda outs, **params: jaxcc.numba_kernel(numba_fn, outs), vectorized=vectorized
    )
    if offset_backend:
        kernel.def_kernel("offset", "cpu", lambda **params: lambda x, y: x * y + 100.0)
    return kernel


def call(kernel, x, y, **kwargs):
    return kernel(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), **kwargs)


def has_jax_gpu() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def make_scaled(scale):
    """A new `@numba.njit` kernel per call, as operator code makes one per configuration:
    `out = x * scale + 1`, the scale a closure value."""

    @numba.njit
    def scaled(x, out):
        for i in range(out.size):
            out[i] = x[i] * scale + 1

    return scaled


def run_numba(kernel, x):
    """`kernel(x, out)` through `jaxcc.numba_kernel` under `jax.jit`, as a NumPy array."""
    return np.asarray(
        jax.jit(jaxcc.numba_kernel(kernel, jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
    )


X8 = jnp.arange(8, dtype=jnp.float32)

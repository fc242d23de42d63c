"""Pallas (interpret mode on the CPU) and Warp (CPU) behind one primitive. Triton and Numba-CUDA
have bridges of their own, tested in test_triton_bridge.py and test_numba_cuda_bridge.py."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, make_mul

X = jnp.linspace(-1, 1, 16, dtype=jnp.float32)
Y = jnp.linspace(2, 3, 16, dtype=jnp.float32)


def pallas_mul(outs, **params):
    from jax.experimental import pallas as pl

    def body(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] * y_ref[...]

    return pl.pallas_call(body, out_shape=outs[0], interpret=jax.default_backend() == "cpu")


def test_pallas_interpret_mode_on_cpu_agrees_with_cpp():
    kernel = make_mul("pallas")
    kernel.def_kernel("pallas", "cpu", pallas_mul)
    expected = np.asarray(call(kernel, X, Y, backend="cpp"))
    np.testing.assert_allclose(call(kernel, X, Y, backend="pallas"), expected, rtol=1e-6)
    np.testing.assert_allclose(
        jax.jit(lambda a: call(kernel, a, Y, backend="pallas"))(X), expected, rtol=1e-6
    )


def test_warp_on_cpu_agrees_with_cpp():
    wp = pytest.importorskip("warp")
    wp.config.quiet = True

    @wp.kernel
    def warp_mul(x: wp.array(dtype=float), y: wp.array(dtype=float), o: wp.array(dtype=float)):
        i = wp.tid()
        o[i] = x[i] * y[i]

    launcher = wp.jax_kernel(warp_mul)
    kernel = make_mul("warp")
    kernel.def_warp_kernel(lambda **params: launcher, platform="cpu")
    expected = np.asarray(call(kernel, X, Y, backend="cpp"))
    np.testing.assert_allclose(call(kernel, X, Y, backend="warp"), expected, rtol=1e-6)

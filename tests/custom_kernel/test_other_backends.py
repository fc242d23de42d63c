"""Pallas (interpret mode on the CPU), Warp (CPU) and Triton (GPU) behind one primitive. GPU
tests skip cleanly without a GPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, make_mul

X = jnp.linspace(-1, 1, 16, dtype=jnp.float32)
Y = jnp.linspace(2, 3, 16, dtype=jnp.float32)


def has_jax_gpu() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


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


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_triton_on_gpu():
    jt = pytest.importorskip("jax_triton")
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")

    @triton.jit
    def triton_mul(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(o_ptr + offsets, x * y, mask=mask)

    def generator(outs, **params):
        n = outs[0].size
        return lambda x, y: jt.triton_call(
            x, y, kernel=triton_mul, out_shape=outs[0], grid=((n + 127) // 128,), n=n, BLOCK=128
        )

    kernel = make_mul("triton")
    kernel.def_triton_kernel(generator)
    kernel.def_pallas_kernel("gpu", pallas_mul)
    gpu = jax.devices("gpu")[0]
    x, y = jax.device_put(X, gpu), jax.device_put(Y, gpu)
    np.testing.assert_allclose(call(kernel, x, y), np.asarray(X) * np.asarray(Y), rtol=1e-6)
    np.testing.assert_allclose(call(kernel, x, y, backend="pallas"), call(kernel, x, y))

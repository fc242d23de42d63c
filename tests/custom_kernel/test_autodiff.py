"""JVP and reverse mode through an XLACustomKernel, checked against finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import make_mul
from jax.interpreters import ad


def differentiable_mul(backend_default="cpp"):
    """mul(x, y) with per-input JVP rules and a transpose rule, all using the kernel itself."""
    kernel = make_mul("diff_mul")
    kernel.set_default("cpu", backend_default)

    def mul(x, y, **params):
        return kernel(x, y, outs=[jax.ShapeDtypeStruct(x.shape, x.dtype)], **params)

    kernel.def_jvp_rule2(
        lambda t, x, y, outs, **kw: mul(t, y),  # d(x*y)/dx . t
        lambda t, x, y, outs, **kw: mul(x, t),  # d(x*y)/dy . t
    )

    def transpose(cts, x, y, **params):
        (ct,) = cts
        if type(ct) is ad.Zero:
            return None, None
        ct_x = mul(ct, y)[0] if ad.is_undefined_primal(x) else None
        ct_y = mul(x, ct)[0] if ad.is_undefined_primal(y) else None
        return ct_x, ct_y

    kernel.def_transpose_rule(transpose)
    return kernel, lambda x, y: mul(x, y)[0]


def finite_difference(f, x, direction, eps=1e-3):
    x64 = np.asarray(x, np.float64)
    return (f(x64 + eps * direction) - f(x64 - eps * direction)) / (2 * eps)


X = jnp.asarray([0.3, -1.2, 2.0, 0.7], jnp.float32)
Y = jnp.asarray([1.5, 0.4, -0.6, 2.2], jnp.float32)


@pytest.mark.parametrize("backend", ["cpp", "numba"])
def test_jvp_matches_finite_differences(backend):
    _, mul = differentiable_mul(backend)
    tx = jnp.asarray([1.0, 0.5, -0.25, 2.0], jnp.float32)
    ty = jnp.asarray([-1.0, 0.0, 1.0, 0.5], jnp.float32)
    primal, tangent = jax.jvp(mul, (X, Y), (tx, ty))
    np.testing.assert_allclose(primal, np.asarray(X) * np.asarray(Y), rtol=1e-6)
    # d/ds (x + s tx)(y + s ty) at s = 0, numerically.
    x, y = np.asarray(X, np.float64), np.asarray(Y, np.float64)
    tx, ty = np.asarray(tx, np.float64), np.asarray(ty, np.float64)
    eps = 1e-4
    numeric = ((x + eps * tx) * (y + eps * ty) - (x - eps * tx) * (y - eps * ty)) / (2 * eps)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", ["cpp", "numba"])
def test_grad_under_jit_matches_finite_differences(backend):
    _, mul = differentiable_mul(backend)

    def loss(x, y):
        return jnp.sum(jnp.sin(mul(x, y)))

    gx, gy = jax.jit(jax.grad(loss, argnums=(0, 1)))(X, Y)

    def numeric_loss(x, y):
        return np.sum(np.sin(x * y))

    for i in range(4):
        e = np.zeros(4)
        e[i] = 1.0
        dx = finite_difference(lambda x: numeric_loss(x, np.asarray(Y, np.float64)), X, e)
        dy = finite_difference(lambda y: numeric_loss(np.asarray(X, np.float64), y), Y, e)
        np.testing.assert_allclose(gx[i], dx, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(gy[i], dy, rtol=1e-3, atol=1e-4)


def test_grad_of_vmap_through_the_kernel():
    _, mul = differentiable_mul()
    xs = jnp.stack([X, 2 * X])
    grad = jax.grad(lambda xs: jnp.sum(jax.vmap(lambda x: mul(x, Y))(xs) ** 2))(xs)
    expected = 2 * np.asarray(xs) * np.asarray(Y) ** 2
    np.testing.assert_allclose(grad, expected, rtol=1e-5)


def test_none_rule_means_no_contribution():
    kernel = make_mul("half_diff")

    def mul(x, y):
        return kernel(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))

    kernel.def_jvp_rule2(lambda t, x, y, **kw: t * y, None)
    _, tangent = jax.jvp(mul, (X, Y), (jnp.ones(4), jnp.ones(4)))
    np.testing.assert_allclose(tangent, Y, rtol=1e-6)  # only x's contribution
    _, zero = jax.jvp(lambda y: mul(X, y), (Y,), (jnp.ones(4),))
    np.testing.assert_allclose(zero, np.zeros(4))


def test_whole_jvp_rule():
    kernel = make_mul("whole_jvp")

    def jvp(primals, tangents, **params):
        x, y = primals
        tx, ty = (ad.instantiate_zeros(t) for t in tangents)
        return kernel.primitive.bind(x, y, **params), [tx * y + x * ty]

    kernel.def_jvp_rule(jvp)
    _, tangent = jax.jvp(
        lambda x, y: kernel(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype)),
        (X, Y),
        (jnp.ones(4), jnp.zeros(4)),
    )
    np.testing.assert_allclose(tangent, Y, rtol=1e-6)

"""jaxcc.defjvp and jaxcc.general_batching_rule on a plain JAX primitive with one result, as
brainevent's own helpers of those names accept (brainevent 0.3.0's _op/util_test.py passes such
primitives; the rules once assumed jaxcc's `outs` parameter and a list of results)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.interpreters import batching, mlir

import jaxcc
from jaxcc._jax_compat import ShapedArray


def single_result_mul(name):
    from jax.extend.core import Primitive

    prim = Primitive(name)
    prim.multiple_results = False
    prim.def_impl(lambda x, y: x * y)
    prim.def_abstract_eval(
        lambda x, y: ShapedArray(jnp.broadcast_shapes(x.shape, y.shape), x.dtype)
    )
    mlir.register_lowering(prim, mlir.lower_fun(lambda x, y: x * y, multiple_results=False))
    return prim


def test_defjvp_differentiates_a_single_result_primitive():
    prim = single_result_mul("plain_mul_jvp")
    jaxcc.defjvp(prim, lambda t, x, y: t * y, lambda t, x, y: x * t)
    x, y = jnp.asarray(3.0), jnp.asarray(5.0)
    primal, tangent = jax.jvp(prim.bind, (x, y), (jnp.asarray(1.0), jnp.asarray(0.0)))
    assert float(primal) == 15.0 and float(tangent) == 5.0
    assert float(jax.grad(prim.bind, argnums=0)(x, y)) == 5.0
    assert float(jax.grad(prim.bind, argnums=1)(x, y)) == 3.0
    dx, dy = jax.jacfwd(prim.bind, argnums=(0, 1))(jnp.arange(3.0), jnp.full(3, 2.0))
    np.testing.assert_allclose(dx, np.diag([2.0, 2.0, 2.0]))
    np.testing.assert_allclose(dy, np.diag([0.0, 1.0, 2.0]))


def test_defjvp_on_a_single_result_primitive_with_no_contribution_gives_a_zero_tangent():
    prim = single_result_mul("plain_mul_jvp_none")
    jaxcc.defjvp(prim, None, lambda t, x, y: x * t)
    _, tangent = jax.jvp(prim.bind, (jnp.asarray(3.0), jnp.asarray(5.0)), (1.0, 0.0))
    assert float(tangent) == 0.0


@pytest.mark.parametrize("axes", [(None, None), (0, None), (None, 1), (1, 0)])
def test_general_batching_rule_on_a_single_result_primitive(axes):
    prim = single_result_mul(f"plain_mul_vmap_{axes[0]}_{axes[1]}")
    a = jnp.arange(6.0).reshape(2, 3)
    b = jnp.arange(6.0).reshape(2, 3) + 1.0
    if axes == (None, 1):
        b = b.T  # batched along axis 1: two elements of length 3
        a = a[0]
    elif axes == (1, 0):
        a = a.T
    out, out_dim = jaxcc.general_batching_rule(prim, (a, b), axes)
    # The result mirrors the primitive's: one array with one batch dimension (None: unbatched).
    assert not isinstance(out, (list, tuple))
    if axes == (None, None):
        assert out_dim is None
        np.testing.assert_allclose(out, a * b)
        return
    assert out_dim == 0
    moved = [
        jnp.moveaxis(x, ax, 0) if ax is not None else x for x, ax in zip((a, b), axes, strict=True)
    ]
    expected = jnp.stack([(moved[0][i] if axes[0] is not None else moved[0]) *
                          (moved[1][i] if axes[1] is not None else moved[1])
                          for i in range(out.shape[0])])  # fmt: skip
    np.testing.assert_allclose(out, expected)


def test_general_batching_rule_serves_jax_vmap_of_a_single_result_primitive():
    prim = single_result_mul("plain_mul_vmap_rule")
    batching.primitive_batchers[prim] = lambda args, axes, **p: jaxcc.general_batching_rule(
        prim, args, axes, **p
    )
    x = jnp.arange(12.0).reshape(4, 3)
    y = jnp.arange(3.0) + 2.0
    np.testing.assert_allclose(jax.vmap(prim.bind, in_axes=(0, None))(x, y), x * y)
    np.testing.assert_allclose(jax.jit(jax.vmap(prim.bind))(x, x), x * x)

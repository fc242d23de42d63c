"""vmap over an XLACustomKernel: the sequential path (lax.scan) and the vectorised path (one call
for the whole batch), both against a Python loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, make_mul

import jaxcc


def batch(shape, seed):
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape), jnp.float32)


def loop(kernel, xs, y):
    return np.stack([np.asarray(call(kernel, x, y)) for x in xs])


@pytest.mark.parametrize("backend", ["cpp", "numba"])
@pytest.mark.parametrize("vectorized", [False, True])
def test_vmap_matches_a_python_loop(backend, vectorized):
    kernel = make_mul(vectorized=vectorized)
    xs, y = batch((6, 5), 1), batch((5,), 2)
    expected = loop(kernel, xs, y)
    f = jax.vmap(lambda x: call(kernel, x, y, backend=backend))
    np.testing.assert_allclose(f(xs), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(xs), expected, rtol=1e-6)


@pytest.mark.parametrize("vectorized", [False, True])
def test_vmap_over_a_non_leading_axis_and_both_operands(vectorized):
    kernel = make_mul(vectorized=vectorized)
    xs, ys = batch((5, 4), 3), batch((4, 5), 4)
    got = jax.vmap(lambda x, y: call(kernel, x, y), in_axes=(1, 0))(xs, ys)
    expected = np.stack([np.asarray(xs)[:, i] * np.asarray(ys)[i] for i in range(4)])
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_sequential_path_scans_and_vectorised_path_calls_once():
    xs, y = batch((64, 3), 5), batch((3,), 6)
    sequential, vectorised = make_mul(), make_mul(vectorized=True)
    seq_jaxpr = jax.make_jaxpr(jax.vmap(lambda x: call(sequential, x, y)))(xs).jaxpr
    vec_jaxpr = jax.make_jaxpr(jax.vmap(lambda x: call(vectorised, x, y)))(xs).jaxpr
    assert [e.primitive.name for e in seq_jaxpr.eqns if e.primitive.name == "scan"] == ["scan"]
    assert not any(e.primitive.name == "scan" for e in vec_jaxpr.eqns)
    (eqn,) = [e for e in vec_jaxpr.eqns if e.primitive.name == vectorised.name]
    assert eqn.params["outs"][0].shape == (64, 3)  # the whole batch in one call
    assert eqn.params["jaxcc_batch"] == 64


def test_nested_vmap_merges_batch_axes_on_the_vectorised_path():
    kernel = make_mul(vectorized=True)
    xs, y = batch((3, 4, 5), 7), batch((5,), 8)
    f = jax.vmap(jax.vmap(lambda x: call(kernel, x, y)))
    jaxpr = jax.make_jaxpr(f)(xs).jaxpr
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == kernel.name]
    assert eqn.params["outs"][0].shape == (12, 5)  # one leading batch axis of 3 * 4
    np.testing.assert_allclose(f(xs), np.asarray(xs) * np.asarray(y), rtol=1e-6)


def test_mixed_selection_falls_back_to_sequential():
    kernel = make_mul(vectorized=True)
    kernel.def_kernel("plain", "cpu", lambda **p: lambda x, y: x * y)  # not vectorised
    xs, y = batch((4, 3), 9), batch((3,), 10)
    jaxpr = jax.make_jaxpr(jax.vmap(lambda x: call(kernel, x, y, backend="plain")))(xs).jaxpr
    assert any(e.primitive.name == "scan" for e in jaxpr.eqns)
    got = jax.vmap(lambda x: call(kernel, x, y, backend="plain"))(xs)
    np.testing.assert_allclose(got, np.asarray(xs) * np.asarray(y), rtol=1e-6)


def test_custom_batching_rule_and_restoring_the_default():
    kernel = make_mul()
    seen = []

    def rule(args, axes, **params):
        seen.append(axes)
        return jaxcc.general_batching_rule(kernel.primitive, args, axes, **params)

    kernel.def_batching_rule(rule)
    xs, y = batch((3, 2), 11), batch((2,), 12)
    jax.vmap(lambda x: call(kernel, x, y))(xs)
    assert seen == [(0, None)]
    kernel.register_general_batching()
    jax.vmap(lambda x: call(kernel, x, y))(xs)
    assert len(seen) == 1

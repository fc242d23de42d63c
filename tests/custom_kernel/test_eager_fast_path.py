"""The eager fast path of XLACustomKernel.__call__: a repeated eager call with the same outs,
backend and parameters skips the checks and calls the cached jitted bind, and computes exactly
what the bound primitive computes (backend switches included)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, make_mul

import jaxcc
from jaxcc.custom_kernel import primitive


@pytest.fixture(autouse=True)
def forget_global_choices():
    yield
    jaxcc.clear_backends()


@pytest.fixture
def xy():
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.normal(size=(7,)), jnp.float32)
    y = jnp.asarray(rng.normal(size=(7,)), jnp.float32)
    return x, y


@pytest.fixture
def counters(monkeypatch):
    """Counts the slow path's outs conversions and the primitive's binds."""
    counts = {"shaped": 0, "bind": 0}
    shaped = primitive._shaped_array

    def counting_shaped(*args):
        counts["shaped"] += 1
        return shaped(*args)

    monkeypatch.setattr(primitive, "_shaped_array", counting_shaped)
    return counts


def count_binds(kernel, counts, monkeypatch):
    bind = kernel.primitive.bind

    def counting_bind(*args, **params):
        counts["bind"] += 1
        return bind(*args, **params)

    monkeypatch.setattr(kernel.primitive, "bind", counting_bind)


def expected(x, y, offset=0.0):
    return np.asarray(x) * np.asarray(y) + offset


def test_a_repeated_eager_call_skips_the_checks(xy, counters, monkeypatch):
    kernel = make_mul()
    count_binds(kernel, counters, monkeypatch)
    np.testing.assert_allclose(call(kernel, *xy), expected(*xy), rtol=1e-6)
    assert counters["shaped"] == 1  # first call: the checked path
    for _ in range(3):  # a new but equal outs object each time
        np.testing.assert_allclose(call(kernel, *xy), expected(*xy), rtol=1e-6)
    assert counters["shaped"] == 1
    assert counters["bind"] <= 1  # at most the trace of the jitted bind, never per call
    assert len(kernel._eager_cache) == 1


def test_the_fast_path_follows_every_kind_of_backend_switch(xy):
    kernel = make_mul(offset_backend=True)
    np.testing.assert_allclose(call(kernel, *xy), expected(*xy), rtol=1e-6)
    jaxcc.set_backend("cpu", "offset")
    np.testing.assert_allclose(call(kernel, *xy), expected(*xy, 100), rtol=1e-5)
    jaxcc.clear_backends()
    np.testing.assert_allclose(call(kernel, *xy), expected(*xy), rtol=1e-6)
    kernel.set_default("cpu", "offset")
    np.testing.assert_allclose(call(kernel, *xy), expected(*xy, 100), rtol=1e-5)
    np.testing.assert_allclose(call(kernel, *xy, backend="cpp"), expected(*xy), rtol=1e-6)
    kernel.set_default("cpu", "cpp")
    np.testing.assert_allclose(call(kernel, *xy), expected(*xy), rtol=1e-6)
    np.testing.assert_allclose(call(kernel, *xy, backend="offset"), expected(*xy, 100), rtol=1e-5)
    # A kernel registered later as the default is picked up by the next eager call.
    kernel.def_kernel("late", "cpu", lambda **p: lambda x, y: x * y - 1.0, asdefault=True)
    np.testing.assert_allclose(call(kernel, *xy), expected(*xy, -1), rtol=1e-5)


def test_outs_structure_shape_and_parameters_are_part_of_the_key():
    kernel = jaxcc.XLACustomKernel("fast_path_scaled")
    module = jaxcc.load_cpp_inline(
        "fast_path_ops",
        '#include "jaxcc/jaxcc.h"\n'
        "void scaled(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {\n"
        "  for (int64_t i = 0; i < out.numel(); ++i)\n"
        "    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * factor;\n"
        "}\n",
        ["scaled"],
    )
    kernel.def_cpp_kernel(lambda **p: module.scaled)
    for n in (3, 5, 3):
        x = jnp.arange(n, dtype=jnp.float32)
        spec = jax.ShapeDtypeStruct(x.shape, x.dtype)
        for factor in (2.0, 3.0, 2.0):
            single = kernel(x, outs=spec, factor=factor)
            np.testing.assert_allclose(single, np.arange(n) * factor)
            as_list = kernel(x, outs=[spec], factor=factor)
            as_tuple = kernel(x, outs=(spec,), factor=factor)
            assert type(as_list) is list and type(as_tuple) is tuple
            np.testing.assert_allclose(as_list[0], single)
            np.testing.assert_allclose(as_tuple[0], single)


def test_calls_the_fast_path_does_not_take_still_work_and_still_fail(xy):
    kernel = make_mul()
    x, y = xy
    call(kernel, x, y)  # a fast-path entry exists for this key
    np.testing.assert_allclose(call(kernel, np.asarray(x), y), expected(x, y), rtol=1e-6)
    under_jit = jax.jit(lambda a, b: call(kernel, a, b))(x, y)
    np.testing.assert_allclose(under_jit, expected(x, y), rtol=1e-6)
    xs, ys = jnp.stack([x, y]), jnp.stack([y, x])
    batched = jax.vmap(lambda a, b: call(kernel, a, b))(xs, ys)
    np.testing.assert_allclose(batched, np.asarray(xs) * np.asarray(ys), rtol=1e-6)
    with jax.disable_jit():
        np.testing.assert_allclose(call(kernel, x, y), expected(x, y), rtol=1e-6)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    with pytest.raises(jaxcc.CallError, match="unhashable"):
        kernel(x, y, outs=out, table=[1, 2])
    with pytest.raises(jaxcc.BackendError, match="unknown backend"):
        kernel(x, y, outs=out, backend="nope")
    with pytest.raises(jaxcc.CallError, match="reserved"):
        kernel(x, y, outs=out, jaxcc_batch=1)


def test_the_fast_path_is_taken_only_outside_traces():
    assert primitive._at_top_level()
    seen = []
    jax.jit(lambda a: seen.append(primitive._at_top_level()) or a)(jnp.ones(2))
    jax.vmap(lambda a: seen.append(primitive._at_top_level()) or a)(jnp.ones(2))
    assert seen == [False, False]

"""XLACustomKernel basics: two CPU backends that agree, defaults, and switching backends per
call, per primitive and globally without clearing JAX's caches (test_backend_switch.py checks
that functions compiled before a switch follow it)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, make_mul

import jaxcc


@pytest.fixture
def no_cache_clearing(monkeypatch):
    def refuse():
        raise AssertionError("jax.clear_caches() must not be called by backend selection")

    monkeypatch.setattr(jax, "clear_caches", refuse)


@pytest.fixture(autouse=True)
def forget_global_choices():
    yield
    jaxcc.clear_backends()


def inputs(shape=(3, 5)):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=shape), jnp.float32)
    y = jnp.asarray(rng.normal(size=shape), jnp.float32)
    return x, y


def test_two_cpu_backends_agree_eagerly_and_under_jit():
    kernel = make_mul()
    x, y = inputs()
    expected = np.asarray(x) * np.asarray(y)
    for backend in ("cpp", "numba"):
        np.testing.assert_allclose(call(kernel, x, y, backend=backend), expected, rtol=1e-6)
        jitted = jax.jit(lambda a, b, be=backend: call(kernel, a, b, backend=be))
        np.testing.assert_allclose(jitted(x, y), expected, rtol=1e-6)


def test_eager_calls_work_under_disable_jit():
    # The eager implementation compiles through jax.jit; under disable_jit that used to re-enter
    # bind and recurse until RecursionError.
    kernel = make_mul()
    x, y = inputs()
    expected = np.asarray(x) * np.asarray(y)
    with jax.disable_jit():
        for backend in ("cpp", "numba"):
            np.testing.assert_allclose(call(kernel, x, y, backend=backend), expected, rtol=1e-6)
        batched = jax.vmap(lambda a, b: call(kernel, a, b))(x, y)
        np.testing.assert_allclose(batched, expected, rtol=1e-6)


def test_outs_structure_is_kept():
    kernel = make_mul()
    x, y = inputs((4,))
    as_list = kernel(x, y, outs=[jax.ShapeDtypeStruct(x.shape, x.dtype)])
    as_dict = kernel(x, y, outs={"z": jax.ShapeDtypeStruct(x.shape, x.dtype)})
    assert isinstance(as_list, list) and len(as_list) == 1
    assert set(as_dict) == {"z"}
    np.testing.assert_allclose(as_dict["z"], as_list[0])


def test_first_kernel_is_the_default_and_asdefault_overrides():
    kernel = jaxcc.XLACustomKernel("defaults_" + make_mul().name)
    assert kernel.defaults == {} and kernel.get_default("cpu") is None
    assert kernel.available_backends("cpu") == []
    kernel.def_kernel("a", "cpu", lambda **p: lambda x: x)
    kernel.def_kernel("b", "cpu", lambda **p: lambda x: x)
    kernel.def_kernel("g", "gpu", lambda **p: lambda x: x)
    assert kernel.defaults == {"cpu": "a", "gpu": "g"}
    kernel.def_kernel("c", "cpu", lambda **p: lambda x: x, asdefault=True)
    assert kernel.get_default("cpu") == "c"
    assert kernel.available_backends("cpu") == ["a", "b", "c"]
    copy = kernel.defaults
    copy["cpu"] = "a"
    assert kernel.get_default("cpu") == "c"  # a copy, not the internal state


def test_per_call_backend_and_set_default(no_cache_clearing):
    kernel = make_mul(offset_backend=True)
    x, y = inputs((4,))
    product = np.asarray(x) * np.asarray(y)
    np.testing.assert_allclose(call(kernel, x, y), product, rtol=1e-6)
    np.testing.assert_allclose(call(kernel, x, y, backend="offset"), product + 100, rtol=1e-5)
    kernel.set_default("cpu", "offset")
    np.testing.assert_allclose(call(kernel, x, y), product + 100, rtol=1e-5)
    np.testing.assert_allclose(
        jax.jit(lambda a, b: call(kernel, a, b))(x, y), product + 100, rtol=1e-5
    )
    kernel.set_default("cpu", "cpp")
    np.testing.assert_allclose(call(kernel, x, y), product, rtol=1e-6)


def test_eager_executables_are_reused_when_switching_back(no_cache_clearing):
    kernel = make_mul(offset_backend=True)
    x, y = inputs((4,))
    call(kernel, x, y)
    kernel.set_default("cpu", "offset")
    call(kernel, x, y)
    kernel.set_default("cpu", "cpp")
    call(kernel, x, y)
    assert len(kernel._eager_cache) == 2  # one per backend, nothing recompiled or cleared


def test_global_choice_applies_only_where_registered(no_cache_clearing):
    with_offset = make_mul(offset_backend=True)
    without = make_mul()
    x, y = inputs((4,))
    product = np.asarray(x) * np.asarray(y)
    traced_before = jax.jit(lambda a, b: call(with_offset, a, b))
    np.testing.assert_allclose(traced_before(x, y), product, rtol=1e-6)

    jaxcc.set_backend("cpu", "offset")
    assert jaxcc.get_backend("cpu") == "offset"
    np.testing.assert_allclose(call(with_offset, x, y), product + 100, rtol=1e-5)
    np.testing.assert_allclose(
        jax.jit(lambda a, b: call(with_offset, a, b))(x, y), product + 100, rtol=1e-5
    )
    # A primitive without that backend keeps its own default, and says so.
    with pytest.warns(jaxcc.BackendWarning, match="falls back to its default 'cpp'"):
        np.testing.assert_allclose(call(without, x, y), product, rtol=1e-6)
    # A function traced before the switch follows it (test_backend_switch.py has the details).
    np.testing.assert_allclose(traced_before(x, y), product + 100, rtol=1e-5)
    # A per-call choice beats the global one.
    np.testing.assert_allclose(call(with_offset, x, y, backend="numba"), product, rtol=1e-6)
    jaxcc.set_backend("cpu", None)
    np.testing.assert_allclose(call(with_offset, x, y), product, rtol=1e-6)
    np.testing.assert_allclose(traced_before(x, y), product, rtol=1e-6)


def test_registry_finds_primitives_by_tags():
    a, b = make_mul("tagged"), make_mul("tagged")
    a.def_tags("elementwise", "binary")
    b.def_tags("elementwise")
    names_all = {k.name for k in jaxcc.get_primitives_by_tags(["elementwise", "binary"])}
    names_any = {k.name for k in jaxcc.get_primitives_by_tags(["binary"], match="any")}
    assert a.name in names_all and b.name not in names_all
    assert a.name in names_any and b.name not in names_any
    assert jaxcc.get_registry()[a.name] is a
    assert a.name in jaxcc.get_all_primitive_names()


def test_call_function():
    kernel = make_mul(offset_backend=True)
    kernel.def_call(lambda x, y, backend=None: call(kernel, x, y, backend=backend))
    x, y = inputs((3,))
    np.testing.assert_allclose(
        kernel.call(x, y, backend="offset"), np.asarray(x) * np.asarray(y) + 100, rtol=1e-5
    )

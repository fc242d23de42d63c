"""Switching backends reaches functions `jax.jit` compiled before the switch, without clearing
JAX's caches: the choices are part of JAX's jit cache key. Traces are counted to show that a
switch recompiles once and switching back reuses what was compiled. The backends compute
different results (cpp x*y, numba x*y + 10, offset x*y + 100), so each check sees which ran."""

import warnings

import jax
import numpy as np
import pytest
from ck_helpers import call, make_mul

import jaxcc
from jaxcc.custom_kernel import selection


@pytest.fixture(autouse=True)
def no_cache_clearing(monkeypatch):
    def refuse():
        raise AssertionError("jax.clear_caches() must not be called by backend selection")

    monkeypatch.setattr(jax, "clear_caches", refuse)
    yield
    jaxcc.clear_backends()


@pytest.fixture
def xy():
    rng = np.random.default_rng(1)
    x = jax.numpy.asarray(rng.normal(size=(6,)), jax.numpy.float32)
    y = jax.numpy.asarray(rng.normal(size=(6,)), jax.numpy.float32)
    return x, y


def product(x, y):
    return np.asarray(x) * np.asarray(y)


def assert_plain(result, x, y):
    np.testing.assert_allclose(result, product(x, y), rtol=1e-6)


def assert_numba(result, x, y):
    np.testing.assert_allclose(result, product(x, y) + 10, rtol=1e-5)


def assert_offset(result, x, y):
    np.testing.assert_allclose(result, product(x, y) + 100, rtol=1e-5)


def counted_jit(kernel, traces: list):
    """jax.jit of one call of `kernel`, appending to `traces` each time JAX traces it."""

    @jax.jit
    def run(a, b):
        traces.append(1)
        return call(kernel, a, b)

    return run


def test_warm_function_follows_a_global_switch_and_switching_back_reuses_it(xy):
    kernel = make_mul(offset_backend=True, distinct_numba=True)
    traces = []
    run = counted_jit(kernel, traces)
    assert_plain(run(*xy), *xy)
    assert_plain(run(*xy), *xy)
    assert len(traces) == 1

    jaxcc.set_backend("cpu", "offset")
    assert_offset(run(*xy), *xy)  # the warm function, not a new one
    assert len(traces) == 2
    assert_offset(run(*xy), *xy)
    assert len(traces) == 2

    jaxcc.set_backend("cpu", None)
    assert_plain(run(*xy), *xy)
    jaxcc.set_backend("cpu", "offset")
    assert_offset(run(*xy), *xy)
    jaxcc.clear_backends()
    assert_plain(run(*xy), *xy)
    assert len(traces) == 2  # both executables were reused: no trace, no compile

    jaxcc.set_backend("cpu", "numba")
    assert_numba(run(*xy), *xy)
    assert len(traces) == 3


def test_second_primitive_compiled_before_the_switch_follows_it(xy):
    first = make_mul(offset_backend=True, distinct_numba=True)
    second = make_mul(offset_backend=True, distinct_numba=True)
    first_traces, second_traces = [], []
    run_first = counted_jit(first, first_traces)
    run_second = counted_jit(second, second_traces)
    assert_plain(run_first(*xy), *xy)
    assert_plain(run_second(*xy), *xy)

    jaxcc.set_backend("cpu", "offset")
    assert_offset(run_second(*xy), *xy)
    assert_offset(run_first(*xy), *xy)
    assert (len(first_traces), len(second_traces)) == (2, 2)


def test_nested_jit_and_eager_calls_follow_the_switch(xy):
    kernel = make_mul(offset_backend=True, distinct_numba=True)
    inner = jax.jit(lambda a, b: call(kernel, a, b))
    outer = jax.jit(lambda a, b: inner(a, b) * 1.0)
    assert_plain(outer(*xy), *xy)
    assert_plain(call(kernel, *xy), *xy)
    jaxcc.set_backend("cpu", "offset")
    assert_offset(outer(*xy), *xy)
    assert_offset(inner(*xy), *xy)
    assert_offset(call(kernel, *xy), *xy)


def test_set_default_reaches_warm_functions_of_that_primitive_only(xy):
    kernel = make_mul(offset_backend=True, distinct_numba=True)
    other = make_mul(offset_backend=True, distinct_numba=True)
    traces = []
    run = counted_jit(kernel, traces)
    run_other = counted_jit(other, [])
    assert_plain(run(*xy), *xy)
    assert_plain(run_other(*xy), *xy)

    kernel.set_default("cpu", "offset")
    assert_offset(run(*xy), *xy)
    assert_plain(run_other(*xy), *xy)  # traced again, still its own default
    assert len(traces) == 2

    kernel.set_default("cpu", "cpp")  # back to the registration default: the first key again
    assert_plain(run(*xy), *xy)
    kernel.set_default("cpu", "offset")
    assert_offset(run(*xy), *xy)
    assert len(traces) == 2
    kernel.set_default("cpu", "cpp")


def test_per_call_backend_beats_every_switch(xy):
    kernel = make_mul(offset_backend=True, distinct_numba=True)
    run = jax.jit(lambda a, b: call(kernel, a, b, backend="numba"))
    kernel.set_default("cpu", "offset")
    jaxcc.set_backend("cpu", "offset")
    assert_numba(run(*xy), *xy)
    kernel.set_default("cpu", "cpp")


def test_the_jit_key_holds_only_what_was_chosen():
    kernel = make_mul(offset_backend=True, distinct_numba=True)
    before = selection.jit_key()
    jaxcc.set_backend("cpu", "offset")
    assert selection.jit_key() != before
    jaxcc.set_backend("cpu", "offset")  # the same choice again changes nothing
    key = selection.jit_key()
    kernel.set_default("cpu", "numba")
    assert selection.jit_key() != key
    kernel.set_default("cpu", "cpp")
    assert selection.jit_key() == key
    jaxcc.clear_backends()
    assert selection.jit_key() == before


def test_a_global_backend_a_primitive_lacks_warns_once(xy):
    kernel = make_mul(distinct_numba=True)  # cpp (default) and numba, no 'offset'
    jaxcc.set_backend("cpu", "offset")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # duplicates are filtered by jaxcc, not by Python
        x, y = xy
        assert_plain(kernel(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype)), x, y)
        assert_plain(jax.jit(lambda a, b: call(kernel, a, b))(*xy), *xy)
        assert_plain(call(kernel, *xy), *xy)
    backend_warnings = [w for w in caught if issubclass(w.category, jaxcc.BackendWarning)]
    assert len(backend_warnings) == 1, [str(w.message) for w in caught]
    message = str(backend_warnings[0].message)
    assert kernel.name in message
    assert "'offset'" in message and "default 'cpp'" in message
    assert backend_warnings[0].filename == __file__  # points at the caller's line

    jaxcc.set_backend("cpu", "pallas")  # another missing backend: its own warning
    with pytest.warns(jaxcc.BackendWarning, match=r"'pallas'.*default 'cpp'"):
        call(kernel, *xy)


def test_no_warning_when_the_primitive_has_the_backend_or_no_kernel_on_that_platform(xy):
    kernel = make_mul(offset_backend=True, distinct_numba=True)
    jaxcc.set_backend("cpu", "offset")
    jaxcc.set_backend("gpu", "triton")  # the primitive has no GPU kernels at all
    with warnings.catch_warnings():
        warnings.simplefilter("error", jaxcc.BackendWarning)
        assert_offset(call(kernel, *xy), *xy)


def test_eager_calls_are_not_recompiled_by_switches_that_do_not_concern_them(xy):
    kernel = make_mul(offset_backend=True, distinct_numba=True)
    other = make_mul(offset_backend=True, distinct_numba=True)
    assert_plain(call(kernel, *xy), *xy)
    (compiled,) = kernel._eager_cache.values()
    assert compiled._cache_size() == 1
    other.set_default("cpu", "offset")  # changes the jit key, not this primitive's choice
    jaxcc.set_backend("gpu", "triton")
    assert_plain(call(kernel, *xy), *xy)
    assert len(kernel._eager_cache) == 1 and compiled._cache_size() == 1
    other.set_default("cpu", "cpp")

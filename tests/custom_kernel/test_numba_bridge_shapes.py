"""The Numba CPU bridge and the buffers XLA hands it: vmap methods that would give the kernel
another rank than it was compiled for, and explicit signatures whose array layout is not XLA's
row-major one, are refused with the fix instead of running (issue 38)."""

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest

import jaxcc


@pytest.fixture(autouse=True)
def on_the_cpu():
    with jax.default_device(jax.devices("cpu")[0]):
        yield


@numba.njit
def add_one(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] + 1


@pytest.mark.parametrize("method", ["expand_dims", "broadcast_all", "legacy_vectorized"])
def test_vmap_method_expand_dims_is_refused_at_wrap_time_not_a_segfault(method):
    # Before: the kernel compiled for rank 1 got rank-2 buffers under jax.vmap (exit 139).
    out = jax.ShapeDtypeStruct((4,), jnp.float32)
    with pytest.raises(jaxcc.CallValueError, match=rf"vmap_method='{method}'.*vectorized=True"):
        jaxcc.numba_kernel(add_one, out, vmap_method=method)


@pytest.mark.parametrize("method", [None, "sequential", "sequential_unrolled"])
def test_vmap_methods_that_call_per_element_still_work(method):
    out = jax.ShapeDtypeStruct((4,), jnp.float32)
    f = jaxcc.numba_kernel(add_one, out, vmap_method=method)
    xs = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    np.testing.assert_array_equal(jax.vmap(f)(xs), np.asarray(xs) + 1)
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(xs), np.asarray(xs) + 1)


def test_a_vectorized_numba_generator_is_compiled_for_the_batched_rank():
    # The way to one call over a batch: the generator sees the batched outs.
    @numba.njit
    def add_one_any_rank(x, out):
        a, o = x.reshape(-1), out.reshape(-1)
        for i in range(a.size):
            o[i] = a[i] + 1

    kernel = jaxcc.XLACustomKernel("numba_vectorized_add_one")
    kernel.def_numba_kernel(
        lambda outs, **p: jaxcc.numba_kernel(add_one_any_rank, outs), vectorized=True
    )
    xs = jnp.arange(24, dtype=jnp.float32).reshape(2, 3, 4)
    got = jax.vmap(jax.vmap(lambda x: kernel(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))))(xs)
    np.testing.assert_array_equal(got, np.asarray(xs) + 1)


@numba.njit("void(float32[::1,:], float32[:])")
def first_row_fortran(x, out):
    for j in range(x.shape[1]):
        out[j] = x[0, j]


@numba.njit("void(float32[:,::1], float32[:])")
def first_row_c(x, out):
    for j in range(x.shape[1]):
        out[j] = x[0, j]


@numba.njit("void(float32[:,:], float32[:])")
def first_row_any(x, out):
    for j in range(x.shape[1]):
        out[j] = x[0, j]


@numba.njit("void(float32[::1], float32[::1])")
def copy_fortran_rank1(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i]


X = jnp.asarray([[20, 60, 100], [70, 80, 90]], jnp.float32)


def test_an_explicit_fortran_order_signature_is_refused_not_read_transposed():
    # Before: accepted (dtype and rank agree) and read XLA's C-order buffer column-major,
    # returning [20, 70, 60] for the first row [20, 60, 100].
    f = jaxcc.numba_kernel(first_row_fortran, jax.ShapeDtypeStruct((3,), jnp.float32))
    with pytest.raises(jaxcc.JaxccError, match=r"Fortran-order.*C-order \(row-major\)"):
        f(X)


@pytest.mark.parametrize("kernel", [first_row_c, first_row_any], ids=["C", "any"])
def test_c_order_and_any_layout_signatures_read_the_rows(kernel):
    f = jaxcc.numba_kernel(kernel, jax.ShapeDtypeStruct((3,), jnp.float32))
    np.testing.assert_array_equal(f(X), [20, 60, 100])
    np.testing.assert_array_equal(jax.jit(f)(X), [20, 60, 100])


def test_rank_one_arrays_are_the_same_in_either_order():
    f = jaxcc.numba_kernel(copy_fortran_rank1, jax.ShapeDtypeStruct((3,), jnp.float32))
    np.testing.assert_array_equal(f(X[0]), [20, 60, 100])


@numba.njit
def double(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 2


def test_float64_outs_of_a_standalone_numba_kernel_with_x64_off_are_float32():
    # Before: the output buffer was float64 while the input was cut to float32.
    a = np.asarray([1.5, -2.0, 4.25])
    f = jaxcc.numba_kernel(double, jax.ShapeDtypeStruct(a.shape, a.dtype))
    got = f(jnp.asarray(a))
    assert got.dtype == jnp.float32
    np.testing.assert_array_equal(got, a * 2)

"""What an eager call is cached by, and what its outputs are (issue 38): parameters key by type
and bits (-0.0 is not 0.0, True is not 1), as under jit; output dtypes are canonical as JAX makes
the inputs (x64 off: float64 is float32); dict `outs` pair with the kernel's outputs by sorted key.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import cpp_module, unique

import jaxcc

X = jnp.asarray([1.0, 2.0, 3.0], jnp.float32)


def sign_kernel():
    """Adds +1 for a parameter `scale` whose sign bit is clear, -1 where it is set."""
    kernel = jaxcc.XLACustomKernel(unique("sign_of_scale"))

    def generator(scale, **params):
        step = -1.0 if np.signbit(scale) else 1.0
        return lambda x: x + jnp.float32(step)

    kernel.def_kernel("jax", "cpu", generator)
    return kernel


@pytest.mark.parametrize("first,second", [(0.0, -0.0), (-0.0, 0.0)])
def test_eager_calls_tell_minus_zero_from_zero(first, second):
    # Before: the second call reused the first one's executable (0.0 == -0.0, equal hashes).
    kernel = sign_kernel()
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    for scale in (first, second, first, second):  # the checked path, then the fast path
        expected = np.asarray(X) + (-1 if np.signbit(scale) else 1)
        np.testing.assert_array_equal(kernel(X, outs=out, scale=scale), expected)
        jitted = jax.jit(lambda x, s=scale: kernel(x, outs=out, scale=s))
        np.testing.assert_array_equal(jitted(X), expected)


def test_eager_calls_tell_numpy_minus_zero_from_zero():
    kernel = sign_kernel()
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    np.testing.assert_array_equal(kernel(X, outs=out, scale=np.float32(0.0)), np.asarray(X) + 1)
    np.testing.assert_array_equal(kernel(X, outs=out, scale=np.float32(-0.0)), np.asarray(X) - 1)
    np.testing.assert_array_equal(kernel(X, outs=out, scale=(1, -0.0)[1]), np.asarray(X) - 1)


def test_eager_calls_tell_true_from_one():
    # Before: n=True reused the n=1 executable, so a generator that checks the type never ran.
    kernel = jaxcc.XLACustomKernel(unique("bool_or_int"))
    kernel.def_kernel(
        "jax", "cpu", lambda n, **p: lambda x: x + jnp.float32(100 if type(n) is bool else n)
    )
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    for _ in range(2):
        np.testing.assert_array_equal(kernel(X, outs=out, n=1), np.asarray(X) + 1)
        np.testing.assert_array_equal(kernel(X, outs=out, n=True), np.asarray(X) + 100)


def test_true_for_an_int_attribute_is_refused_after_an_int_call():
    # Before: the eager cache handed n=True the executable of factor=1.0, skipping the
    # bool-versus-number attribute check of the C++ kernel (True == 1.0, equal hashes).
    kernel = jaxcc.XLACustomKernel(unique("scaled"))
    kernel.def_cpp_kernel(lambda **params: cpp_module().scaled)
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    np.testing.assert_allclose(kernel(X, outs=out, factor=1.0), np.asarray(X))
    with pytest.raises(jaxcc.JaxccError, match="factor"):
        kernel(X, outs=out, factor=True)


def test_nan_parameters_reuse_their_executable():
    kernel = sign_kernel()
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    kernel(X, outs=out, scale=float("nan"))
    kernel(X, outs=out, scale=float("nan"))
    assert len(kernel._eager_cache) == 1


def test_float64_outs_with_x64_off_are_float32_like_the_inputs():
    # Before: outs kept float64 while the inputs were cut to float32, and the kernel wrote
    # float32 into a float64 buffer (garbage).
    a = np.asarray([1.5, -2.0, 4.25])  # NumPy float64
    kernel = jaxcc.XLACustomKernel(unique("double"))
    kernel.def_kernel("jax", "cpu", lambda **p: lambda x: x * 2)
    for _ in range(2):
        got = kernel(jnp.asarray(a), outs=jax.ShapeDtypeStruct(a.shape, a.dtype))
        assert got.dtype == jnp.float32
        np.testing.assert_array_equal(got, a * 2)
    got = jax.jit(lambda x: kernel(x, outs=jax.ShapeDtypeStruct(a.shape, a.dtype)))(a)
    assert got.dtype == jnp.float32
    np.testing.assert_array_equal(got, a * 2)


def test_float64_outs_of_a_cpp_kernel_with_x64_off():
    a = np.asarray([1.5, -2.0, 4.25])
    kernel = jaxcc.XLACustomKernel(unique("cpp_scaled"))
    kernel.def_cpp_kernel(lambda **params: cpp_module().scaled)
    got = kernel(a, outs=jax.ShapeDtypeStruct(a.shape, a.dtype), factor=3.0)
    assert got.dtype == jnp.float32
    np.testing.assert_array_equal(got, a * 3)


def test_the_fast_path_keeps_x64_modes_apart():
    kernel = jaxcc.XLACustomKernel(unique("double_x64"))
    kernel.def_kernel("jax", "cpu", lambda **p: lambda x: x * 2)
    out = jax.ShapeDtypeStruct((3,), np.float64)
    with jax.enable_x64(True):
        wide = jnp.asarray([1.0, 2.0, 3.0], jnp.float64)
        for _ in range(2):
            assert kernel(wide, outs=out).dtype == jnp.float64
    narrow = jnp.asarray([1.0, 2.0, 3.0], jnp.float32)
    for _ in range(2):
        assert kernel(narrow, outs=out).dtype == jnp.float32


def test_dict_outs_pair_with_the_kernel_outputs_by_sorted_key():
    kernel = jaxcc.XLACustomKernel(unique("two_outs"))
    # The kernel returns its outputs in sorted-key order: "a" (x + 1) then "b" (x * 10).
    kernel.def_kernel("jax", "cpu", lambda **p: lambda x: (x + 1, x * 10))
    sds = jax.ShapeDtypeStruct(X.shape, X.dtype)
    got = kernel(X, outs={"b": sds, "a": sds})
    np.testing.assert_array_equal(got["a"], np.asarray(X) + 1)
    np.testing.assert_array_equal(got["b"], np.asarray(X) * 10)

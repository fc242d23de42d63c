"""A `vectorized=True` kernel sees exactly one leading batch axis under every nesting of vmap,
jvp, grad and transpose (issue 38): a C++ kernel that refuses any other rank, checked against
NumPy's closed forms and, for drawn nestings, against the same nesting of the pure-JAX function.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import unique
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.interpreters import ad

import jaxcc

# Elementwise x * y over vectors; vectorised, so it takes one leading batch axis and no more.
SOURCE = r"""
#include <stdexcept>

#include "jaxcc/jaxcc.h"

void rank_checked_mul(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  if (x.ndim() < 1 || x.ndim() > 2 || y.ndim() != x.ndim() || out.ndim() != x.ndim())
    throw std::runtime_error("rank_checked_mul: an operand has two batch axes");
  for (int d = 0; d < x.ndim(); ++d)
    if (y.size(d) != x.size(d) || out.size(d) != x.size(d))
      throw std::runtime_error("rank_checked_mul: operand shapes differ");
  const float* a = x.data_ptr<float>();
  const float* b = y.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] * b[i];
}
"""

N = 3
C = jnp.asarray([0.5, -1.5, 2.0], jnp.float32)


@functools.cache
def kernel_mul():
    module = jaxcc.load_cpp_inline("ck_rank_checked", SOURCE, ["rank_checked_mul"])
    kernel = jaxcc.XLACustomKernel(unique("rank_checked_mul"))
    kernel.def_cpp_kernel(lambda **params: module.rank_checked_mul, vectorized=True)

    def mul(x, y):
        return kernel(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))

    # Rules written for one element, calling the kernel itself (so they are linear in t / ct).
    kernel.def_jvp_rule2(lambda t, x, y, **kw: [mul(t, y)], lambda t, x, y, **kw: [mul(x, t)])

    def transpose(cts, x, y, **params):
        (ct,) = cts
        if type(ct) is ad.Zero:
            return None, None
        ct_x = mul(ct, y) if ad.is_undefined_primal(x) else None
        ct_y = mul(x, ct) if ad.is_undefined_primal(y) else None
        return ct_x, ct_y

    kernel.def_transpose_rule(transpose)
    return mul


def square(x):
    return kernel_mul()(x, x)


X = jnp.asarray(np.linspace(-1.0, 1.5, 2 * 4 * N).reshape(2, 4, N), jnp.float32)
T = jnp.cos(X)


def test_vmap_of_jvp_of_vmap_gives_one_batch_axis():
    # Before: the JVP rule's kernel calls were bound without the inner vmap's batch marker, so
    # the outer vmap gave them a second leading axis (NaN tangents; here the kernel refuses).
    def inner(xs, ts):
        return jax.jvp(jax.vmap(square), (xs,), (ts,))

    primal, tangent = jax.vmap(inner)(X, T)
    np.testing.assert_allclose(primal, np.asarray(X) ** 2, rtol=1e-6)
    np.testing.assert_allclose(tangent, 2 * np.asarray(X) * np.asarray(T), rtol=1e-6)


def test_per_example_gradients_of_a_loss_with_an_inner_vmap():
    # Before: off by 8.3e7 with an unchecked kernel (the transpose's kernel call got two axes).
    def loss(w, xs):
        return jnp.sum(jax.vmap(lambda x: kernel_mul()(w, x))(xs) ** 2)

    ws = jnp.asarray([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]], jnp.float32)
    grads = jax.vmap(jax.grad(loss), in_axes=(0, 0))(ws, X)
    expected = 2 * np.asarray(ws) * np.sum(np.asarray(X) ** 2, axis=1)
    np.testing.assert_allclose(grads, expected, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(loss)))(ws, X), expected, rtol=1e-5)


def test_linear_transpose_under_vmap_of_a_vmapped_kernel():
    def linear(t):
        return jax.vmap(lambda u: kernel_mul()(u, C))(t)

    def transposed(ct):
        return jax.linear_transpose(linear, ct)(ct)[0]

    got = jax.vmap(transposed)(X)
    np.testing.assert_allclose(got, np.asarray(X) * np.asarray(C), rtol=1e-6)


# -- drawn nestings ------------------------------------------------------------------------


def nest(op, f):
    """One transformation of a function of one array to an array of the same shape."""
    kind = op[0]
    if kind == "vmap":
        axis = op[1]
        return jax.vmap(f, in_axes=axis, out_axes=axis)
    if kind == "jvp":
        return lambda x: jax.jvp(f, (x,), (jnp.cos(x),))[1]
    if kind == "grad":
        return jax.grad(lambda x: jnp.sum(f(x) * jnp.sin(x)))
    # transpose of the linearised function: a VJP through the kernel's transpose rule
    return lambda x: jax.linear_transpose(lambda t: jax.jvp(f, (x,), (t,))[1], x)(jnp.cos(x))[0]


def base_kernel(x):
    return kernel_mul()(x, kernel_mul()(x, jnp.broadcast_to(C, x.shape)))


def base_reference(x):
    return x * (x * jnp.broadcast_to(C, x.shape))


@st.composite
def nestings(draw):
    ops, shape = [], [N]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["vmap", "vmap", "jvp", "grad", "transpose"]))
        if kind == "vmap":
            axis = draw(st.integers(0, len(shape)))
            shape.insert(axis, draw(st.integers(1, 3)))
            ops.append(("vmap", axis))
        else:
            ops.append((kind,))
    return ops, tuple(shape), draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(nestings(), st.integers(0, 2**31 - 1))
def test_drawn_nestings_match_the_pure_jax_function(nesting, seed):
    ops, shape, jitted = nesting
    f, reference = base_kernel, base_reference
    for op in ops:  # innermost first
        f, reference = nest(op, f), nest(op, reference)
    if jitted:
        f = jax.jit(f)
    x = jnp.asarray(np.random.default_rng(seed).uniform(-1.5, 1.5, shape), jnp.float32)
    np.testing.assert_allclose(f(x), reference(x), rtol=2e-5, atol=1e-5, err_msg=str(ops))


@pytest.mark.parametrize(
    "ops",
    [
        [("vmap", 0), ("jvp",), ("vmap", 0)],
        [("vmap", 1), ("grad",), ("vmap", 0)],
        [("vmap", 0), ("transpose",), ("vmap", 1), ("jvp",)],
        [("vmap", 0), ("vmap", 0), ("grad",), ("vmap", 2)],
    ],
)
def test_named_nestings_match_the_pure_jax_function(ops):
    f, reference = base_kernel, base_reference
    shape = [N]
    for op in ops:
        f, reference = nest(op, f), nest(op, reference)
        if op[0] == "vmap":
            shape.insert(op[1], 2)
    x = jnp.asarray(np.random.default_rng(0).uniform(-1.5, 1.5, shape), jnp.float32)
    np.testing.assert_allclose(f(x), reference(x), rtol=2e-5, atol=1e-5)


@functools.cache
def kernel_mul_whole_jvp():
    """The same kernel with one whole JVP rule (JAX's primitive_jvps form)."""
    module = jaxcc.load_cpp_inline("ck_rank_checked", SOURCE, ["rank_checked_mul"])
    kernel = jaxcc.XLACustomKernel(unique("rank_checked_mul_jvp"))
    kernel.def_cpp_kernel(lambda **params: module.rank_checked_mul, vectorized=True)

    def mul(x, y):
        return kernel(x, y, outs=[jax.ShapeDtypeStruct(x.shape, x.dtype)])

    def jvp(primals, tangents, **params):
        x, y = primals
        tx, ty = tangents
        assert x.ndim == 1, "the rule sees one batch element"
        parts = [mul(t, y)[0] for t in (tx,) if type(t) is not ad.Zero]
        parts += [mul(x, t)[0] for t in (ty,) if type(t) is not ad.Zero]
        if not parts:
            return mul(x, y), [ad.Zero(jax.typeof(x).to_tangent_aval())]
        return mul(x, y), [sum(parts[1:], parts[0])]

    kernel.def_jvp_rule(jvp)
    return lambda x, y: mul(x, y)[0]


def test_a_whole_jvp_rule_under_vmap_sees_one_element_and_symbolic_zeros():
    mul = kernel_mul_whole_jvp()

    def inner(xs, ts):  # the second operand is a constant: its tangent is a symbolic zero
        return jax.jvp(jax.vmap(lambda x: mul(x, C)), (xs,), (ts,))

    primal, tangent = jax.vmap(inner)(X, T)
    np.testing.assert_allclose(primal, np.asarray(X) * np.asarray(C), rtol=1e-6)
    np.testing.assert_allclose(tangent, np.asarray(T) * np.asarray(C), rtol=1e-6)

"""A C++ kernel that JAX can differentiate: an XLACustomKernel with JVP and transpose rules.

A compiled kernel is opaque to JAX (`jax.grad` of one raises `jaxcc.NotDifferentiableError`). An
XLACustomKernel gives it rules, written with the kernel itself, so forward mode, reverse mode,
`jax.jit` and `jax.vmap` all work:

- JVP rules, one per input (`def_jvp_rule2`): `rule(tangent, *primals, outs, **params)` returns
  the output tangents that input's tangent contributes. For out = x * y, x's contribution is
  `mul(t, y)` and y's is `mul(x, t)`; both are linear in `t`, which is what reverse mode needs.
- A transpose rule (`def_transpose_rule`): `rule(cotangents, *args, outs, **params)` gets one
  cotangent per output (JAX's `ad.Zero` for one that is zero) and the primal arguments, where the
  inputs the call is linear in arrive as `ad.UndefinedPrimal` placeholders (test them with
  `ad.is_undefined_primal(x)`; `x.aval` has their shape and dtype) and the others as arrays. It
  returns one cotangent per input, `None` for the defined ones.

Run: python examples/custom_kernel_autodiff.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import ad
from jax.test_util import check_grads

import jaxcc

SOURCE = r"""
// out[i] = x[i] * y[i]; jaxcc::Tensor carries shape and dtype, data_ptr<float> checks the latter.
void mul(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
    const float* a = x.data_ptr<float>();
    const float* b = y.data_ptr<float>();
    float* c = out.data_ptr<float>();
    for (int64_t i = 0; i < out.numel(); ++i) c[i] = a[i] * b[i];
}
"""


def make_differentiable_mul():
    ops = jaxcc.load_cpp_inline("autodiff_example", SOURCE, ["mul"])
    kernel = jaxcc.XLACustomKernel("autodiff_example_mul")
    # vectorized=True: under vmap the kernel gets the batched arrays in one call (it is
    # elementwise, so any leading batch axis is fine).
    kernel.def_cpp_kernel(lambda **params: ops.mul, vectorized=True)

    def mul(x, y):
        return kernel(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))

    kernel.def_jvp_rule2(
        lambda t, x, y, **params: mul(t, y),  # d(x * y) / dx applied to t
        lambda t, x, y, **params: mul(x, t),  # d(x * y) / dy applied to t
    )

    def transpose(cotangents, x, y, **params):
        (ct,) = cotangents
        if type(ct) is ad.Zero:
            return None, None
        ct_x = mul(ct, y) if ad.is_undefined_primal(x) else None
        ct_y = mul(x, ct) if ad.is_undefined_primal(y) else None
        return ct_x, ct_y

    kernel.def_transpose_rule(transpose)
    return mul


def main():
    mul = make_differentiable_mul()
    x = jnp.asarray([0.5, -1.0, 2.0, 3.0], jnp.float32)
    y = jnp.asarray([1.5, 0.25, -2.0, 1.0], jnp.float32)

    loss = lambda x, y: jnp.sum(mul(x, y) ** 2)  # noqa: E731
    grad_x, grad_y = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(grad_x, 2 * x * y * y, rtol=1e-6)
    np.testing.assert_allclose(grad_y, 2 * x * y * x, rtol=1e-6)
    # Forward and reverse mode against finite differences (JAX's own checker).
    check_grads(mul, (x, y), order=1, modes=["fwd", "rev"], atol=1e-2, rtol=1e-2)
    # Per-example gradients: vmap of grad, each row its own gradient.
    rows = jnp.stack([x, 2 * x, -x])
    per_row = jax.vmap(jax.grad(lambda r: jnp.sum(mul(r, y))))(rows)
    np.testing.assert_allclose(per_row, np.broadcast_to(y, rows.shape), rtol=1e-6)
    print("grad x:", np.asarray(grad_x))
    print("grad y:", np.asarray(grad_y))
    print("per-row gradients of sum(mul(row, y)):", np.asarray(per_row).tolist())
    print("ok: jit(grad), check_grads (fwd, rev) and vmap(grad) agree with the analytic gradients")


if __name__ == "__main__":
    main()

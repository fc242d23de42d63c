"""NotDifferentiableError's advice works as written: one JVP rule whose tangents are JAX code
gives an XLACustomKernel jax.grad too, without a transpose rule (issue 52 item 5)."""

import jax
import jax.numpy as jnp
import numpy as np
from ck_helpers import make_mul

from jaxcc import NotDifferentiableError

X = jnp.asarray([0.3, -1.2, 2.0, 0.7], jnp.float32)
Y = jnp.asarray([1.5, 0.4, -0.6, 2.2], jnp.float32)


def test_the_message_asks_for_one_jvp_rule_not_both():
    jax_error = ValueError("The FFI call to `m.f` cannot be differentiated.")
    message = str(NotDifferentiableError.from_jax("f", "m.f", jax_error))
    assert "def_jvp_rule2" in message and "is enough for jax.jvp and jax.grad" in message
    assert "def_transpose_rule is needed only when" in message
    assert "def_jvp_rule2 and def_transpose_rule" not in message


def test_grad_through_a_kernel_with_only_a_jvp_rule_in_jax_code():
    kernel = make_mul("jvp_only_mul")

    def mul(x, y):
        return kernel(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))

    kernel.def_jvp_rule2(lambda t, x, y, **kw: t * y, lambda t, x, y, **kw: x * t)
    gx, gy = jax.jit(jax.grad(lambda x, y: jnp.sum(jnp.sin(mul(x, y))), argnums=(0, 1)))(X, Y)
    cos = np.cos(np.asarray(X) * np.asarray(Y))
    np.testing.assert_allclose(gx, cos * np.asarray(Y), rtol=1e-5)
    np.testing.assert_allclose(gy, cos * np.asarray(X), rtol=1e-5)

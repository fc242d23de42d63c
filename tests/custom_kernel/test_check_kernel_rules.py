"""check_kernel on XLACustomKernels: one planted defect in a rule or a backend per test, and
exactly its row fails (tests/test_check_kernel.py has the loaded C++ kernels)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import cpp_module, unique
from jax.interpreters import ad

import jaxcc

X = np.asarray([0.3, -1.2, 2.0, 0.7, 1.1, -0.4], np.float32)
Y = np.asarray([1.5, 0.4, -0.6, 2.2, 0.9, 1.3], np.float32)
OUT = jax.ShapeDtypeStruct(X.shape, X.dtype)


def failed(report) -> set:
    return {row.name for row in report.failed}


def make_mul(*, jvp_factor=1.0, transpose_factor=1.0, cpp=True):
    """x * y with a C++ and a JAX backend, per-input JVP rules and a transpose rule, the JVP
    of x and the transpose for x scaled by the given factors (1: right)."""
    kernel = jaxcc.XLACustomKernel(unique("check_mul"))
    if cpp:
        module = cpp_module()
        kernel.def_cpp_kernel(lambda **params: module.mul)
    kernel.def_kernel("jax", "cpu", lambda **params: lambda x, y: x * y)

    def mul(x, y):
        return kernel(x, y, outs=[jax.ShapeDtypeStruct(x.shape, x.dtype)])

    kernel.def_jvp_rule2(
        lambda t, x, y, outs, **kw: [jvp_factor * mul(t, y)[0]],
        lambda t, x, y, outs, **kw: mul(x, t),
    )

    def transpose(cts, x, y, **params):
        (ct,) = cts
        if type(ct) is ad.Zero:
            return None, None
        ct_x = transpose_factor * mul(ct, y)[0] if ad.is_undefined_primal(x) else None
        ct_y = mul(x, ct)[0] if ad.is_undefined_primal(y) else None
        return ct_x, ct_y

    kernel.def_transpose_rule(transpose)
    return kernel


def test_right_kernel_passes_every_row():
    report = jaxcc.check_kernel(make_mul(), X, Y, outs=[OUT])
    assert report.ok, str(report)
    for row in ("outputs", "inputs", "determinism", "jit", "vmap", "jvp", "transpose",
                "backends", "threads"):  # fmt: skip
        assert report[row].status == "passed", str(report)
    # An XLACustomKernel is exported too (decision 228; it was skipped before).
    assert report["export"].status == "passed", str(report)


def test_jvp_off_by_a_factor_fails_jvp_only():
    report = jaxcc.check_kernel(make_mul(jvp_factor=2.0, cpp=False), X, Y, outs=[OUT])
    assert failed(report) == {"jvp"}, str(report)
    assert "ratio 1." in report["jvp"].detail or "ratio" in report["jvp"].detail


def test_wrong_transpose_fails_transpose_only():
    report = jaxcc.check_kernel(make_mul(transpose_factor=-1.0, cpp=False), X, Y, outs=[OUT])
    assert failed(report) == {"transpose"}, str(report)
    assert "not the transpose of the JVP" in report["transpose"].detail


def test_wrong_batching_rule_fails_vmap_only():
    kernel = make_mul(cpp=False)

    def reversed_batch(args, axes, **params):  # right products, batch elements in reverse
        size = next(a.shape[ax] for a, ax in zip(args, axes, strict=True) if ax is not None)
        xs = [jnp.moveaxis(a, ax, 0) if ax is not None else jnp.broadcast_to(a, (size, *a.shape))
              for a, ax in zip(args, axes, strict=True)]  # fmt: skip
        return [jnp.flip(xs[0] * xs[1], 0)], [0]

    kernel.def_batching_rule(reversed_batch)
    report = jaxcc.check_kernel(kernel, X, Y, outs=[OUT])
    assert failed(report) == {"vmap"}, str(report)
    assert "jax.vmap (in_axes=0)" in report["vmap"].detail


def test_kernel_declared_vectorized_that_is_not_fails_vmap_only():
    kernel = jaxcc.XLACustomKernel(unique("check_total"))

    def total(outs, **params):  # sums everything: a batch too, into one number
        return lambda x: jnp.full(outs[0].shape, x.sum(), x.dtype)

    kernel.def_kernel("jax", "cpu", total, vectorized=True)
    report = jaxcc.check_kernel(kernel, X, outs=[jax.ShapeDtypeStruct((1,), X.dtype)])
    assert failed(report) == {"vmap"}, str(report)
    assert "vs a loop of calls: output 1 differs" in report["vmap"].detail


def test_backends_that_disagree_fail_backends_only():
    kernel = make_mul(cpp=False)
    kernel.def_kernel("off", "cpu", lambda **params: lambda x, y: x * y + 1e-3)
    report = jaxcc.check_kernel(kernel, X, Y, outs=[OUT])
    assert failed(report) == {"backends"}, str(report)
    assert "backend 'off' vs 'jax'" in report["backends"].detail
    # backend= names the reference instead of the default.
    report = jaxcc.check_kernel(kernel, X, Y, outs=[OUT], backend="off", checks=["backends"])
    assert "vs 'off'" in report["backends"].detail


def test_outs_are_required_for_a_primitive():
    with pytest.raises(jaxcc.CallError, match="outs"):
        jaxcc.check_kernel(make_mul(cpp=False), X, Y)

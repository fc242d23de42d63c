"""check_kernel on any JAX function (decision 205): a jax.custom_vjp around a loaded kernel (the
other documented way to give a kernel a gradient) has reverse mode checked against finite
differences, a custom_jvp its forward mode, and a plain function calling kernels every row that
does not need the kernel itself."""

import os
import sys

import jax
import numpy as np
import pytest

import jaxcc

sys.path.insert(0, os.path.dirname(__file__))
import check_kernel_catalogue as catalogue  # noqa: E402

GRADS = ["jvp", "transpose"]


@pytest.fixture(scope="module")
def ops():
    return catalogue.module()


def failed(report) -> set:
    return {row.name for row in report.failed}


def scaled_vjp(ops, backward_factor: float):
    """x * 2 through the loaded `scale` kernel, its backward rule scaled by the factor."""

    @jax.custom_vjp
    def double(x):
        return ops.scale(x, factor=2.0)

    double.defvjp(lambda x: (double(x), None),
                  lambda _, ct: (ops.scale(ct, factor=2.0 * backward_factor),))  # fmt: skip
    return double


def test_custom_vjp_reverse_mode_is_checked_against_finite_differences(ops):
    right = jaxcc.check_kernel(scaled_vjp(ops, 1.0), catalogue.X, checks=GRADS)
    assert right.ok, str(right)
    assert right["jvp"].status == "skipped" and "no forward mode" in right["jvp"].detail
    assert right["transpose"].detail.startswith(
        "no forward mode: reverse mode equals finite differences"
    )
    wrong = jaxcc.check_kernel(scaled_vjp(ops, 1.5), catalogue.X, checks=GRADS)
    assert failed(wrong) == {"transpose"}, str(wrong)
    assert "(ratio 1.5): reverse mode (the custom_vjp's backward rule?) is wrong" in (
        wrong["transpose"].detail
    )


def test_custom_jvp_forward_mode_is_checked(ops):
    def make(factor):
        @jax.custom_jvp
        def double(x):
            return ops.scale(x, factor=2.0)

        double.defjvp(lambda p, t: (double(p[0]), factor * 2.0 * t[0]))
        return double

    right = jaxcc.check_kernel(make(1.0), catalogue.X, checks=GRADS)
    assert right.ok and right["jvp"].status == "passed", str(right)
    assert right["transpose"].status == "passed", str(right)  # JAX transposes the linear rule
    wrong = jaxcc.check_kernel(make(0.5), catalogue.X, checks=GRADS)
    assert failed(wrong) == {"jvp"}, str(wrong)


def test_a_function_calling_kernels_runs_the_rows_that_apply(ops):
    def pipeline(x):
        return ops.scale(ops.scale(x, factor=2.0), factor=0.5) + 1.0

    report = jaxcc.check_kernel(pipeline, catalogue.X, reference=lambda x: x + 1.0,
                                skip=["export"])  # fmt: skip
    assert report.ok, str(report)
    assert report.kernel.endswith("pipeline")
    for row in ("outputs", "inputs", "determinism", "reference", "jit", "vmap", "threads"):
        assert report[row].status == "passed", str(report)
    assert "the kernels it calls are not known here" in report["bounds"].detail
    with pytest.raises(jaxcc.CallError, match="outs= is for kernels"):
        jaxcc.check_kernel(pipeline, catalogue.X, outs=jax.ShapeDtypeStruct((8,), np.float32))


def test_a_function_with_a_wrong_value_fails_reference(ops):
    def off_by_one(x):
        return ops.scale(x, factor=2.0) + 1.0

    report = jaxcc.check_kernel(off_by_one, catalogue.X, reference=lambda x: 2 * x,
                                checks=["outputs", "reference"])  # fmt: skip
    assert failed(report) == {"reference"}, str(report)


def test_export_row_exports_a_symbolic_batch(ops):
    pytest.importorskip("flatbuffers")  # jax.export writes artefacts with it
    report = jaxcc.check_kernel(ops.scale, catalogue.X, factor=2.0, checks=["export"])
    assert report["export"].status == "passed", str(report)
    assert report["export"].detail.endswith(
        "a symbolic leading dimension exports and equals eager at b=8 and b=7"
    )
    review = catalogue.review_module()

    def outs(x):
        return jax.ShapeDtypeStruct(x.shape[:1], x.dtype)

    rows = jaxcc.check_kernel(review.row_sums, catalogue.S, outs=outs, checks=["export"])
    assert rows["export"].detail.endswith("equals eager at b=6 and b=5"), str(rows)
    fixed = jaxcc.check_kernel(review.row_sums, catalogue.S, checks=["export"],
                               outs=jax.ShapeDtypeStruct((6,), np.float32))  # fmt: skip
    assert "symbolic batch not tried (outs fixed" in fixed["export"].detail

"""check_kernel as a reviewer uses it: `reference=` (what the kernel should compute) on every
shape, the smaller and awkward shapes derived along free dimensions and `samples=[...]`, and
outputs read before they are written (decisions 200-202). Planted defects:
tests/check_kernel_catalogue.py's REVIEW_SOURCE."""

import os
import sys

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxcc

sys.path.insert(0, os.path.dirname(__file__))
import check_kernel_catalogue as catalogue  # noqa: E402

ROWS = ["outputs", "bounds", "reference"]  # the rows that run at every shape


@pytest.fixture(scope="module")
def ops():
    return catalogue.review_module()


def failed(report) -> set:
    return {row.name for row in report.failed}


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def test_reference_catches_an_unnormalised_last_column(ops):
    report = jaxcc.check_kernel(ops.softmax_last_unnormalised, catalogue.S, reference=softmax,
                                checks=[*ROWS, "jit", "vmap"])  # fmt: skip
    assert failed(report) == {"reference"}, str(report)
    assert "kernel vs reference at the sample: output 1 differs at index (0, 9)" in (
        report["reference"].detail
    )
    assert "(6 of 60 elements)" in report["reference"].detail
    right = jaxcc.check_kernel(ops.softmax, catalogue.S, reference=softmax, checks=ROWS)
    assert right.ok, str(right)
    assert right["reference"].detail.startswith("equals the reference at 7 shape(s) (float32")


def test_without_a_reference_the_report_says_values_were_not_checked(ops):
    # Only the reference row: the first test already ran outputs and bounds on this kernel at
    # the same shapes (each compile here is 0.1-0.4 s of CI).
    report = jaxcc.check_kernel(ops.softmax_last_unnormalised, catalogue.S, checks=["reference"])
    assert report.ok and report["reference"].status == "skipped"
    assert report["reference"].detail.startswith("values were not checked against anything")


def test_reference_gets_the_kernels_attributes():
    ops = catalogue.module()
    # The sample alone (extra_shapes=False): the attributes are what is tested, and each extra
    # shape costs a compile of each reference.
    report = jaxcc.check_kernel(ops.scale, catalogue.X, factor=2.0, checks=["reference"],
                                reference=lambda x, factor: x * factor,
                                extra_shapes=False)  # fmt: skip
    assert report.ok, str(report)
    wrong = jaxcc.check_kernel(ops.scale, catalogue.X, factor=2.0, checks=["reference"],
                               reference=lambda x, factor: x * factor + 1e-3,
                               extra_shapes=False)  # fmt: skip
    assert failed(wrong) == {"reference"}, str(wrong)


def test_reference_that_raises_on_the_sample_fails_the_row(ops):
    report = jaxcc.check_kernel(ops.softmax, catalogue.S, checks=["reference"],
                                reference=lambda x: x.no_such_method())  # fmt: skip
    assert report["reference"].detail.startswith("the reference raised on the sample: ")
    with pytest.raises(jaxcc.CallError, match="reference= must be a function"):
        jaxcc.check_kernel(ops.softmax, catalogue.S, reference=3)


def test_unclipped_last_block_is_caught_at_a_derived_shape(ops):
    # Right at n = 64 (8 divides it); the guard zones see the write past the end at n = 1.
    report = jaxcc.check_kernel(ops.blocks_of_8, catalogue.X64, checks=ROWS)
    assert failed(report) == {"bounds"}, str(report)
    assert report["bounds"].detail.startswith(
        "at float32[1]: function 'blocks_of_8' wrote past the end of its output 'out' (4 bytes)"
    )
    right = jaxcc.check_kernel(ops.blocks_of_8_clipped, catalogue.X64, checks=ROWS,
                               reference=lambda x: 2 * x)  # fmt: skip
    assert right.ok, str(right)
    assert "also at float32[0], float32[1], float32[63] (outs inferred from the inputs)" in (
        right["outputs"].detail
    )
    only = jaxcc.check_kernel(ops.blocks_of_8, catalogue.X64, checks=ROWS, extra_shapes=False)
    assert only.ok, str(only)  # the sample alone hides it


def test_outs_as_a_function_of_the_inputs_derives_shapes(ops):
    def outs(x):
        return jax.ShapeDtypeStruct(x.shape[:1], x.dtype)

    report = jaxcc.check_kernel(ops.row_sums, catalogue.S, outs=outs, checks=ROWS,
                                reference=lambda x: x.sum(1))  # fmt: skip
    assert report.ok, str(report)
    assert "float32[5, 10]" in report["outputs"].detail and "(outs=function)" in (
        report["outputs"].detail
    )
    fixed = jaxcc.check_kernel(ops.row_sums, catalogue.S, checks=["outputs"],
                               outs=jax.ShapeDtypeStruct((6,), np.float32))  # fmt: skip
    assert "only the sample's shapes: outs is fixed" in fixed["outputs"].detail


def test_samples_add_shapes(ops):
    outs = jax.ShapeDtypeStruct((6,), np.float32)
    extra = {"args": (catalogue.S[:3, :7],), "outs": jax.ShapeDtypeStruct((3,), np.float32)}
    report = jaxcc.check_kernel(ops.row_sums, catalogue.S, outs=outs, samples=[extra],
                                checks=ROWS, reference=lambda x: x.sum(1))  # fmt: skip
    assert report.ok, str(report)
    assert "also at samples[0]: float32[3, 7]" in report["outputs"].detail
    # A sample that shows the defect fails its row, naming the sample.
    bad = jaxcc.check_kernel(ops.blocks_of_8, catalogue.X64, extra_shapes=False,
                             samples=[(catalogue.X64[:13],)], checks=ROWS)  # fmt: skip
    assert bad["bounds"].detail.startswith("at samples[0]: float32[13]: "), str(bad)
    with pytest.raises(jaxcc.CallError, match=r"samples\[0\] must be a tuple of arguments"):
        jaxcc.check_kernel(ops.row_sums, catalogue.S, outs=outs, samples=[catalogue.S])


def test_accumulating_into_the_output_is_read_before_write(ops):
    report = jaxcc.check_kernel(ops.accumulate, catalogue.X, checks=["outputs", "jit"])
    assert failed(report) == {"outputs"}, str(report)
    detail = report["outputs"].detail
    assert "never written" not in detail
    assert detail == ("output 1: 8 of 8 elements depend on the output's initial contents "
                      "(first at index (0,)): read before written, e.g. accumulated into without "
                      "being zeroed first")  # fmt: skip


def test_xla_custom_kernel_reference_is_another_backend():
    kernel = jaxcc.XLACustomKernel("check_review_softmax")
    module = catalogue.review_module()
    kernel.def_cpp_kernel(lambda **p: module.softmax_last_unnormalised)
    kernel.def_kernel("jax", "cpu", lambda **p: softmax)
    outs = jax.ShapeDtypeStruct(catalogue.S.shape, catalogue.S.dtype)
    report = jaxcc.check_kernel(kernel, catalogue.S, outs=outs, backend="cpp", reference="jax",
                                checks=["reference"])  # fmt: skip
    assert failed(report) == {"reference"}, str(report)
    loaded = jaxcc.check_kernel(module.softmax, catalogue.S, reference="jax", checks=["reference"])
    assert "names a backend, which only an XLACustomKernel has" in loaded["reference"].detail


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 10_000))
def test_reviewer_sizes_are_smaller_and_awkward(size):
    from jaxcc.check import cases

    sizes = cases.reviewer_sizes(size)
    assert sizes[:2] == [0, 1] and sizes[-1] == size - 1
    assert all(0 <= s < size for s in sizes) and len(set(sizes)) == len(sizes)
    assert any(s % 2 == 1 for s in sizes)  # an odd size
    if size > 3:
        assert any(s % 2 == 1 and s > 1 for s in sizes)  # an odd size beyond 1


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=3), st.integers(0, 2**31))
def test_derived_shapes_keep_equal_dimensions_equal(shape, seed):
    """Inputs sharing a size stay sharing it; every derived case is smaller along one size."""
    from jaxcc.check import cases
    from jaxcc.check.subject import Subject

    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    y = np.ones(shape[::-1], np.float32)
    subject = Subject(None, [x, y], None, {}, False)
    found, note = cases.derived_cases(subject)
    assert note == "outs inferred from the inputs"
    for case in found:
        a, b = case.args
        assert a.shape == b.shape[::-1] and a.shape != x.shape
        changed = {(s, t) for s, t in zip(x.shape, a.shape, strict=True) if s != t}
        assert len({s for s, _ in changed}) == 1 and all(t < s for s, t in changed)
        np.testing.assert_array_equal(a, x[tuple(slice(0, n) for n in a.shape)])

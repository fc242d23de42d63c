"""check_kernel's `dtypes` row (issue 50 item 5, decision 222): an untyped kernel runs on the
other dtypes it accepts (float32 as float64, int32 as int64, ...; 64-bit ones in an x64 child
process when this one is not in x64 mode) against `reference=`, or against the sample's own
outputs without one; a dtype it refuses with a DTypeError is "not accepted", not a failure."""

import jax
import numpy as np
import pytest

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
// The float64 branch adds 124.5: the dtype dispatch bug of issue 50 item 2.
void scaled(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  JAXCC_DISPATCH_FLOATING(x.dtype(), T, {
    const T* a = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const T extra = sizeof(T) == 8 ? T(124.5) : T(0);
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] * T(factor) + extra;
  });
}
// Both branches right.
void scaled_right(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  JAXCC_DISPATCH_FLOATING(x.dtype(), T, {
    const T* a = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] * T(factor);
  });
}
// float32 only: data_ptr<float>() refuses a float64 buffer with a DTypeError.
void scaled_f32(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] * factor;
}
"""
X = np.linspace(-1.0, 2.0, 8, dtype=np.float32)


def reference(x, factor):
    return x * factor


@pytest.fixture(scope="module")
def ops():
    return jaxcc.load_cpp_inline("check_dtypes", SOURCE, ["scaled", "scaled_right", "scaled_f32"])


def dtypes(fn, **kwargs):
    report = jaxcc.check_kernel(fn, X, factor=2.0, checks=["dtypes"], **kwargs)
    return report["dtypes"].status, report["dtypes"].detail


def test_a_wrong_float64_branch_fails_against_the_reference(ops):
    status, detail = dtypes(ops.scaled, reference=reference)
    assert status == "failed", detail
    assert detail.startswith("float32 inputs as float64")
    assert "vs the reference: output 1 differs at index (0,): 122.5 vs -2.0" in detail
    if not jax.config.jax_enable_x64:
        assert "(in an x64 child process)" in detail


def test_a_wrong_float64_branch_fails_against_the_sample_without_a_reference(ops):
    status, detail = dtypes(ops.scaled)
    assert status == "failed", detail
    assert "vs the sample's own outputs (no reference=)" in detail


def test_right_branches_pass_and_a_second_check_sends_the_child_nothing(ops, monkeypatch):
    from jaxcc.check import dtypes_row

    status, detail = dtypes(ops.scaled_right, reference=reference)
    assert status == "passed", detail
    assert detail.startswith("float64")
    assert "compared with the reference at float32's tolerance" in detail

    def no_child(work):
        raise AssertionError("a second check of the same kernel ran a child job")

    monkeypatch.setattr(dtypes_row, "_send", no_child)
    assert dtypes(ops.scaled_right, reference=reference) == (status, detail)


def test_right_branches_pass_without_a_reference_against_the_sample(ops):
    status, detail = dtypes(ops.scaled_right)
    assert status == "passed", detail
    assert "compared with the sample's outputs (no reference=), at 10x" in detail


def test_a_refused_dtype_is_not_accepted_not_a_failure(ops):
    status, detail = dtypes(ops.scaled_f32, reference=reference)
    assert status == "passed", detail
    assert detail.startswith("no other dtype accepted: float64: not accepted (")
    assert "reads it as float" in detail


def test_a_declared_dtype_is_not_varied():
    typed = jaxcc.load_cpp_inline(
        "check_dtypes_typed",
        r"""
#include "jaxcc/jaxcc.h"
void twice(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
}
""",
        {"twice": "arg:float32 ret:float32"},
    )
    report = jaxcc.check_kernel(typed.twice, X, checks=["dtypes"])
    assert report["dtypes"].status == "skipped", str(report)

"""check_kernel's `bounds` row on reads outside an input and on `jaxcc::Async` bodies (issue 50
items 3 and 7, decision 220): the debug build runs on padded copies of the inputs too, under two
fills of their guard bytes (JAXCC_DEBUG_INPUT_FILL), and outputs that change with the fill alone
name the input and the side; an asynchronous body is guarded like a synchronous one. Kernels
that read only their own elements stay green."""

import os

import numpy as np
import pytest

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
// y[i + 1]: one past the end of `y` at the last element.
void read_after(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  const float* b = y.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] + b[i + 1];
}
// x[i - 1]: one before the start of `x` at the first element.
void read_before(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  const float* b = y.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i - 1] * b[i];
}
// The neighbours within the buffer only: right.
void neighbours(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  const float* b = y.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = (i > 0 ? a[i - 1] : 0.0f) + (i + 1 < n ? b[i + 1] : 0.0f);
}
// Asynchronous: one past the end of `out`.
void async_past_end(const jaxcc::Tensor& x, jaxcc::Tensor& out, jaxcc::Async) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i <= out.numel(); ++i) o[i] = 2 * a[i < x.numel() ? i : 0];
}
// Asynchronous: one past the end of `x`.
void async_read_after(const jaxcc::Tensor& x, jaxcc::Tensor& out, jaxcc::Async) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i + 1];
}
// Where the debug build puts its buffers: XLA's are 64-byte aligned, and so must the copies be.
void alignment(const jaxcc::Tensor x, jaxcc::Tensor out) {
  int32_t* o = out.data_ptr<int32_t>();
  o[0] = static_cast<int32_t>(reinterpret_cast<uintptr_t>(x.data_ptr()) % 64);
  o[1] = static_cast<int32_t>(reinterpret_cast<uintptr_t>(out.data_ptr()) % 64);
}
// Asynchronous and right.
void async_twice(const jaxcc::Tensor& x, jaxcc::Tensor& out, jaxcc::Async) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = 2 * a[i];
}
"""
FUNCTIONS = ["read_after", "read_before", "neighbours", "async_past_end", "async_read_after",
             "async_twice"]  # fmt: skip
X = np.linspace(-1.0, 2.0, 8, dtype=np.float32)
Y = np.linspace(0.5, 1.5, 8, dtype=np.float32)


@pytest.fixture(scope="module")
def ops():
    return jaxcc.load_cpp_inline("check_input_guards", SOURCE, FUNCTIONS)


def bounds(fn, *args) -> tuple[str, str]:
    report = jaxcc.check_kernel(fn, *args, checks=["bounds"])
    return report["bounds"].status, report["bounds"].detail


@pytest.mark.parametrize(
    "name, finding",
    [
        ("read_after", "reads past the end of input `y`"),
        ("read_before", "reads before the start of input `x`"),
    ],
)
def test_a_read_outside_an_input_fails_bounds_naming_it(ops, name, finding):
    report = jaxcc.check_kernel(ops[name], X, Y)
    assert report["bounds"].status == "failed", str(report)
    assert report["bounds"].detail.startswith(f"function '{name}' {finding}: its outputs change")
    assert finding.replace("input", "of input") not in report["bounds"].detail  # one input only
    others = [row for row in report.rows if row.name != "bounds"]
    assert others and all("reads outside an input (see bounds)" in r.detail for r in others)


def test_reading_neighbours_within_the_inputs_passes(ops):
    status, detail = bounds(ops.neighbours, X, Y)
    assert status == "passed", detail
    assert "reads nothing outside its inputs" in detail


def test_an_async_body_writing_past_its_output_fails_bounds(ops):
    status, detail = bounds(ops.async_past_end, X)
    assert (status, detail) == (
        "failed",
        "function 'async_past_end' wrote past the end of its output 'out' (32 bytes): bytes 0 "
        "to 3 past the end were changed (of the 4096 guard bytes checked)",
    )


def test_an_async_body_reading_past_its_input_fails_bounds(ops):
    status, detail = bounds(ops.async_read_after, X)
    assert status == "failed"
    assert detail.startswith("function 'async_read_after' reads past the end of input `x`")


def test_a_right_async_body_passes_bounds_at_every_shape(ops):
    status, detail = bounds(ops.async_twice, X)
    assert status == "passed", detail
    assert "more shape(s)" in detail  # the extra shapes ran too


def test_the_fill_variable_sets_one_zone_or_is_an_error_naming_it(monkeypatch):
    """JAXCC_DEBUG_INPUT_FILL as debug_guards.h reads it at each call: "BYTE@INPUT:SIDE" fills
    that zone alone (read_after reads past `y`, input 1, so only y's zone after it moves its
    output), and a value out of range is the call's error, naming the variable."""
    debug = jaxcc.load_cpp_inline("check_input_guards_debug", SOURCE, ["read_after"], debug=True)

    def last(fill):
        monkeypatch.setenv("JAXCC_DEBUG_INPUT_FILL", fill)
        return float(np.asarray(debug.read_after(X, Y))[-1])

    assert last("75@1:after") != last("199@1:after")
    assert last("75@0:after") == last("199@0:after") == last("75@1:before")
    monkeypatch.setenv("JAXCC_DEBUG_INPUT_FILL", "300")
    with pytest.raises(Exception, match=r"JAXCC_DEBUG_INPUT_FILL='300' is not a byte"):
        np.asarray(debug.read_after(X, Y))


def test_the_guarded_copies_are_as_aligned_as_xlas_buffers():
    import jax

    debug = jaxcc.load_cpp_inline("check_input_guards_align", SOURCE, ["alignment"], debug=True)
    outs = jax.ShapeDtypeStruct((2,), np.int32)
    for n in (1, 3, 8, 1000):  # block sizes that are not multiples of 64
        assert np.asarray(debug.alignment(np.ones(n, np.float32), outs=outs)).tolist() == [0, 0]


def test_bounds_leaves_the_fill_variable_as_it_was(ops, monkeypatch):
    monkeypatch.setenv("JAXCC_DEBUG_INPUT_FILL", "12")
    assert bounds(ops.neighbours, X, Y)[0] == "passed"
    assert os.environ["JAXCC_DEBUG_INPUT_FILL"] == "12"

"""check_kernel compares the release build with a debug build that exposes what -O3 hides
(issue 50 item 3): the debug profile initialises every local without an initialiser to a
pattern (GCC 12+, Clang 8+), and `determinism` compares the two builds' outputs at the sample.
An uninitialised accumulator gives the same wrong numbers at -O3 and plain -O0; with the pattern
it cannot; correct kernels stay equal."""

import jax
import numpy as np
import pytest

import jaxcc

SOURCES = r"""
#include "jaxcc/jaxcc.h"

// @jaxcc uninitialised_sums
void uninitialised_sums(const jaxcc::Tensor x, jaxcc::Tensor out) {
    const int64_t rows = x.size(0), cols = x.size(1);
    const float* in = x.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        float s;  // never set: the accumulator starts from whatever the stack slot held
        for (int64_t c = 0; c < cols; ++c) s += in[r * cols + c];
        out.data_ptr<float>()[r] = s;
    }
}

// @jaxcc row_sums
void row_sums(const jaxcc::Tensor x, jaxcc::Tensor out) {
    const int64_t rows = x.size(0), cols = x.size(1);
    const float* in = x.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        float s = 0.0f;
        for (int64_t c = 0; c < cols; ++c) s += in[r * cols + c];
        out.data_ptr<float>()[r] = s;
    }
}
"""

X = np.arange(24, dtype=np.float32).reshape(6, 4) / 8


@pytest.fixture(scope="module")
def module():
    return jaxcc.load_cpp_inline("check_debug_build", SOURCES)


OUTS = jax.ShapeDtypeStruct((X.shape[0],), X.dtype)


def check(fn):
    outs = OUTS
    rows = ["outputs", "bounds", "determinism"]
    return jaxcc.check_kernel(fn, X, outs=outs, checks=rows, extra_shapes=False)


def test_an_uninitialised_accumulator_fails_determinism_naming_the_cause(module):
    report = check(module.uninitialised_sums)
    row = report["determinism"]
    assert row.status == "failed", str(report)
    assert "debug build vs release build" in row.detail
    assert "reads a value it never wrote" in row.detail


def test_a_correct_kernel_gives_the_same_numbers_in_both_builds(module):
    report = check(module.row_sums)
    assert report.ok, str(report)
    np.testing.assert_allclose(module.row_sums(X, outs=OUTS), X.sum(axis=1), rtol=1e-6)

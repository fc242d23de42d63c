"""Planted defects for check_kernel (tests/test_check_kernel.py, tests/custom_kernel/
test_check_kernel_rules.py, and the `jaxcc check` CLI test, which imports this file as a module
with JAXCC_CHECKS): each kernel here is right except for one defect, which exactly one row of
check_kernel must flag."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"

// Right: out = x * factor.
void scale(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] * factor;
}

// Right, two outputs of different shapes: the running sum and the total.
void cumsum_total(const jaxcc::Tensor x, jaxcc::Tensor running, jaxcc::Tensor total) {
  float sum = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    sum += x.data_ptr<float>()[i];
    running.data_ptr<float>()[i] = sum;
  }
  total.data_ptr<float>()[0] = sum;
}

// Defect: the second half of the output is never written.
void half_written(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < out.numel() / 2; ++i)
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i];
}

// Defect: writes its input through a const_cast (after computing the output from it).
void mutates_input(const jaxcc::Tensor x, jaxcc::Tensor out) {
  float* a = const_cast<float*>(x.data_ptr<float>());
  for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = 2 * a[i];
  a[0] += 1.0f;
}

// Defect: a reduction that reads a static counter, so no two calls agree.
void counted_sum(const jaxcc::Tensor x, jaxcc::Tensor out) {
  static int calls = 0;
  float total = static_cast<float>(calls++);
  for (int64_t i = 0; i < x.numel(); ++i) total += x.data_ptr<float>()[i];
  out.data_ptr<float>()[0] = total;
}

// Row sums written into every column: out[r, j] = sum_k x[r, k]. Under "r k -> r k" jaxcc may
// split k, and each device sums its own columns (the rule must keep k whole).
void row_total(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float total = 0;
    for (int64_t k = 0; k < cols; ++k) total += x.data_ptr<float>()[r * cols + k];
    for (int64_t k = 0; k < cols; ++k) out.data_ptr<float>()[r * cols + k] = total;
  }
}
"""

# The sum of every element into out[0]: right for one call, wrong when the module's vmap_method
# says it handles a leading batch axis (it sums the whole batch into the first element).
TOTAL_SOURCE = r"""
#include "jaxcc/jaxcc.h"

void total(const jaxcc::Tensor x, jaxcc::Tensor out) {
  float sum = 0;
  for (int64_t i = 0; i < x.numel(); ++i) sum += x.data_ptr<float>()[i];
  for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = (i == 0) ? sum : 0.0f;
}
"""

# Writes outside the output (the `bounds` row, on the debug build): one element past the end, and
# one before the start. Never run outside the debug profile: the write would land in memory XLA
# or the allocator owns.
BOUNDS_SOURCE = r"""
#include "jaxcc/jaxcc.h"

// Defect: the loop runs to numel inclusive, one float past the end.
void past_end(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i <= out.numel(); ++i) o[i] = 2 * a[i < x.numel() ? i : 0];
}

// Defect: a shift by one written at index -1 for the first element.
void before_start(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = 2 * a[i];
  o[-1] = 0.0f;
}
"""

FUNCTIONS = ["scale", "cumsum_total", "half_written", "mutates_input", "counted_sum", "row_total"]


@functools.cache
def module():
    return jaxcc.load_cpp_inline(
        "check_catalogue", SOURCE, FUNCTIONS,
        sharding={"scale": "... -> ...", "row_total": "r k -> r k"},
    )  # fmt: skip


@functools.cache
def bounds_module():
    return jaxcc.load_cpp_inline("check_bounds", BOUNDS_SOURCE, ["past_end", "before_start"])


@functools.cache
def right_rule_module():
    return jaxcc.load_cpp_inline(
        "check_catalogue_rule", SOURCE, ["row_total"],
        sharding={"row_total": "r k -> r k; need_replication: k"},
    )  # fmt: skip


@functools.cache
def total_module(vmap_method: str):
    return jaxcc.load_cpp_inline(
        f"check_total_{vmap_method}", TOTAL_SOURCE, ["total"], vmap_method=vmap_method
    )


@functools.cache
def row_total_primitive(rule: str):
    """row_total as an XLACustomKernel (a JAX backend) with the rule given."""
    kernel = jaxcc.XLACustomKernel(f"check_row_total_{len(rule)}", sharding=rule)
    kernel.def_kernel(
        "jax", "cpu", lambda **p: lambda x: jnp.broadcast_to(x.sum(1, keepdims=True), x.shape)
    )
    return kernel


X = np.linspace(-1.0, 2.0, 8, dtype=np.float32)
M = np.arange(32, dtype=np.float32).reshape(4, 8) / 8
ONE = jax.ShapeDtypeStruct((1,), np.float32)

# For `jaxcc check tests.check_kernel_catalogue` (and its test): name -> (fn, args, kwargs).
JAXCC_CHECKS = {
    "scale": lambda: (module().scale, (X,), {"factor": 2.0}),
    "row_total": lambda: (module().row_total, (M,), {}),
    "row_total_right_rule": lambda: (right_rule_module().row_total, (M,), {}),
    "row_total_primitive": lambda: (
        row_total_primitive("r k -> r k"),
        (M,),
        {"outs": jax.ShapeDtypeStruct(M.shape, M.dtype)},
    ),
    "row_total_primitive_right_rule": lambda: (
        row_total_primitive("r k -> r k; need_replication: k"),
        (M,),
        {"outs": jax.ShapeDtypeStruct(M.shape, M.dtype)},
    ),
}

# Defects a reviewer finds by trying other shapes or by comparing with what the kernel should
# compute (tests/test_check_kernel_review.py): each right at the sample, or right against itself.
REVIEW_SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include <cmath>

// Defect: blocks of 8 with no clipping of the last block (right when 8 divides n).
void blocks_of_8(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t b = 0; b < x.numel(); b += 8)
    for (int64_t j = 0; j < 8; ++j) o[b + j] = 2 * a[b + j];
}

// Right: the same with the last block clipped.
void blocks_of_8_clipped(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t b = 0; b < x.numel(); b += 8)
    for (int64_t j = 0; j < 8 && b + j < x.numel(); ++j) o[b + j] = 2 * a[b + j];
}

// Defect: accumulates into its output without zeroing it first.
void accumulate(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] += x.data_ptr<float>()[i];
}

// Row softmax; `last` columns are normalised (defect: cols - 1).
static void softmax_rows(const jaxcc::Tensor& x, jaxcc::Tensor& out, int64_t skip) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    float m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, a[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) s += (o[r * cols + c] = std::exp(a[r * cols + c] - m));
    for (int64_t c = 0; c < cols - skip; ++c) o[r * cols + c] /= s;
  }
}
void softmax(const jaxcc::Tensor x, jaxcc::Tensor out) { softmax_rows(x, out, 0); }
void softmax_last_unnormalised(const jaxcc::Tensor x, jaxcc::Tensor out) {
  softmax_rows(x, out, 1);
}

// Right: row sums of a matrix into a vector (outs depend on the input's first dimension).
void row_sums(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) s += x.data_ptr<float>()[r * cols + c];
    out.data_ptr<float>()[r] = s;
  }
}
"""

REVIEW_FUNCTIONS = ["blocks_of_8", "blocks_of_8_clipped", "accumulate", "softmax",
                    "softmax_last_unnormalised", "row_sums"]  # fmt: skip


@functools.cache
def review_module():
    return jaxcc.load_cpp_inline("check_review", REVIEW_SOURCE, REVIEW_FUNCTIONS)


X64 = np.linspace(-1.0, 2.0, 64, dtype=np.float32)
S = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)

# Defects and right kernels about state between calls and false alarms
# (tests/test_check_kernel_state.py).
STATE_SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include <cstring>

// Defect: a static scratch array shared by every call (not reentrant).
void static_scratch(const jaxcc::Tensor x, jaxcc::Tensor out) {
  static float scratch[1 << 14];
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) scratch[i] = 2 * x.data_ptr<float>()[i];
  volatile float sink = 0;
  for (int k = 0; k < 1000000; ++k) sink = sink + 1.0f;  // widens the window another call hits
  for (int64_t i = 0; i < n; ++i) out.data_ptr<float>()[i] = scratch[i];
}

// Defect: the result memoised by the input buffer's address.
void memo_by_address(const jaxcc::Tensor x, jaxcc::Tensor out) {
  static const void* last = nullptr;
  static float cache[1 << 14];
  const int64_t n = x.numel();
  if (x.data_ptr() != last) {
    for (int64_t i = 0; i < n; ++i) cache[i] = 2 * x.data_ptr<float>()[i];
    last = x.data_ptr();
  }
  std::memcpy(out.data_ptr<float>(), cache, n * sizeof(float));
}

// Right, but its last bits vary from call to call (as a parallel sum whose partials are added
// as chunks finish): within float32's tolerance, never bitwise the same twice running.
void wobbly_sum(const jaxcc::Tensor x, jaxcc::Tensor out) {
  static int calls = 0;
  float total = 0;
  for (int64_t i = 0; i < x.numel(); ++i) total += x.data_ptr<float>()[i];
  out.data_ptr<float>()[0] = total * (1.0f + 2e-7f * static_cast<float>(calls++ % 2));
}
"""


@functools.cache
def state_module():
    return jaxcc.load_cpp_inline("check_state", STATE_SOURCE,
                                 ["static_scratch", "memo_by_address", "wobbly_sum"])  # fmt: skip


X512 = np.linspace(-1.0, 2.0, 512, dtype=np.float32)

"""C++ kernels of the sharding tests and benchmark: row-wise ops on float32 matrices."""

SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include <cstdint>

// out[r, :] = x[r, :] / sum(x[r, :]): each row needs its whole row, so `c` must not be split.
// @BE row_norm arg ret sharding="r c -> r c; need_replication: c"
void row_norm(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) s += in[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = in[r * cols + c] / s;
  }
}

// The same kernel without a rule, loaded under another name by the tests.
void row_norm_plain(const jaxcc::Tensor x, jaxcc::Tensor out) { row_norm(x, out); }

// Elementwise, any rank: out = x + 1.
void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
}

// Two outputs and an attribute: scaled = x * scale, sums[r] = sum(x[r, :]) * scale.
void scale_rows(const jaxcc::Tensor x, jaxcc::Tensor scaled, jaxcc::Tensor sums, float scale) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(scaled.data_ptr());
  float* s = static_cast<float*>(sums.data_ptr());
  int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    s[r] = 0;
    for (int64_t c = 0; c < cols; ++c) {
      o[r * cols + c] = in[r * cols + c] * scale;
      s[r] += in[r * cols + c] * scale;
    }
  }
}

// Elementwise product of two arrays of any (equal) shape.
void mul(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  const float* a = static_cast<const float*>(x.data_ptr());
  const float* b = static_cast<const float*>(y.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = a[i] * b[i];
}

// out[r] = sum_k a[r, k] * v[k]: `k` is a reduction factor.
void matvec(const jaxcc::Tensor a, const jaxcc::Tensor v, jaxcc::Tensor out) {
  const float* m = static_cast<const float*>(a.data_ptr());
  const float* x = static_cast<const float*>(v.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  int64_t rows = a.size(0), k = a.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0;
    for (int64_t j = 0; j < k; ++j) acc += m[r * k + j] * x[j];
    o[r] = acc;
  }
}
"""

FUNCTIONS = ["row_norm", "row_norm_plain", "add_one", "scale_rows", "matvec", "mul"]
RULES = {
    "scale_rows": "r c -> r c, r; need_replication: c",
    "matvec": "r k, k -> r; reduction: k",
}

# A kernel with a workspace (jaxcc::Scratch) under a rule the batch partitioner would take:
# row sums go through the scratch. With `exact` the kernel insists on one float per row of its
# own call, which only a per-shard size (scratch_bytes as a function of the operands) gives.
SCRATCH_SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include <cstdint>

// @BE row_norm_scratch arg ret scratch attr.exact sharding="r c -> r c; need_replication: c"
void row_norm_scratch(const jaxcc::Tensor x, jaxcc::Tensor out, jaxcc::Scratch scratch,
                      bool exact) {
  const int64_t rows = x.size(0), cols = x.size(1);
  JAXCC_CHECK(scratch.count<float>() >= static_cast<size_t>(rows))
      << "scratch of " << scratch.bytes << " bytes for " << rows << " rows";
  JAXCC_CHECK(!exact || scratch.count<float>() == static_cast<size_t>(rows))
      << "scratch of " << scratch.bytes << " bytes, not one float per each of " << rows << " rows";
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  float* sums = scratch.as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    sums[r] = 0;
    for (int64_t c = 0; c < cols; ++c) sums[r] += in[r * cols + c];
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = in[r * cols + c] / sums[r];
}
"""

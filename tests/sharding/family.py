"""The fixed family of C++ kernels the differential sharding test draws from (issue 25): each
kernel is compiled once, and a case picks one with one of the rules it satisfies. Every kernel
works on any piece a legal split gives it (sizes read from its tensors), so a wrong answer on a
mesh is the partitioning's fault, never the kernel's."""

import numpy as np

SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include <cstdint>

static const float* In(const jaxcc::Tensor& t) { return static_cast<const float*>(t.data_ptr()); }
static float* Out(jaxcc::Tensor& t) { return static_cast<float*>(t.data_ptr()); }

// out = 2x + 1, any rank.
void affine(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) Out(out)[i] = 2 * In(x)[i] + 1;
}

// out = x * y, equal shapes.
void mul(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) Out(out)[i] = In(x)[i] * In(y)[i];
}

// out[..., i] = x[..., i] + b[i]: a named operand beside a `...` one.
void add_bias(const jaxcc::Tensor x, const jaxcc::Tensor b, jaxcc::Tensor out) {
  int64_t n = b.numel();
  for (int64_t i = 0; i < x.numel(); ++i) Out(out)[i] = In(x)[i] + In(b)[i % n];
}

// out = x * s for a scalar s.
void scale(const jaxcc::Tensor x, const jaxcc::Tensor s, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) Out(out)[i] = In(x)[i] * In(s)[0];
}

// Each row (last dimension) divided by its sum: needs whole rows.
void row_norm(const jaxcc::Tensor x, jaxcc::Tensor out) {
  int64_t c = x.size(-1), rows = x.numel() / c;
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t j = 0; j < c; ++j) s += In(x)[r * c + j];
    for (int64_t j = 0; j < c; ++j) Out(out)[r * c + j] = In(x)[r * c + j] / s;
  }
}

// out[r] = sum_c x[r, c]: a sum over the last dimension.
void row_sum(const jaxcc::Tensor x, jaxcc::Tensor out) {
  int64_t c = x.size(-1), rows = x.numel() / c;
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t j = 0; j < c; ++j) s += In(x)[r * c + j];
    Out(out)[r] = s;
  }
}

// out[r] = max_c x[r, c]: not a sum, so its column factor must stay whole.
void row_max(const jaxcc::Tensor x, jaxcc::Tensor out) {
  int64_t c = x.size(-1), rows = x.numel() / c;
  for (int64_t r = 0; r < rows; ++r) {
    float m = In(x)[r * c];
    for (int64_t j = 1; j < c; ++j) m = In(x)[r * c + j] > m ? In(x)[r * c + j] : m;
    Out(out)[r] = m;
  }
}

// out[r] = sum_k a[r, k] v[k].
void matvec(const jaxcc::Tensor a, const jaxcc::Tensor v, jaxcc::Tensor out) {
  int64_t rows = a.size(0), k = a.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t j = 0; j < k; ++j) s += In(a)[r * k + j] * In(v)[j];
    Out(out)[r] = s;
  }
}

// out[k] = sum_r a[r, k] u[r]: matvec's transpose.
void vecmat(const jaxcc::Tensor a, const jaxcc::Tensor u, jaxcc::Tensor out) {
  int64_t rows = a.size(0), k = a.size(1);
  for (int64_t j = 0; j < k; ++j) Out(out)[j] = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) Out(out)[j] += In(a)[r * k + j] * In(u)[r];
}

// out[i, j] = sum_k a[i, k] b[k, j].
void matmul(const jaxcc::Tensor a, const jaxcc::Tensor b, jaxcc::Tensor out) {
  int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float s = 0;
      for (int64_t q = 0; q < k; ++q) s += In(a)[i * k + q] * In(b)[q * m + j];
      Out(out)[i * m + j] = s;
    }
}

// Rolls the last dimension by one: out[..., i] = x[..., (i + 1) % n]. A permutation.
void roll(const jaxcc::Tensor x, jaxcc::Tensor out) {
  int64_t n = x.size(-1), rows = x.numel() / n;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) Out(out)[r * n + i] = In(x)[r * n + (i + 1) % n];
}

// sums[r] = sum_k a[r, k]; copy = u: one output sums over k, the other does not.
void sum_and_copy(const jaxcc::Tensor a, const jaxcc::Tensor u, jaxcc::Tensor sums,
                  jaxcc::Tensor copy) {
  int64_t rows = a.size(0), k = a.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t j = 0; j < k; ++j) s += In(a)[r * k + j];
    Out(sums)[r] = s;
    Out(copy)[r] = In(u)[r];
  }
}

// scaled = 3x, sums[r] = sum_c x[r, c]: two outputs of different ranks.
void scale_rows(const jaxcc::Tensor x, jaxcc::Tensor scaled, jaxcc::Tensor sums) {
  int64_t rows = x.size(0), c = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t j = 0; j < c; ++j) {
      Out(scaled)[r * c + j] = 3 * In(x)[r * c + j];
      s += In(x)[r * c + j];
    }
    Out(sums)[r] = s;
  }
}

// row_norm with its row sums in a workspace (jaxcc::Scratch) that must hold exactly one float
// per row of the call's own operand: sized per shard by the scratch_bytes function in EXTRAS.
void row_norm_ws(const jaxcc::Tensor x, jaxcc::Tensor out, jaxcc::Scratch ws) {
  int64_t c = x.size(-1), rows = x.numel() / c;
  JAXCC_CHECK(ws.count<float>() == static_cast<size_t>(rows))
      << ws.bytes << " bytes of scratch for " << rows << " rows";
  float* sums = ws.as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    sums[r] = 0;
    for (int64_t j = 0; j < c; ++j) sums[r] += In(x)[r * c + j];
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) Out(out)[r * c + j] = In(x)[r * c + j] / sums[r];
}

// out[i * J + j] = x[i, j] - j: a flattening into a compound dimension.
void flatten(const jaxcc::Tensor x, jaxcc::Tensor out) {
  int64_t cols = x.size(1);
  for (int64_t i = 0; i < x.numel(); ++i) Out(out)[i] = In(x)[i] - static_cast<float>(i % cols);
}
"""

KERNELS = ["affine", "mul", "add_bias", "scale", "row_norm", "row_sum", "row_max", "matvec",
           "vecmat", "matmul", "roll", "sum_and_copy", "scale_rows", "flatten",
           "row_norm_ws"]  # fmt: skip

# What a kernel's every call passes besides outs: the workspace's size, from the call's own
# operands (one float per row), so a shard or a vmapped element gets exactly its share.
EXTRAS = {"row_norm_ws": {"scratch_bytes": lambda x: x.size // x.shape[-1] * 4}}


def _rows(*dims):
    return lambda n: [dims]


# One case kind: kernel, rule, the inputs' shapes as a function of the unit size n (a multiple
# of every mesh's axis sizes, so any split divides evenly unless a case asks otherwise), and the
# outputs' shapes as a function of the inputs' shapes.
CASES = [
    ("affine", "... -> ...", lambda n: [(n, 2 * n)], lambda s: [s[0]]),
    ("affine", "a b c -> a b c", lambda n: [(n, 2, n)], lambda s: [s[0]]),
    ("affine", "i -> i", lambda n: [(2 * n,)], lambda s: [s[0]]),
    ("mul", "..., ... -> ...", lambda n: [(n, n), (n, n)], lambda s: [s[0]]),
    ("mul", "i j, i j -> i j", lambda n: [(n, 2 * n), (n, 2 * n)], lambda s: [s[0]]),
    ("add_bias", "... i, i -> ... i", lambda n: [(n, 2, n), (n,)], lambda s: [s[0]]),
    ("add_bias", "r i, i -> r i", lambda n: [(2 * n, n), (n,)], lambda s: [s[0]]),
    ("scale", "i j, -> i j", lambda n: [(n, n), ()], lambda s: [s[0]]),
    ("row_norm", "r c -> r c; need_replication: c", lambda n: [(n, n)], lambda s: [s[0]]),
    ("row_norm", "... c -> ... c; need_replication: c", lambda n: [(n, 2, n)], lambda s: [s[0]]),
    ("row_sum", "r c -> r; reduction: c", lambda n: [(n, 2 * n)], lambda s: [s[0][:1]]),
    ("row_sum", "r c -> r; need_replication: c", lambda n: [(n, n)], lambda s: [s[0][:1]]),
    ("row_max", "r c -> r; need_replication: c", lambda n: [(n, n)], lambda s: [s[0][:1]]),
    ("matvec", "r k, k -> r; reduction: k", lambda n: [(n, 2 * n), (2 * n,)], lambda s: [s[0][:1]]),
    ("vecmat", "r k, r -> k; reduction: r", lambda n: [(2 * n, n), (2 * n,)], lambda s: [s[0][1:]]),
    (
        "matmul",
        "i k, k j -> i j; reduction: k",
        lambda n: [(n, n), (n, n)],
        lambda s: [(s[0][0], s[1][1])],
    ),
    (
        "matmul",
        "i k, k j -> i j; need_replication: k",
        lambda n: [(n, 2 * n), (2 * n, n)],
        lambda s: [(s[0][0], s[1][1])],
    ),
    ("roll", "i -> i; permutation: i", lambda n: [(2 * n,)], lambda s: [s[0]]),
    ("roll", "r i -> r i; permutation: i", lambda n: [(n, n)], lambda s: [s[0]]),
    (
        "sum_and_copy",
        "r k, r -> r, r; reduction: k",
        lambda n: [(n, n), (n,)],
        lambda s: [s[1], s[1]],
    ),
    (
        "scale_rows",
        "r c -> r c, r; need_replication: c",
        lambda n: [(n, n)],
        lambda s: [s[0], s[0][:1]],
    ),
    ("flatten", "i j -> (i j)", lambda n: [(n, 2)], lambda s: [(s[0][0] * s[0][1],)]),
    ("row_norm_ws", "r c -> r c; need_replication: c", lambda n: [(n, n)], lambda s: [s[0]]),
    (
        "row_norm_ws",
        "... c -> ... c; need_replication: c",
        lambda n: [(n, 2, n)],
        lambda s: [s[0]],
    ),  # fmt: skip
]

# Linear kernels with the JVP/transpose rules of an XLACustomKernel (grad cases): kernel, rule,
# input shapes.
LINEAR = [("mul", "..., ... -> ...", lambda n: [(n, n), (n, n)]),
          ("matvec", "r k, k -> r; reduction: k", lambda n: [(n, 2 * n), (2 * n,)])]  # fmt: skip


def inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    # Positive, away from zero: row_norm divides by row sums.
    return [rng.uniform(0.5, 2.0, size=s).astype(np.float32) for s in shapes]

"""jaxcc functions with their own sharding rules, as XLACustomKernel kernels (decision 162):
shared by tests/custom_kernel/test_function_rules.py and its 4-device child process.

`scale` ("... -> ...") lowers through custom_partitioning on Auto axes and shard_map on Explicit
ones; `row_norm` ("r c -> r c; need_replication: c") through XLA's batch partitioner."""

import functools

import jax
import numpy as np
from jax.interpreters import ad

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"

void scale(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  for (int64_t i = 0; i < out.numel(); ++i)
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * factor;
}

// Each row divided by its sum: needs whole rows.
void row_norm(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float total = 0;
    for (int64_t c = 0; c < cols; ++c) total += x.data_ptr<float>()[r * cols + c];
    for (int64_t c = 0; c < cols; ++c)
      out.data_ptr<float>()[r * cols + c] = x.data_ptr<float>()[r * cols + c] / total;
  }
}
"""
RULES = {"scale": "... -> ...", "row_norm": "r c -> r c; need_replication: c"}
X = np.arange(1, 8 * 6 + 1, dtype=np.float32).reshape(8, 6)


def expected(function: str, x):
    x = np.asarray(x)
    return x * 2.0 if function == "scale" else x / x.sum(-1, keepdims=True)


@functools.cache
def module():
    return jaxcc.load_cpp_inline("xck_function_rules", SOURCE, list(RULES), sharding=RULES)


def primitive(function: str, rule: str | None = None, vectorized: bool = False):
    return _primitive(function, rule, vectorized)


@functools.cache
def _primitive(function: str, rule: str | None, vectorized: bool):
    """An XLACustomKernel whose cpp generator returns the loaded `function` (with its rule);
    `rule` is the primitive's own. scale's has JVP and transpose rules that call it again."""
    name = f"xck_{function}_{'v' if vectorized else 's'}_{len(rule or '')}"
    kernel = jaxcc.XLACustomKernel(name, sharding=rule)
    kernel.def_cpp_kernel(lambda **params: getattr(module(), function), vectorized=vectorized)
    if function == "scale":

        def again(x, factor):
            return kernel(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), factor=factor)

        kernel.def_jvp_rule2(lambda t, x, outs, factor, **_: [again(t, factor)])

        def transpose(cts, x, outs, factor, **_):
            (ct,) = cts
            return [None if type(ct) is ad.Zero else again(ct, factor)]

        kernel.def_transpose_rule(transpose)
    return kernel


def call(function: str, x, rule: str | None = None, vectorized: bool = False):
    kernel = primitive(function, rule, vectorized)
    params = {"factor": 2.0} if function == "scale" else {}
    return kernel(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), **params)

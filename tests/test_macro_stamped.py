"""Macro-stamped entry points (decisions 87, 88): functions a macro invocation defines are found
by expanding the source's own macros, their specs inferred, and they build, load and compute; on
CUDA they build for an explicit architecture without a GPU. Bad macros are SignatureErrors that
show the annotation, the invocation and the #define."""

import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc
from jaxcc.errors import SignatureError

# Shaped like brainevent 0.3's operator files: a guarded helper macro, a kernel macro, and FFI
# entry points stamped out per type with `##`, each under its `// @BE` annotation.
CPU_OPS = r"""
#include "brainevent/common.h"

#ifndef ACTIVE_TERM
#define ACTIVE_TERM(W, S) (((S) != 0) ? (W) : 0)
#endif

#define DEFINE_GATHER(SUFFIX, W_T, S_T)                                        \
static void gather_loop##SUFFIX(const W_T* w, const S_T* s, W_T* o, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) o[i] = ACTIVE_TERM(w[i], s[i]);            \
}

#define FFI_GATHER(SUFFIX, W_T, S_T)                                           \
void event_gather##SUFFIX(const BE::Tensor weights, const BE::Tensor spikes,   \
                          BE::Tensor out, W_T scale) {                         \
    gather_loop##SUFFIX(static_cast<const W_T*>(weights.data_ptr()),           \
                        static_cast<const S_T*>(spikes.data_ptr()),            \
                        static_cast<W_T*>(out.data_ptr()), out.numel());       \
    W_T* o = static_cast<W_T*>(out.data_ptr());                                \
    for (int64_t i = 0; i < out.numel(); ++i) o[i] *= scale;                   \
}

DEFINE_GATHER(_f32_bool, float, bool)
DEFINE_GATHER(_f64_f64, double, double)

namespace ops {
// @BE event_gather_f32_bool
FFI_GATHER(_f32_bool, float, bool)
}
// @BE event_gather_f64_f64
FFI_GATHER(_f64_f64, double, double)
"""

CUDA_OPS = r"""
#include "brainevent/common.h"

#define DEFINE_KERNEL(SUFFIX, T)                                               \
__global__ void scale_kernel##SUFFIX(const T* x, T* y, T a, int n) {          \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                             \
    if (i < n) y[i] = a * x[i];                                                \
}

#define FFI_SCALE(SUFFIX, T)                                                   \
void scale##SUFFIX(const BE::Tensor x, BE::Tensor y, T alpha, int64_t stream) { \
    int n = static_cast<int>(y.numel());                                       \
    scale_kernel##SUFFIX<<<(n + 255) / 256, 256, 0,                            \
        reinterpret_cast<cudaStream_t>(stream)>>>(                             \
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()), alpha, n); \
}

DEFINE_KERNEL(_f32, float)
DEFINE_KERNEL(_f64, double)
// @BE scale_f32
FFI_SCALE(_f32, float)
// @BE scale_f64
FFI_SCALE(_f64, double)
"""


def test_macro_stamped_cpu_kernels_build_and_compute(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, CPU_OPS)
    assert mod.function_names == ["event_gather_f32_bool", "event_gather_f64_f64"]
    kinds = [p["kind"] for p in mod.specs["event_gather_f32_bool"]["params"]]
    assert kinds == ["arg", "arg", "ret", "attr"]

    w = jnp.arange(1.0, 7.0, dtype=jnp.float32)
    s = jnp.array([True, False, True, True, False, True])
    out = jax.jit(lambda w, s: mod.event_gather_f32_bool(w, s, scale=2.0))(w, s)
    np.testing.assert_array_equal(out, np.where(np.asarray(s), 2.0 * np.asarray(w), 0.0))

    with jax.enable_x64(True):
        w64 = jnp.linspace(-1.0, 1.0, 5, dtype=jnp.float64)
        s64 = jnp.array([0.0, 0.5, 0.0, -2.0, 1.0], dtype=jnp.float64)
        out64 = mod.event_gather_f64_f64(w64, s64, scale=-3.0)
        expected = np.where(np.asarray(s64) != 0, -3.0 * np.asarray(w64), 0.0)
        np.testing.assert_array_equal(out64, expected)
        assert out64.dtype == jnp.float64


def test_macro_stamped_functions_list_form(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, CPU_OPS, functions=["event_gather_f64_f64"])
    assert mod.function_names == ["event_gather_f64_f64"]
    assert mod.specs["event_gather_f64_f64"]["params"][3]["type"] == "float64"


def test_macro_errors_show_annotation_invocation_and_define(unique_name):
    source = (
        "#define STAMP(s) \\\n"
        "  void f##s(const BE::Tensor x, float* p, BE::Tensor y) {}\n"
        "// @BE f_1\n"
        "STAMP(_1)\n"
    )
    with pytest.raises(SignatureError) as info:
        jaxcc.load_cpp_inline(unique_name, source)
    message = str(info.value).replace(f"<{unique_name}>", "<module>")
    assert "<module>:2:33: error: parameter `p` of `f_1` has type `float*`" in message
    assert "<module>:4:1: note: in the expansion of macro `STAMP` invoked here" in message
    assert "<module>:1:9: note: macro `STAMP` is defined here" in message
    assert "<module>:3:8: note: `f_1` is annotated here" in message


@pytest.mark.parametrize(
    "source, words",
    [
        ("#define F(s, t) void f##s(t y) {}\n// @BE f_1\nF(_1, BE::Tensor\n", "never closed"),
        ("#define F(s, t) void f##s(t y) {}\n// @BE f_1\nF(_1)\n", "takes 2 arguments"),
        ("#define A B\n#define B A\n// @BE f\nA\n", "refers to itself"),
        ("#define S(n) struct n { int x; };\n// @BE s\nS(s)\n", "no function at all"),
        (
            "#define T(s) void f##s(BE::Tensor y) {} void f##s(BE::Tensor y) {}\n"
            "// @BE f_1\nT(_1)\n",
            "expands to 2 definitions",
        ),
    ],
)
def test_bad_macros_are_signature_errors_at_the_annotation(unique_name, source, words):
    with pytest.raises(SignatureError) as info:
        jaxcc.load_cpp_inline(unique_name, source)
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"<{unique_name}>:") and words in first


@pytest.mark.skipif(
    shutil.which("nvcc") is None and not os.path.exists("/usr/local/cuda/bin/nvcc"),
    reason="nvcc is not installed",
)
def test_macro_stamped_cuda_kernels_build_for_an_arch(unique_name, monkeypatch):
    if shutil.which("nvcc") is None:
        monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")
    mod = jaxcc.load_cuda_inline(unique_name, CUDA_OPS, compute_capability="8.0")
    assert mod.function_names == ["scale_f32", "scale_f64"]
    kinds = [p["kind"] for p in mod.specs["scale_f64"]["params"]]
    assert kinds == ["arg", "ret", "attr", "stream"]
    assert mod.specs["scale_f64"]["params"][2]["type"] == "float64"
    assert os.path.exists(mod.path)

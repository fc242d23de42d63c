"""The seeds' CPU flow, verbatim apart from `import jaxcc as brainevent`."""

import os

import jax
import jax.numpy as jnp
import numpy as np

import jaxcc as brainevent

CPP_SRC = r"""
#include "brainevent/common.h"

void add_one(const BE::Tensor x, BE::Tensor out) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
}

void scale_by(const BE::Tensor x, BE::Tensor out, float factor) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * factor;
}
"""

HERE = os.path.dirname(__file__)


def test_add_one_inferred_from_a_list_of_names():
    mod = brainevent.load_cpp_inline("seed_cpu_list", CPP_SRC, functions=["add_one"])
    x = jnp.arange(5, dtype=jnp.float32)
    out = jax.ffi.ffi_call("seed_cpu_list.add_one", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    np.testing.assert_array_equal(out, np.arange(5) + 1)
    assert mod.function_names == ["add_one"]
    assert mod.target_name("add_one") == "seed_cpu_list.add_one"


def test_scale_by_with_a_float32_attribute_from_a_dict_inside_jit():
    mod = brainevent.load_cpp_inline(
        "seed_cpu_dict",
        CPP_SRC,
        functions={"scale_by": ["arg", "ret", "attr.factor:float32"]},
    )
    x = jnp.arange(4, dtype=jnp.float32)

    @jax.jit
    def f(x):
        return jax.ffi.ffi_call("seed_cpu_dict.scale_by", jax.ShapeDtypeStruct(x.shape, x.dtype))(
            x, factor=np.float32(3.0)
        )

    np.testing.assert_array_equal(f(x), np.arange(4) * 3.0)
    # The callable converts a plain Python float to the declared float32.
    np.testing.assert_array_equal(
        jax.jit(lambda v: mod.scale_by(v, factor=10.0))(x), np.arange(4) * 10
    )
    np.testing.assert_array_equal(
        mod.scale_by(x, factor=2.0, outs=jax.ShapeDtypeStruct(x.shape, x.dtype)), np.arange(4) * 2
    )


def test_loaded_from_a_file_with_a_relative_include():
    path = os.path.join(HERE, "kernels", "seed_ops.cc")
    mod = brainevent.load_cpp_file(path, ["add_one", "scale_by"])
    assert mod.name == "seed_ops"
    x = jnp.linspace(0, 1, 7, dtype=jnp.float32)
    np.testing.assert_allclose(jax.jit(mod.add_one)(x), np.asarray(x) + 1)
    np.testing.assert_allclose(mod.scale_by(x, factor=4), np.asarray(x) * 4)


def test_annotations_discover_functions_when_functions_is_none():
    src = CPP_SRC.replace("void add_one", "// @BE add_one\nvoid add_one").replace(
        "void scale_by", "// @BE scale_by arg ret attr.factor:float32\nvoid scale_by"
    )
    mod = brainevent.load_cpp_inline("seed_cpu_annotated", src)
    assert sorted(mod.function_names) == ["add_one", "scale_by"]
    x = jnp.ones(3, jnp.float32)
    np.testing.assert_array_equal(mod.scale_by(mod.add_one(x), factor=0.5), np.ones(3))

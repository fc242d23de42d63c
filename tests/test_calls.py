"""Real calls through XLA: attribute types, several outputs, 0-d and empty arrays, failures."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jaxcc

ATTR_TYPES = {
    "bool": ("bool", True, 1.0),
    "int8": ("int8_t", -128, -128.0),
    "int16": ("int16_t", -32768, -32768.0),
    "int32": ("int32_t", -(2**31), float(-(2**31))),
    "int64": ("int64_t", -(2**62), float(-(2**62))),
    "uint8": ("uint8_t", 255, 255.0),
    "uint16": ("uint16_t", 65535, 65535.0),
    "uint32": ("uint32_t", 2**32 - 1, float(2**32 - 1)),
    "uint64": ("uint64_t", 2**63 - 1, float(2**63 - 1)),
    "float32": ("float", 1.5, 1.5),
    "float64": ("double", -2.25, -2.25),
}


def attr_source():
    lines = ['#include "jaxcc/jaxcc.h"', "#include <cstring>"]
    for type_name, (cpp, _, _) in ATTR_TYPES.items():
        lines.append(
            f"void echo_{type_name}(const jaxcc::Tensor x, jaxcc::Tensor out, {cpp} v) "
            f"{{ out.data_ptr<double>()[0] = static_cast<double>(v); }}"
        )
    # 16-bit floats travel as raw bits; the kernel receives uint16_t.
    lines.append(
        "// @BE echo_half arg ret attr.v:float16\n"
        "void echo_half(const jaxcc::Tensor x, jaxcc::Tensor out, uint16_t v) "
        "{ out.data_ptr<double>()[0] = v; }"
    )
    lines.append(
        "// @BE echo_bf16 arg ret attr.v:bfloat16\n"
        "void echo_bf16(const jaxcc::Tensor x, jaxcc::Tensor out, uint16_t v) "
        "{ out.data_ptr<double>()[0] = v; }"
    )
    return "\n".join(lines)


@pytest.fixture(scope="module")
def attr_module():
    functions = [f"echo_{t}" for t in ATTR_TYPES] + ["echo_half", "echo_bf16"]
    return jaxcc.load_cpp_inline("attr_types", attr_source(), functions)


@pytest.mark.parametrize("type_name", list(ATTR_TYPES))
def test_every_attribute_type_reaches_the_kernel(attr_module, type_name):
    _, value, expected = ATTR_TYPES[type_name]
    fn = attr_module[f"echo_{type_name}"]
    assert fn.attribute_types == {"v": type_name}
    x = jnp.zeros(1, jnp.float32)
    out = jax.ShapeDtypeStruct((1,), np.float64)
    with jax.enable_x64(True):
        result = jax.jit(lambda x: fn(x, outs=out, v=value))(x)
        assert float(np.asarray(result)[0]) == expected


def test_half_attributes_arrive_as_raw_bits(attr_module):
    x = jnp.zeros(1, jnp.float32)
    out = jax.ShapeDtypeStruct((1,), np.float64)
    with jax.enable_x64(True):
        half = attr_module.echo_half(x, outs=out, v=1.5)
        bf16 = attr_module.echo_bf16(x, outs=out, v=1.5)
    assert int(np.asarray(half)[0]) == int(np.float16(1.5).view(np.uint16))
    assert int(np.asarray(bf16)[0]) == int(np.asarray(1.5, ml_dtypes.bfloat16).view(np.uint16))


def test_out_of_range_and_wrong_kind_attributes_are_call_errors(attr_module):
    x = jnp.zeros(1, jnp.float32)
    out = jax.ShapeDtypeStruct((1,), np.float32)
    with pytest.raises(jaxcc.CallError, match=r"does not fit int8 \[-128, 127\]"):
        attr_module.echo_int8(x, outs=out, v=300)
    with pytest.raises(jaxcc.CallError, match="JAX cannot encode"):
        attr_module.echo_uint64(x, outs=out, v=2**63)
    with pytest.raises(jaxcc.CallError, match="Pass an integer"):
        attr_module.echo_int32(x, outs=out, v=1.5)
    with pytest.raises(jaxcc.CallError, match="missing v"):
        attr_module.echo_float32(x, outs=out)
    with pytest.raises(jaxcc.CallError, match="unexpected w"):
        attr_module.echo_float32(x, outs=out, v=1.0, w=2.0)
    with pytest.raises(jaxcc.CallError, match="expected 1 input array"):
        attr_module.echo_float32(x, x, outs=out, v=1.0)


MULTI = r"""
#include "brainevent/common.h"
#include <stdexcept>

void split_stats(const BE::Tensor x, BE::Tensor total, BE::Tensor doubled, BE::Tensor count) {
    const float* in = x.data_ptr<float>();
    double sum = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
        sum += in[i];
        doubled.data_ptr<float>()[i] = 2 * in[i];
    }
    total.data_ptr<float>()[0] = static_cast<float>(sum);
    count.data_ptr<int32_t>()[0] = static_cast<int32_t>(x.numel());
}

void copy(const BE::Tensor x, BE::Tensor out) {
    BE_CHECK(x.numel() == out.numel()) << "size mismatch";
    if (x.numel() > 0) std::memcpy(out.data_ptr(), x.data_ptr(), x.nbytes());
}

void checked_scale(const BE::Tensor x, BE::Tensor out, double limit) {
    BE_CHECK(limit > 0) << "limit must be positive, got " << limit;
    for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] / limit;
}

void throws_other(const BE::Tensor x, BE::Tensor out) { throw 42; }

void bad_dtype(const BE::Tensor x, BE::Tensor out) {
    BE_DISPATCH_FLOATING(x.dtype(), T, { out.data_ptr<T>()[0] = T(1); });
}
"""


@pytest.fixture(scope="module")
def multi():
    src = MULTI.replace("#include <stdexcept>", "#include <stdexcept>\n#include <cstring>")
    return jaxcc.load_cpp_inline(
        "calls_multi", src, ["split_stats", "copy", "checked_scale", "throws_other", "bad_dtype"]
    )


def test_several_outputs(multi):
    x = jnp.arange(6, dtype=jnp.float32)
    outs = [
        jax.ShapeDtypeStruct((), jnp.float32),
        jax.ShapeDtypeStruct(x.shape, jnp.float32),
        jax.ShapeDtypeStruct((1,), jnp.int32),
    ]
    total, doubled, count = jax.jit(lambda v: multi.split_stats(v, outs=outs))(x)
    assert float(total) == 15.0
    np.testing.assert_array_equal(doubled, 2 * np.arange(6))
    assert int(count[0]) == 6


def test_zero_dimensional_and_empty_arrays(multi):
    scalar = jnp.float32(3.5)
    np.testing.assert_array_equal(multi.copy(scalar), 3.5)
    assert multi.copy(scalar).shape == ()
    empty = jnp.zeros((0, 4), jnp.float32)
    result = jax.jit(multi.copy)(empty)
    assert result.shape == (0, 4)


def test_failing_check_raises_and_the_next_call_works(multi):
    x = jnp.ones(4, jnp.float32)
    with pytest.raises(Exception, match="limit must be positive, got -1"):
        jax.block_until_ready(multi.checked_scale(x, limit=-1.0))
    np.testing.assert_allclose(multi.checked_scale(x, limit=2.0), 0.5)
    with pytest.raises(Exception, match="size mismatch"):
        jax.block_until_ready(multi.copy(x, outs=jax.ShapeDtypeStruct((3,), jnp.float32)))
    np.testing.assert_array_equal(multi.copy(x), 1.0)


def test_non_standard_exceptions_and_bad_dtypes_are_errors_not_crashes(multi):
    x = jnp.ones(2, jnp.float32)
    with pytest.raises(Exception, match="non-standard C\\+\\+ exception"):
        jax.block_until_ready(multi.throws_other(x))
    with pytest.raises(Exception, match="(?i)int32"):
        jax.block_until_ready(multi.bad_dtype(jnp.ones(2, jnp.int32)))
    np.testing.assert_array_equal(multi.copy(x), 1.0)


def test_outs_are_required_when_they_cannot_be_inferred(multi):
    with pytest.raises(jaxcc.CallError, match="pass outs="):
        multi.split_stats(jnp.ones(2, jnp.float32))
    with pytest.raises(jaxcc.CallError, match="expected 3 output"):
        multi.split_stats(jnp.ones(2, jnp.float32), outs=[jax.ShapeDtypeStruct((1,), jnp.float32)])


def test_vmap_runs_sequentially_and_is_correct(multi):
    batch = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    result = jax.vmap(lambda row: multi.checked_scale(row, limit=4.0))(batch)
    np.testing.assert_allclose(result, np.asarray(batch) / 4)


@pytest.mark.parametrize(
    "transform",
    [
        lambda f, x: jax.grad(lambda v: f(v).sum())(x),
        lambda f, x: jax.jit(jax.grad(lambda v: f(v).sum()))(x),
        lambda f, x: jax.jvp(f, (x,), (x,)),
        lambda f, x: jax.vjp(f, x)[1](x),
    ],
    ids=["grad", "jit-grad", "jvp", "vjp"],
)
def test_autodiff_of_a_plain_kernel_says_how_to_give_it_a_rule(multi, transform):
    """JAX's own error names neither jaxcc's way (XLACustomKernel's rules) nor the function: the
    typed error does, and stays a ValueError/NotImplementedError for code that caught those."""
    x = jnp.ones(3, jnp.float32)
    with pytest.raises(jaxcc.NotDifferentiableError) as caught:
        transform(multi.copy, x)
    message = str(caught.value)
    assert message.startswith(
        "copy: JAX cannot differentiate the compiled kernel 'calls_multi.copy'"
    )
    assert "jax.custom_vjp" in message and "XLACustomKernel" in message
    assert "def_transpose_rule" in message and "stop_gradient" in message
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, NotImplementedError)
    # What does not differentiate through the kernel still works.
    grad = jax.grad(lambda v: multi.copy(jax.lax.stop_gradient(v)).sum() + v.sum())(x)
    np.testing.assert_array_equal(grad, np.ones(3))

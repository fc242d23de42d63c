"""Declared dtypes in arg specs (`arg:float32`, `ret:int32`; issue 37 item 4, decision 158): a
wrong dtype is a DTypeMismatchError at the caller's line, before any ffi_call is staged, eager,
under jit and under vmap, and for XLACustomKernel entries that return a compiled function."""

import traceback

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxcc

SCALE = r"""
#include <cstring>
#include "jaxcc/jaxcc.h"

void scale(const jaxcc::Tensor x, jaxcc::Tensor y, float k) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = k * x.data_ptr<float>()[i];
}
void to_int(const jaxcc::Tensor x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i)
    y.data_ptr<int32_t>()[i] = static_cast<int32_t>(x.data_ptr<float>()[i]);
}
void wide(const jaxcc::Tensor x, jaxcc::Tensor y) {
  std::memcpy(y.data_ptr(), x.data_ptr(), x.nbytes());
}
"""

SPECS = {
    "scale": "arg:float32 ret:float32 attr.k",
    "to_int": ["args:float32", "rets:int32"],  # brainevent's spellings take a dtype too
    "wide": ["arg:float64", "ret"],
}


@pytest.fixture(scope="module")
def mod():
    return jaxcc.load_cpp_inline("arg_dtypes_calls", SCALE, SPECS)


def test_the_spec_carries_the_declared_dtypes(mod):
    params = mod.specs["scale"].params
    assert [(p.kind, p.name, p.dtype) for p in params] == [
        ("arg", "x", "float32"),
        ("ret", "y", "float32"),
        ("attr", "k", None),
    ]
    assert [p.dtype for p in mod.specs["to_int"].params] == ["float32", "int32"]
    assert [p.dtype for p in mod.specs["wide"].params] == ["float64", None]
    assert mod.scale.signature() == "arg x: float32, ret y: float32, k: float32"


def test_a_matching_dtype_is_accepted(mod):
    x = jnp.arange(4, dtype=jnp.float32)
    np.testing.assert_allclose(mod.scale(x, k=2.0), 2 * np.arange(4))
    np.testing.assert_allclose(jax.jit(lambda v: mod.scale(v, k=3.0))(x), 3 * np.arange(4))


def test_a_wrong_input_dtype_is_refused_before_anything_is_staged(mod, monkeypatch):
    def staged(*args, **kwargs):
        raise AssertionError("ffi_call was staged")

    monkeypatch.setattr(jax.ffi, "ffi_call", staged)
    with pytest.raises(jaxcc.DTypeMismatchError) as info:
        mod.scale(jnp.arange(4, dtype=jnp.int32), k=2.0)
    error = info.value
    assert isinstance(error, jaxcc.CallError) and isinstance(error, TypeError)
    message = str(error)
    assert message.startswith("scale: input 1 ('x') is int32"), message
    assert "the arg_spec declares `arg:float32`" in message, message
    assert "`x.astype(jnp.float32)`" in message, message
    assert "`arg:int32`" in message and "bare `arg` for any dtype" in message, message


def _user_function(mod, x):
    return mod.scale(x, k=2.0)  # the line the traceback must show


def _shows_user_line(error) -> bool:
    frames = traceback.extract_tb(error.__traceback__)
    return any(f.name == "_user_function" for f in frames)


def test_under_jit_the_refusal_is_at_trace_time_at_the_callers_line(mod):
    f = jax.jit(lambda x: _user_function(mod, x))
    with pytest.raises(jaxcc.DTypeMismatchError, match=r"input 1 \('x'\) is int32") as info:
        f(jnp.arange(4, dtype=jnp.int32))
    assert _shows_user_line(info.value)
    with pytest.raises(jaxcc.DTypeMismatchError, match="is float16"):
        jax.jit(lambda x: _user_function(mod, x)).lower(jnp.zeros(3, jnp.float16))


def test_under_vmap_each_traced_element_is_checked(mod):
    batch = jnp.ones((3, 4), dtype=jnp.int8)
    with pytest.raises(jaxcc.DTypeMismatchError, match=r"is int8 but .* `arg:float32`") as info:
        jax.vmap(lambda x: _user_function(mod, x))(batch)
    assert _shows_user_line(info.value)
    out = jax.vmap(lambda x: _user_function(mod, x))(batch.astype(jnp.float32))
    np.testing.assert_allclose(out, 2 * np.ones((3, 4)))


def test_a_declared_output_dtype_is_the_default_outs(mod):
    y = mod.to_int(jnp.array([1.5, 2.5, -3.0], dtype=jnp.float32))
    assert y.dtype == jnp.int32
    np.testing.assert_array_equal(y, [1, 2, -3])


def test_outs_of_another_dtype_than_the_declared_one_is_refused(mod):
    x = jnp.ones(4, dtype=jnp.float32)
    with pytest.raises(jaxcc.DTypeMismatchError) as info:
        mod.to_int(x, outs=jax.ShapeDtypeStruct((4,), jnp.float32))
    message = str(info.value)
    assert message.startswith("to_int: output 1 ('y') in outs= is float32"), message
    assert "`ret:int32`" in message and "pass outs= with dtype jnp.int32" in message, message
    assert mod.to_int(x, outs=jax.ShapeDtypeStruct((4,), jnp.int32)).dtype == jnp.int32


def test_a_numpy_float64_array_is_what_jax_makes_of_it(mod):
    # With x64 off JAX hands the kernel float32, eager and under jit alike: accepted, and a
    # declared float64 is refused with the switch that makes it reachable.
    x = np.arange(3, dtype=np.float64)
    np.testing.assert_allclose(mod.scale(x, k=1.0), x)
    with pytest.raises(jaxcc.DTypeMismatchError, match="jax_enable_x64") as info:
        mod.wide(x)
    assert "input 1 ('x') is float32 but the arg_spec declares `arg:float64`" in str(info.value)
    with jax.enable_x64(True):
        np.testing.assert_array_equal(mod.wide(jnp.asarray(x)), x)


def test_an_xla_custom_kernel_returning_a_typed_function_is_checked(mod, unique_name):
    kernel = jaxcc.XLACustomKernel(unique_name)
    kernel.def_cpp_kernel(lambda outs, **params: mod.scale)
    x = jnp.ones(3, dtype=jnp.float32)
    outs = jax.ShapeDtypeStruct((3,), jnp.float32)
    np.testing.assert_allclose(kernel(x, outs=outs, k=4.0)[0], 4 * np.ones(3))
    with pytest.raises(jaxcc.DTypeMismatchError, match=r"scale: input 1 \('x'\) is int32"):
        kernel(x.astype(jnp.int32), outs=outs, k=4.0)
    with pytest.raises(jaxcc.DTypeMismatchError, match=r"output 1 \('y'\) in outs= is int32"):
        kernel(x, outs=jax.ShapeDtypeStruct((3,), jnp.int32), k=4.0)


def test_an_unknown_dtype_is_a_spec_error_with_a_suggestion():
    for spec in ("arg:flaot32 ret", ["arg:float", "ret"], ["args:f32", "rets"]):
        with pytest.raises(jaxcc.SpecError, match=r"did you mean `arg:float32`\?") as info:
            jaxcc.load_cpp_inline("arg_dtypes_bad", SCALE, {"to_int": spec})
        assert "valid dtypes (numpy's names): bool, int8" in str(info.value)
    with pytest.raises(jaxcc.SpecError, match=r"did you mean `ret:complex64`\?"):
        jaxcc.load_cpp_inline("arg_dtypes_bad", SCALE, {"to_int": "arg ret:cfloat"})


def test_an_annotation_declares_dtypes_and_points_at_a_bad_one():
    source = (
        "// @BE twice arg:float32 ret:float32\n"
        + SCALE.split("void scale")[0]
        + (
            "void twice(const jaxcc::Tensor x, jaxcc::Tensor y) {\n"
            "  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2 * "
            "x.data_ptr<float>()[i];\n}\n"
        )
    )
    twice = jaxcc.load_cpp_inline("arg_dtypes_annotated", source).twice
    assert [p.dtype for p in twice.spec.params] == ["float32", "float32"]
    with pytest.raises(jaxcc.DTypeMismatchError, match="is bfloat16"):
        twice(jnp.ones(2, dtype=jnp.bfloat16))
    bad = source.replace("ret:float32", "ret:flaot32")
    with pytest.raises(jaxcc.SpecError) as info:
        jaxcc.load_cpp_inline("arg_dtypes_annotated_bad", bad)
    lines = str(info.value).splitlines()
    assert "unknown dtype `flaot32` in `ret:flaot32`; did you mean `ret:float32`?" in lines[0]
    caret = next(line for line in lines if "^" in line)
    assert caret.index("^") == lines[1].index("ret:flaot32"), str(info.value)


# Every dtype a spec may name; one module of copies, one per declared dtype.
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]  # fmt: skip
COPIES = '#include <cstring>\n#include "jaxcc/jaxcc.h"\n' + "".join(
    f"void copy_{d}(const jaxcc::Tensor x, jaxcc::Tensor y) "
    "{ std::memcpy(y.data_ptr(), x.data_ptr(), x.nbytes()); }\n"
    for d in DTYPES
)


@pytest.fixture(scope="module")
def copies():
    specs = {f"copy_{d}": [f"arg:{d}", f"ret:{d}"] for d in DTYPES}
    return jaxcc.load_cpp_inline("arg_dtypes_copies", COPIES, specs)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(declared=st.sampled_from(DTYPES), given_dtype=st.sampled_from(DTYPES))
def test_a_call_is_accepted_iff_the_dtypes_are_equal(copies, declared, given_dtype):
    with jax.enable_x64(True):  # every dtype exists, so the rule is the whole story
        x = jnp.asarray(np.arange(3) % 2, dtype=jnp.dtype(given_dtype))
        fn = copies[f"copy_{declared}"]
        if declared == given_dtype:
            y = fn(x)
            assert y.dtype == x.dtype
            np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
        else:
            with pytest.raises(jaxcc.DTypeMismatchError, match=f"is {given_dtype} but"):
                fn(x)

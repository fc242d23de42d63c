"""data_ptr<T>() checks T against the buffer's dtype (issue 37 item 4; decision 149): a wrong
dtype at the call is a typed error naming the function, the parameter and both dtypes, never
reinterpreted bits, a read past the end or a dead process."""

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_python

import jaxcc

# The README quickstart's kernel: data_ptr<float>() in its inner loop.
ADD_ONE = r"""
#include "brainevent/common.h"
void add_one(const BE::Tensor x, BE::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
}
"""


@pytest.fixture(scope="module")
def add_one():
    return jaxcc.load_cpp_inline("dtype_check_add_one", ADD_ONE, ["add_one"]).add_one


def assert_names_everything(message: str, param: str, actual: str, wanted: str) -> None:
    assert "add_one: " in message, message
    assert f"parameter '{param}' is {actual}" in message, message
    assert f"reads it as float (data_ptr<float>(), which reads {wanted})" in message, message


def test_int32_on_float_kernel_is_a_typed_error_naming_function_param_and_dtypes(add_one):
    # issue 37 point 6: it returned 1065353216 (1.0f's bits) for every element.
    with pytest.raises(jaxcc.KernelError) as info:
        add_one(jnp.arange(4, dtype=jnp.int32))
    assert_names_everything(str(info.value), "x", "int32", "float32")
    assert "INVALID_ARGUMENT" in str(info.value)


def test_int32_on_float_kernel_under_jit_is_an_error_too(add_one):
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"parameter 'x' is int32"):
        jax.block_until_ready(jax.jit(add_one)(jnp.arange(4, dtype=jnp.int32)))


def test_float64_on_float_kernel_is_a_typed_error(add_one):
    # issue 37 point 6: half of each double's bits came back as floats.
    with jax.enable_x64(True):
        with pytest.raises(jaxcc.KernelError) as info:
            add_one(jnp.arange(4, dtype=jnp.float64))
    assert_names_everything(str(info.value), "x", "float64", "float32")


def test_wrong_output_dtype_names_the_output(add_one):
    x = jnp.arange(4, dtype=jnp.float32)
    with pytest.raises(jaxcc.KernelError) as info:
        add_one(x, outs=jax.ShapeDtypeStruct(x.shape, jnp.int32))
    assert_names_everything(str(info.value), "out", "int32", "float32")


def test_large_int8_on_float_kernel_is_a_typed_error_not_a_dead_process():
    # issue 37 point 6: the float loop read 4 bytes per int8 element, past the end of the
    # buffer, and a large input killed the process (SIGSEGV). A fresh process, so that the old
    # behaviour fails this test instead of taking pytest down.
    code = textwrap.dedent(f"""
        import jax.numpy as jnp, jaxcc
        mod = jaxcc.load_cpp_inline("dtype_check_int8", {ADD_ONE!r}, ["add_one"])
        try:
            mod.add_one(jnp.ones(1 << 26, dtype=jnp.int8))
        except jaxcc.KernelError as e:
            print("TYPED", e)
        else:
            print("NO ERROR")
        """)
    result = run_python(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "TYPED" in result.stdout and "parameter 'x' is int8" in result.stdout, result.stdout


ALIASES = r"""
#include "jaxcc/jaxcc.h"
// bool read as uint8_t and int8_t, the 16-bit floats as uint16_t, uint32 as int32_t: the
// aliases kernels rely on (brainevent's event, half and index buffers).
void count_true(const jaxcc::Tensor flags, jaxcc::Tensor out) {
    int32_t n = 0;
    const uint8_t* u = flags.data_ptr<const uint8_t>();
    const int8_t* s = flags.data_ptr<int8_t>();
    for (int64_t i = 0; i < flags.numel(); ++i) n += (u[i] != 0) + (s[i] != 0);
    out.data_ptr<int32_t>()[0] = n;
}
void half_bits(const jaxcc::Tensor h, const jaxcc::Tensor b, jaxcc::Tensor out) {
    out.data_ptr<uint16_t>()[0] = h.data_ptr<const uint16_t>()[0];
    out.data_ptr<uint16_t>()[1] = b.data_ptr<uint16_t>()[0];
}
void as_signed(const jaxcc::Tensor x, jaxcc::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<int32_t>()[i] = x.data_ptr<int32_t>()[i];
}
void untyped(const jaxcc::Tensor x, jaxcc::Tensor out) {
    // The explicit escape: data_ptr() is never checked.
    out.data_ptr<int32_t>()[0] = static_cast<const int32_t*>(x.data_ptr())[0];
}
"""


@pytest.fixture(scope="module")
def aliases():
    return jaxcc.load_cpp_inline(
        "dtype_check_aliases", ALIASES, ["count_true", "half_bits", "as_signed", "untyped"]
    )


def test_bool_read_as_int8_and_uint8_is_accepted(aliases):
    flags = jnp.array([True, False, True, True])
    out = aliases.count_true(flags, outs=jax.ShapeDtypeStruct((1,), jnp.int32))
    assert int(out[0]) == 6


def test_float16_and_bfloat16_read_as_uint16_are_accepted(aliases):
    h = jnp.array([1.5], dtype=jnp.float16)
    b = jnp.array([-2.0], dtype=jnp.bfloat16)
    out = aliases.half_bits(h, b, outs=jax.ShapeDtypeStruct((2,), jnp.uint16))
    expected = [np.asarray(h).view(np.uint16)[0], np.asarray(b).view(np.uint16)[0]]
    assert [int(v) for v in out] == [int(v) for v in expected]


def test_unsigned_read_as_signed_of_one_width_is_accepted(aliases):
    x = jnp.array([1, 2**32 - 1], dtype=jnp.uint32)
    out = aliases.as_signed(x, outs=jax.ShapeDtypeStruct((2,), jnp.int32))
    assert [int(v) for v in out] == [1, -1]


def test_untyped_data_ptr_stays_unchecked(aliases):
    x = jnp.array([1.0], dtype=jnp.float32)
    out = aliases.untyped(x, outs=jax.ShapeDtypeStruct((1,), jnp.int32))
    assert int(out[0]) == 1065353216  # the bits, as the kernel asked for


def test_float32_read_as_uint16_is_refused(aliases):
    # uint16_t reads the 16-bit floats, never a float32 (another width, and a float).
    h = jnp.array([1.5], dtype=jnp.float16)
    with pytest.raises(jaxcc.KernelError, match=r"parameter 'out' is float32"):
        aliases.half_bits(h, h, outs=jax.ShapeDtypeStruct((2,), jnp.float32))


def test_data_ptr_of_a_type_that_is_no_element_type_is_a_compile_error(unique_name):
    source = r"""
    #include "jaxcc/jaxcc.h"
    struct Pair { float a, b; };
    void f(const jaxcc::Tensor x, jaxcc::Tensor out) { out.data_ptr<Pair>()[0] = Pair{}; }
    """
    with pytest.raises(jaxcc.CompileError, match=r"not an element type jaxcc knows"):
        jaxcc.load_cpp_inline(unique_name, source, ["f"])


def test_wrong_output_dtype_names_the_output_under_the_debug_profile(unique_name):
    # The debug profile swaps each output for a guarded copy; the copy keeps the name.
    mod = jaxcc.load_cpp_inline(unique_name, ADD_ONE, ["add_one"], debug=True)
    x = jnp.arange(4, dtype=jnp.float32)
    with pytest.raises(jaxcc.KernelError, match=r"parameter 'out' is int32"):
        mod.add_one(x, outs=jax.ShapeDtypeStruct(x.shape, jnp.int32))

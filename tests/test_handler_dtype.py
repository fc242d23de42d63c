"""The dtypes an arg_spec declares (`arg:float32`, `ret:int32`) are checked by the generated
handler itself (issue 49 item 12, decision 180), so a raw `jax.ffi.ffi_call` of the target (a way
in the README shows) gets the same typed error as a call through jaxcc, never reinterpreted bits:
INVALID_ARGUMENT naming the function, the parameter, both dtypes and the fix."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc

# Untyped pointers, as many real kernels read their buffers: only the declared dtype can catch a
# wrong array here (data_ptr<T>() would catch it in the kernel, decision 149).
SOURCE = r"""
#include "jaxcc/jaxcc.h"
void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
}
void count(const jaxcc::Tensor x, jaxcc::Tensor out) {
  static_cast<int32_t*>(out.data_ptr())[0] = static_cast<int32_t>(x.numel());
}
"""

SPECS = {"add_one": ["arg:float32", "ret:float32"], "count": ["arg", "ret:int32"]}


@pytest.fixture(scope="module")
def module():
    return jaxcc.load_cpp_inline("handler_dtype", SOURCE, functions=SPECS)


def raw(target, shape, dtype):
    return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(shape, dtype))


def test_raw_ffi_call_with_the_declared_dtype_runs(module):
    x = jnp.arange(4, dtype=jnp.float32)
    np.testing.assert_array_equal(raw("handler_dtype.add_one", x.shape, jnp.float32)(x), x + 1)
    n = raw("handler_dtype.count", (1,), jnp.int32)(jnp.zeros(5, jnp.int8))  # bare `arg`: any
    assert int(n[0]) == 5


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_raw_ffi_call_of_int32_on_arg_float32_is_a_typed_error(module, jit):
    # issue 49 item 12: 1065353216-style garbage (the int bits read as floats), no error.
    x = jnp.arange(4, dtype=jnp.int32)
    call = raw("handler_dtype.add_one", x.shape, jnp.float32)
    with pytest.raises(jax.errors.JaxRuntimeError) as info:
        jax.block_until_ready((jax.jit(call) if jit else call)(x))
    message = str(info.value)
    assert "INVALID_ARGUMENT" in message, message
    assert (
        "add_one: parameter 'x' is int32, but the arg_spec declares `arg:float32`; cast it "
        "before the call (x.astype(jnp.float32)), or change the spec (`arg:int32`, or a bare "
        "`arg` for any dtype)" in message
    ), message


def test_raw_ffi_call_with_a_result_of_another_dtype_is_a_typed_error(module):
    call = raw("handler_dtype.count", (1,), jnp.float32)
    with pytest.raises(jax.errors.JaxRuntimeError) as info:
        jax.block_until_ready(call(jnp.zeros(5, jnp.float32)))
    message = str(info.value)
    assert "count: result 'out' is float32, but the arg_spec declares `ret:int32`" in message
    assert "ask for a result of dtype int32" in message, message


def test_the_module_callable_still_refuses_before_dispatch(module):
    # The Python check (decision 158) comes first for jaxcc's own callables: same wording.
    with pytest.raises(jaxcc.DTypeMismatchError, match=r"declares `arg:float32`"):
        module.add_one(jnp.arange(4, dtype=jnp.int32))

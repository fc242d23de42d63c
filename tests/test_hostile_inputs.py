"""A catalogue of hostile and malformed inputs. Each case must raise a typed jaxcc error whose
message names the problem and says what to do; the interpreter never aborts.

Every case is its own test (`test_hostile_input[<category>/<case>]`). `test_summary_in_a_subprocess`
runs every cheap case in a fresh interpreter, which must exit normally and print
`hostile inputs: N cases, N typed errors` with a count per category (`pytest -s` shows it).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import dataclasses
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_python

import jaxcc
from jaxcc import (
    BackendError,
    BenchmarkDataFnNotProvidedError,
    CallError,
    CompileError,
    DeviceError,
    KernelError,
    LoadError,
    SignatureError,
    SpecError,
)

# -- sources ------------------------------------------------------------------------------------

# The target of most load-time cases: one input, one output, one float attribute.
STD = '#include "jaxcc/jaxcc.h"\nvoid f(const jaxcc::Tensor x, jaxcc::Tensor out, float s) {}\n'

# One module shared by every call-time case (built once per process, then a cache hit).
CALLS = r"""
#include "jaxcc/jaxcc.h"
#include <new>
#include <stdexcept>

void add(const jaxcc::Tensor a, const jaxcc::Tensor b, jaxcc::Tensor out) {
  JAXCC_CHECK(a.dtype() == jaxcc::DType::Float32 && b.dtype() == jaxcc::DType::Float32)
      << "add takes float32 arrays, got " << a.dtype() << " and " << b.dtype()
      << "; cast with .astype(jnp.float32)";
  JAXCC_CHECK(a.numel() == b.numel() && a.numel() == out.numel())
      << "add needs arrays of one size, got " << a.numel() << " and " << b.numel()
      << " elements; broadcast them first";
  for (int64_t i = 0; i < a.numel(); ++i)
    out.data_ptr<float>()[i] = a.data_ptr<float>()[i] + b.data_ptr<float>()[i];
}

void split(const jaxcc::Tensor x, jaxcc::Tensor lo, jaxcc::Tensor hi) {}

void attrs(const jaxcc::Tensor x, jaxcc::Tensor out, int8_t i8, int32_t i32, uint32_t u32,
           uint64_t u64, bool flag, float f32, double f64) {}

// @BE halfs arg ret attr.h:float16 attr.b:bfloat16
void halfs(const jaxcc::Tensor x, jaxcc::Tensor out, uint16_t h, uint16_t b) {}

void throws_runtime(const jaxcc::Tensor x, jaxcc::Tensor out) {
  throw std::runtime_error("kernel exploded on purpose");
}
void throws_int(const jaxcc::Tensor x, jaxcc::Tensor out) { throw 42; }
void throws_bad_alloc(const jaxcc::Tensor x, jaxcc::Tensor out) { throw std::bad_alloc(); }
void check_fails(const jaxcc::Tensor x, jaxcc::Tensor out, double limit) {
  JAXCC_CHECK(limit > 0) << "limit must be positive, got " << limit;
}
void floats_only(const jaxcc::Tensor x, jaxcc::Tensor out) {
  JAXCC_DISPATCH_FLOATING(x.dtype(), T, { out.data_ptr<T>()[0] = T(1); });
}
"""
CALLS_FUNCTIONS = {
    "add": None,
    "split": None,
    "attrs": None,
    "halfs": ["arg", "ret", "attr.h:float16", "attr.b:bfloat16"],
    "throws_runtime": None,
    "throws_int": None,
    "throws_bad_alloc": None,
    "check_fails": None,
    "floats_only": None,
}
GOOD_ATTRS = dict(i8=1, i32=1, u32=1, u64=1, flag=True, f32=1.0, f64=1.0)
X = np.ones(4, np.float32)
OUT = jax.ShapeDtypeStruct((4,), np.float32)


class Context:
    """What cases share: a scratch directory and the lazily built call-time module."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self._calls = None

    @staticmethod
    def name(tag: str = "m") -> str:
        return f"hostile_{tag}_{uuid.uuid4().hex[:8]}"

    @property
    def calls(self):
        if self._calls is None:
            self._calls = jaxcc.load_cpp_inline("hostile_catalogue_calls", CALLS, CALLS_FUNCTIONS)
        return self._calls

    def file(self, name: str, data: bytes | str) -> Path:
        path = self.scratch / uuid.uuid4().hex[:8] / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path


# -- the catalogue ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    category: str
    name: str
    action: Callable[[Context], object]
    error: type
    needles: tuple[str, ...]  # the problem and the fix, each a substring of the message
    heavy: bool = False  # runs a compiler or makes large data: left out of the subprocess run
    needs: tuple[str, ...] = ()  # "nvcc", "no_gpu": skipped where the machine lacks them

    @property
    def id(self) -> str:
        return f"{self.category}/{self.name}"


CASES: list[Case] = []


def table(category: str, rows, **defaults) -> None:
    """rows: (name, action, error, needles) or (name, action, error, needles, {options})."""
    for row in rows:
        name, action, error, needles, *options = row
        needles = (needles,) if isinstance(needles, str) else tuple(needles)
        CASES.append(
            Case(category, name, action, error, needles, **{**defaults, **(options or [{}])[0]})
        )


def load(c: Context, source=STD, functions=("f",), name=None, **kwargs):
    if isinstance(functions, tuple):
        functions = list(functions)
    return jaxcc.load_cpp_inline(c.name() if name is None else name, source, functions, **kwargs)


def spec(*tokens):
    return lambda c: load(c, functions={"f": list(tokens)})


def sig(source, functions=("f",)):
    return lambda c: load(c, "#include <cstdint>\n" + source, functions)


def named(name, **kwargs):
    return lambda c: load(c, name=name, **kwargs)


def option(**kwargs):
    return lambda c: load(c, **kwargs)


@contextlib.contextmanager
def environ(**values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


VALID_TOKENS = "valid tokens are `arg`, `ret`"
# fmt: off
table(
    "arg_spec",
    [
        ("unknown_token", spec("arg", "ret", "bogus"), SpecError, ["`bogus`", VALID_TOKENS]),
        ("input_for_arg", spec("input", "ret", "attr.s"), SpecError, "did you mean `arg`"),
        ("out_for_ret", spec("arg", "out", "attr.s"), SpecError, "did you mean `ret`"),
        ("attr_colon", spec("arg", "ret", "attr:s"), SpecError, "did you mean `attr.s`"),
        ("empty_token", spec("arg", "", "attr.s"), SpecError, ["a token is empty", VALID_TOKENS]),
        ("bare_attr", spec("arg", "ret", "attr"), SpecError, ["needs a name", "attr.<name>"]),
        ("attr_no_name", spec("arg", "ret", "attr.:float32"), SpecError, ["no attribute name", "attr.<name>:<type>"]),
        ("attr_no_type", spec("arg", "ret", "attr.s:"), SpecError, ["no type after `:`", "float32"]),
        ("unknown_type", spec("arg", "ret", "attr.s:float128"), SpecError, ["unknown attribute type `float128`", "valid types"]),
        ("c_type_name", spec("arg", "ret", "attr.s:double"), SpecError, "did you mean `float64`"),
        ("complex_type", spec("arg", "ret", "attr.s:complex64"), SpecError, ["cannot pass complex", "two float attributes"]),
        ("keyword_attr", spec("arg", "ret", "attr.class:float32"), SpecError, ["C++ keyword", "rename"]),
        ("digit_attr", spec("arg", "ret", "attr.1s:float32"), SpecError, ["not a C identifier", "letters, digits"]),
        ("unicode_attr", spec("arg", "ret", "attr.sé:float32"), SpecError, ["not a C identifier", "letters, digits and `_`"]),
        ("path_attr", spec("arg", "ret", "attr.../s:float32"), SpecError, ["not a C identifier", "letters, digits and `_`"]),
        ("long_attr", spec("arg", "ret", "attr." + "s" * 300 + ":float32"), SpecError, ["300 characters", "at most 255"]),
        ("nul_token", spec("arg", "ret", "attr.s\0x:float32"), SpecError, ["not a C identifier", "letters, digits and `_`"]),
        ("surrogate_token", spec("arg", "ret", "attr.\ud800:float32"), SpecError, ["not valid Unicode", "UTF-8"]),
        ("stream_twice", spec("arg", "ret", "stream", "stream"), SpecError, ["`stream` appears twice", "at most one stream"]),
        ("attr_twice", spec("arg", "ret", "attr.s:float32", "attr.s:float32"), SpecError, ["appears twice", "must be unique"]),
        ("empty_spec", spec(), SpecError, ["arg_spec is empty", "one token per C++ parameter"]),
        ("no_ret", spec("arg", "arg", "attr.s"), SpecError, ["`ret`", "at least one"]),
        ("not_a_list", lambda c: load(c, functions={"f": 42}), SpecError, ["must be a list of strings", "['arg', 'ret'"]),
        ("non_str_token", lambda c: load(c, functions={"f": ["arg", 1]}), SpecError, "must be a list of strings"),
        ("string_spec_bad_token", lambda c: load(c, functions={"f": "arg ret attr.s bogus"}), SpecError, ["`bogus`", VALID_TOKENS]),
        ("too_many_tokens", spec("arg", "ret", "attr.s", "arg"), SignatureError, ["has 4 entries", "declares 3 parameters", "one token per parameter"]),
        ("too_few_tokens", spec("arg", "ret"), SignatureError, ["has 2 entries", "declares 3 parameters"]),
        ("ret_for_const_tensor", spec("ret", "ret", "attr.s"), SignatureError, ["`ret`", "const"]),
        ("attr_type_mismatch", spec("arg", "ret", "attr.s:int32"), SignatureError, ["int32", "float"]),
        ("attr_for_tensor", spec("attr.x:float32", "ret", "attr.s"), SignatureError, ["does not match the spec", "give the token in parentheses"]),
    ],
)
# fmt: on

# fmt: off
table(
    "signature",
    [
        ("not_found", sig("void g(const jaxcc::Tensor x, jaxcc::Tensor out) {}"), SignatureError, ["`f` not found", "did you mean `g`"]),
        ("pointer_param", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o, int* p) {}"), SignatureError, [">:2:48: error: parameter `p`", "^~~~~~", "pass arrays as tensors"]),
        ("template", sig("template <typename T> void f(const jaxcc::Tensor x, jaxcc::Tensor o) {}"), SignatureError, ["is a template", "non-template wrapper"]),
        ("unnamed_attribute", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o, float) {}"), SignatureError, ["has no name", "name it"]),
        ("array_parameter", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o, float s[4]) {}"), SignatureError, ["float[4]", "pass a tensor instead"]),
        ("rvalue_tensor", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor&& o) {}"), SignatureError, ["rvalue reference", "`jaxcc::Tensor&`"]),
        ("struct_parameter", sig("struct S {};\nvoid f(const jaxcc::Tensor x, jaxcc::Tensor o, S s) {}"), SignatureError, ["does not know the type `S`", "spell the type out"]),
        # A macro declaring `f` is read through its expansion (decision 87); one that expands to
        # a variable named `f` declares no function.
        ("macro_declaration", sig("#define DECL int f = 0;\nDECL"), SignatureError, ["`f` not found", "namespace scope"]),
        ("variadic", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o, ...) {}"), SignatureError, ["is variadic", "fixed parameter list"]),
        ("unknown_type", sig("#include <string>\nvoid f(const jaxcc::Tensor x, jaxcc::Tensor o, std::string s) {}"), SignatureError, ["`std::string`", "spell the type out"]),
        ("float_reference", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o, float& s) {}"), SignatureError, ["`float&`", "take it by value"]),
        ("tensor_pointer", sig("void f(const jaxcc::Tensor* x, jaxcc::Tensor o) {}"), SignatureError, ["not passed by pointer", "`const jaxcc::Tensor&`"]),
        ("unclosed_paren", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o {}"), SignatureError, ["never closed", "balance the parentheses"]),
        ("only_in_comment", sig("// void f(const jaxcc::Tensor x, jaxcc::Tensor o) {}"), SignatureError, ["`f`", "not found"]),
        ("only_in_string", sig('const char* s = "void f(const jaxcc::Tensor x, jaxcc::Tensor o) {}";'), SignatureError, ["`f`", "not found"]),
        ("member_function", sig("struct S { void f(const jaxcc::Tensor x, jaxcc::Tensor o) {} };"), SignatureError, "`f`"),
        ("overloaded", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o) {}\nvoid f(const jaxcc::Tensor x, jaxcc::Tensor o, float s) {}"), SignatureError, ["is overloaded", "rename the others"]),
        ("no_parameters", sig("void f() {}"), SignatureError, ["no output tensor", "non-const `jaxcc::Tensor&`"]),
        ("two_streams", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o, int64_t stream, cudaStream_t s2) {}"), SignatureError, ["second stream", "attr.stream:int64"]),
        ("function_pointer", sig("void f(const jaxcc::Tensor x, jaxcc::Tensor o, void (*cb)()) {}"), SignatureError, ["function pointers", "integer attribute"]),
        ("deep_parentheses", sig("void f(" + "(" * 100_000 + ") {}"), SignatureError, ["never closed", "balance the parentheses"]),
        ("bad_annotation", lambda c: load(c, "// @BE f arg ret bogus\n" + STD, None), SpecError, ["`bogus`", VALID_TOKENS]),
        ("no_annotations", lambda c: load(c, STD, None), SpecError, ["@BE", "pass `functions`"]),
    ],
)
# fmt: on

# fmt: off
table(
    "names",
    [
        ("empty_module", named(""), SpecError, ["invalid module name", "Pick a name such as"]),
        ("long_module", named("m" * 300), SpecError, ["at most 128 characters", "Pick a name such as"]),
        ("traversal_module", named("../x"), SpecError, ["invalid module name", "Pick a name such as"]),
        ("slash_module", named("a/b"), SpecError, ["invalid module name", "Pick a name such as"]),
        ("nul_module", named("a\0b"), SpecError, ["invalid module name", "Pick a name such as"]),
        ("unicode_module", named("modülé"), SpecError, ["invalid module name", "Pick a name such as"]),
        ("space_module", named("my module"), SpecError, ["invalid module name", "Pick a name such as"]),
        ("surrogate_module", named("m\udcff"), SpecError, ["not valid Unicode", "UTF-8"]),
        ("leading_digit_module", named("1mod"), SpecError, ["invalid module name '1mod'", "must start with a letter"]),
        ("dotdot_module", named(".."), SpecError, ["invalid module name '..'", "Pick a name such as"]),
        ("int_module", named(42), SpecError, ["name must be a string", "int"]),
        ("bytes_module", named(b"mod"), SpecError, ["name must be a string", "bytes"]),
        ("empty_function", lambda c: load(c, functions=[""]), SpecError, ["function name is empty", "unqualified name"]),
        ("traversal_function", lambda c: load(c, functions=["../f"]), SpecError, ["not a valid function name", "C identifier"]),
        ("qualified_function", lambda c: load(c, functions=["ns::f"]), SpecError, ["not a valid function name", "namespaces are found in the source"]),
        ("keyword_function", lambda c: load(c, functions=["class"]), SpecError, ["C++ keyword", "another name"]),
        ("digit_function", lambda c: load(c, functions=["1f"]), SpecError, ["not a valid function name", "not starting with a digit"]),
        ("long_function", lambda c: load(c, functions=["f" * 300]), SpecError, ["300", "at most 255"]),
        ("nul_function", lambda c: load(c, functions=["f\0"]), SpecError, ["not a valid function name", "C identifier"]),
        ("empty_prefix", named(None, target_prefix=""), SpecError, ["invalid target_prefix", "Pick a name such as"]),
        ("slash_prefix", named(None, target_prefix="a/b"), SpecError, ["invalid target_prefix", "Pick a name such as"]),
        ("traversal_prefix", named(None, target_prefix="../x"), SpecError, ["invalid target_prefix", "Pick a name such as"]),
        ("long_prefix", named(None, target_prefix="p" * 300), SpecError, ["invalid target_prefix", "Pick a name such as"]),
        ("int_prefix", named(None, target_prefix=7), SpecError, ["target_prefix must be a string", "int"]),
    ],
)
# fmt: on

# fmt: off
table(
    "functions_argument",
    [
        ("int", option(functions=42), SpecError, ["functions must be a dict of arg_specs, a list of names or None", "int"]),
        ("bare_string", option(functions="f"), SpecError, ["functions must be", "['f']"]),
        ("set", option(functions={"f"}), SpecError, ["functions must be", "set"]),
        ("generator", option(functions=(n for n in ["f"])), SpecError, ["functions must be", "generator"]),
        ("non_str_names", option(functions=[1, 2]), SpecError, "must hold function names (strings)"),
        ("non_str_key", option(functions={1: ["arg"]}), SpecError, "function names must be strings"),
        ("empty_list", option(functions=[]), SpecError, ["`functions` is empty", "at least one function"]),
        ("empty_dict", option(functions={}), SpecError, ["`functions` is empty", "at least one function"]),
        ("duplicates", option(functions=["f", "f"]), SpecError, ["`f` is requested twice", "list each function once"]),
    ],
)
# fmt: on


def attrs_call(**overrides):
    return lambda c: c.calls.attrs(X, **{**GOOD_ATTRS, **overrides})


# fmt: off
table(
    "attribute_values",
    [
        ("int8_overflow", attrs_call(i8=300), CallError, ["does not fit int8 [-128, 127]", "'i8'"]),
        ("int8_underflow", attrs_call(i8=-129), CallError, ["does not fit int8", "Pass a value in that range"]),
        ("int8_numpy_overflow", attrs_call(i8=np.int64(1000)), CallError, "does not fit int8"),
        ("uint32_negative", attrs_call(u32=-1), CallError, "does not fit uint32"),
        ("uint32_overflow", attrs_call(u32=2**32), CallError, "does not fit uint32"),
        ("uint64_above_int64", attrs_call(u64=2**63), CallError, ["above 2**63 - 1", "array argument"]),
        ("huge_int", attrs_call(i32=10**40), CallError, ["does not fit int32", "Pass a value in that range"]),
        ("float_for_int", attrs_call(i32=1.5), CallError, ["int32", "Pass an integer"]),
        ("nan_for_int", attrs_call(i32=float("nan")), CallError, "Pass an integer"),
        ("inf_for_int", attrs_call(i32=float("inf")), CallError, "Pass an integer"),
        ("string_for_int", attrs_call(i32="3"), CallError, "Pass an integer"),
        ("none_for_int", attrs_call(i32=None), CallError, "Pass an integer"),
        ("bool_for_int", attrs_call(i32=True), CallError, ["got the bool True", "Pass an integer"]),
        ("two_for_bool", attrs_call(flag=2), CallError, ["'flag' is bool", "Pass True or False"]),
        ("string_for_bool", attrs_call(flag="yes"), CallError, ["'flag' is bool", "Pass True or False"]),
        ("string_for_float", attrs_call(f32="1.0"), CallError, ["float32", "Pass a real number"]),
        ("bool_for_float", attrs_call(f32=True), CallError, "Pass a real number"),
        ("complex_for_float", attrs_call(f64=1 + 2j), CallError, "Pass a real number"),
        ("float32_overflow", attrs_call(f32=1e39), CallError, ["outside the range of float32", "float64"]),
        ("int_beyond_float64", attrs_call(f64=10**400), CallError, ["too large", "smaller value"]),
        ("array_for_scalar", attrs_call(f32=np.array([1.0, 2.0])), CallError, ["scalar", "array argument"]),
        ("list_for_scalar", attrs_call(f32=[1.0]), CallError, "Pass a real number"),
        ("jax_array_for_scalar", attrs_call(f32=jnp.ones(3)), CallError, ["known at trace time", "array argument"]),
        ("traced_scalar", lambda c: jax.jit(lambda s: c.calls.attrs(X, **{**GOOD_ATTRS, "f32": s}))(1.0), CallError, ["known at trace time", "array argument"]),
        ("float16_overflow", lambda c: c.calls.halfs(X, h=1e6, b=1.0), CallError, "outside the range of float16"),
        ("bfloat16_overflow", lambda c: c.calls.halfs(X, h=1.0, b=1e39), CallError, "outside the range of bfloat16"),
        ("missing_attribute", lambda c: c.calls.attrs(X, **{k: v for k, v in GOOD_ATTRS.items() if k != "f64"}), CallError, ["missing f64", "It takes:"]),
        ("unexpected_attribute", attrs_call(scale=2.0), CallError, ["unexpected scale", "It takes:"]),
    ],
)
# fmt: on

# fmt: off
table(
    "call_time",
    [
        ("too_few_arrays", lambda c: c.calls.add(X), CallError, ["expected 2 input array(s), got 1", "signature"]),
        ("too_many_arrays", lambda c: c.calls.add(X, X, X), CallError, "expected 2 input array(s), got 3"),
        ("arrays_as_keywords", lambda c: c.calls.add(a=X, b=X), CallError, "expected 2 input array(s), got 0"),
        ("list_input", lambda c: c.calls.add([1.0], X), CallError, ["must be an array", "jnp.asarray"]),
        ("string_input", lambda c: c.calls.add("x", X), CallError, "must be an array"),
        ("none_input", lambda c: c.calls.add(None, X), CallError, "must be an array"),
        ("outs_not_inferable", lambda c: c.calls.split(X), CallError, ["pass outs=", "list of 2"]),
        ("outs_too_few", lambda c: c.calls.split(X, outs=[OUT]), CallError, "expected 2 output description(s)"),
        ("outs_too_many", lambda c: c.calls.add(X, X, outs=[OUT, OUT]), CallError, "expected 1 output description(s)"),
        ("outs_not_a_struct", lambda c: c.calls.add(X, X, outs=4), CallError, ["needs .shape and .dtype", "ShapeDtypeStruct"]),
        ("outs_negative_size", lambda c: c.calls.add(X, X, outs=jax.ShapeDtypeStruct((-1,), np.float32)), CallError, "non-negative integer sizes"),
        ("outs_bad_dtype", lambda c: c.calls.add(X, X, outs=_Fake((4,), "float33")), CallError, ["not a dtype JAX knows", "ShapeDtypeStruct"]),
        ("outs_shape_not_tuple", lambda c: c.calls.add(X, X, outs=_Fake(4, np.float32)), CallError, "not a tuple of sizes"),
        ("rank_above_limit", lambda c: c.calls.add(np.ones((1,) * 9, np.float32), np.ones((1,) * 9, np.float32)), CallError, ["input 1 has rank 9", "reshape"]),
        ("outs_rank_above_limit", lambda c: c.calls.add(X, X, outs=jax.ShapeDtypeStruct((1,) * 10, np.float32)), CallError, ["output 1 has rank 10", "reshape"]),
        ("dtype_mismatch", lambda c: c.calls.add(X.astype(np.int32), X.astype(np.int32)), KernelError, ["add takes float32 arrays, got int32", "astype"]),
        ("shape_mismatch", lambda c: c.calls.add(X, np.ones(3, np.float32)), KernelError, ["one size, got 4 and 3", "broadcast"]),
        ("output_shape_mismatch", lambda c: c.calls.add(X, X, outs=jax.ShapeDtypeStruct((5,), np.float32)), KernelError, "one size"),
        ("failure_under_vmap", lambda c: jax.vmap(lambda r: c.calls.check_fails(r, limit=-2.0))(np.ones((3, 2), np.float32)), KernelError, "limit must be positive, got -2"),
    ],
)
# fmt: on


class _Fake:
    """An outs entry with arbitrary .shape and .dtype."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


# fmt: off
table(
    "kernel_failures",
    [
        ("check_failure", lambda c: c.calls.check_fails(X, limit=-1.0), KernelError, ["limit must be positive, got -1", "fix the inputs"]),
        ("runtime_error", lambda c: c.calls.throws_runtime(X), KernelError, ["kernel exploded on purpose", "fix the inputs"]),
        ("non_standard_exception", lambda c: c.calls.throws_int(X), KernelError, ["non-standard C++ exception", "fix the inputs"]),
        ("bad_alloc", lambda c: c.calls.throws_bad_alloc(X), KernelError, ["out of host memory (std::bad_alloc)", "fix the inputs"]),
        ("unsupported_dtype", lambda c: c.calls.floats_only(X.astype(np.int32)), KernelError, ["unsupported dtype int32", "supported dtypes: float32, float64"]),
    ],
)
# fmt: on

SYNTAX_ERROR = (
    '#include "jaxcc/jaxcc.h"\nvoid f(const jaxcc::Tensor x, jaxcc::Tensor out) {\n  int y = ;\n}\n'
)


def _compile_error_location(c: Context):
    name = c.name("syntax")
    try:
        load(c, SYNTAX_ERROR, name=name)
    except CompileError as e:
        if f"<{name}>:3:" not in str(e) or "int y = ;" not in str(e):
            raise AssertionError(f"the message does not point at line 3: {e}") from None
        raise


def _huge_line_syntax_error(c: Context):
    filler = "/*" + "x" * (4 << 20) + "*/"  # a 4 MiB line that the compiler quotes
    return load(c, '#include "jaxcc/jaxcc.h"\n' + filler + " int y = ;\n" + STD)


def _timeout(c: Context):
    body = "".join(f"  v = v * {i % 7 + 2} + {i};\n" for i in range(60_000))
    source = STD.replace("{}", "{\n  volatile double v = 1;\n" + body + "}")
    with environ(JAXCC_BUILD_TIMEOUT="1"):
        return load(c, source, optimization_level=3)


def _unresolved_at_load(c: Context):
    source = STD.replace("{}", "{ missing_symbol_xyz(); }").replace(
        "void f", "void missing_symbol_xyz();\nvoid f"
    )
    return load(c, source, extra_ldflags=["-Wl,--unresolved-symbols=ignore-all"])


# fmt: off
table(
    "compile_and_link",
    [
        ("syntax_error", _compile_error_location, CompileError, ["error:", "Full log:"]),
        ("undeclared", lambda c: load(c, STD.replace("{}", "{ undeclared_thing(); }")), CompileError, ["undeclared_thing", "was not declared"]),
        ("error_directive", lambda c: load(c, "#error please define KERNEL_SIZE\n" + STD), CompileError, "please define KERNEL_SIZE"),
        ("missing_header", lambda c: load(c, '#include "no_such_header.h"\n' + STD), CompileError, ["no_such_header.h", "extra_include_paths"]),
        ("static_assert", lambda c: load(c, 'static_assert(sizeof(int) == 3, "int must be 3 bytes");\n' + STD), CompileError, "int must be 3 bytes"),
        ("bad_cflag", option(extra_cflags=["-fno-such-flag-jaxcc"]), CompileError, ["-fno-such-flag-jaxcc", "extra_cflags"]),
        ("undefined_symbol", lambda c: load(c, "void gone();\n" + STD.replace("{}", "{ gone(); }")), CompileError, ["undefined", "gone"]),
        ("missing_library", option(extra_ldflags=["-lno_such_library_jaxcc"]), CompileError, ["no_such_library_jaxcc", "extra_ldflags"]),
        ("openmp_without_flag", lambda c: load(c, "#include <omp.h>\n" + STD.replace("{}", "{ (void)omp_get_max_threads(); }")), CompileError, ["omp_get_max_threads", "pass -fopenmp in extra_cflags"]),
        ("unresolved_at_load", _unresolved_at_load, LoadError, ["missing_symbol_xyz", "define"]),
        ("huge_line_error", _huge_line_syntax_error, CompileError, ["error:", "Full log:"]),
        ("build_timeout", _timeout, CompileError, ["did not finish within 1 s", "Raise JAXCC_BUILD_TIMEOUT"]),
        ("outs_attribute_name", lambda c: load(c, STD.replace("float s", "int32_t outs")), SpecError, ["'outs'", "rename"]),
    ],
    heavy=True,
)
# fmt: on

# fmt: off
table(
    "sources",
    [
        ("bytes_source", lambda c: load(c, STD.encode()), SpecError, ["cpp_sources must be a string or a list of strings, got bytes", "decode"]),
        ("list_with_bytes", lambda c: load(c, [STD, b"// x"]), SpecError, ["got list", "decode byte strings first"]),
        ("none_source", lambda c: load(c, None), SpecError, ["cpp_sources must be a string", "got NoneType"]),
        ("empty_source", lambda c: load(c, "   \n"), SpecError, ["source is empty", "pass the source text"]),
        ("nul_in_source", lambda c: load(c, STD + "\0"), SpecError, ["NUL character at line 3", "remove the NUL"]),
        ("surrogate_in_source", lambda c: load(c, STD + "// caf\udce9\n"), SpecError, ["not valid Unicode", "UTF-8"]),
        ("latin1_file", lambda c: jaxcc.load_cpp_file(c.file("latin1.cc", STD.encode() + b"// caf\xe9\n"), ["f"]), SpecError, ["not valid UTF-8", "save it as UTF-8"]),
        ("binary_file", lambda c: jaxcc.load_cpp_file(c.file("blob.cc", bytes(range(256))), ["f"]), SpecError, ["blob.cc is not valid UTF-8", "save it as UTF-8"]),
        ("large_source_signature_error", lambda c: load(c, "// " + "x" * (20 << 20) + "\n" + STD.replace("float s", "float* s")), SignatureError, ["float*", "^"]),
        ("nul_in_file_path", lambda c: jaxcc.load_cpp_file(str(c.file("k.cc", STD)) + "\0.bak", ["f"]), SpecError, ["contains a NUL character", "pass the file's path"]),
        ("undecodable_file_name", lambda c: jaxcc.load_cpp_file(os.fsencode(c.scratch) + b"/caf\xe9.cc", ["f"]), SpecError, ["load_cpp_file: filepath", "not valid Unicode text"]),
        ("nul_in_cache_dir", lambda c: jaxcc.set_cache_dir(str(c.scratch) + "\0x"), SpecError, ["set_cache_dir", "contains a NUL character"]),
        ("bad_cuda_runtime_env", lambda c: _with_env(c, JAXCC_CUDA_RUNTIME="dynamic"), SpecError, ["JAXCC_CUDA_RUNTIME='dynamic'", "'static'", "'shared'"]),
        ("latin1_file_in_dir", lambda c: jaxcc.load_cpp_dir(c.file("bad.cc", b"// \xff\xfe\n").parent, name="d"), SpecError, ["bad.cc is not valid UTF-8", "save it as UTF-8"]),
        ("whitespace_sources", lambda c: load(c, [" ", "\n\t"]), SpecError, ["source is empty", "pass the source text"]),
        ("large_function_list", lambda c: load(c, functions=[f"g{i}" for i in range(5000)]), SignatureError, ["`g0`", "not found"]),
    ],
)
# fmt: on

# fmt: off
table(
    "build_options",
    [
        ("opt_level_7", option(optimization_level=7), SpecError, ["optimization_level must be 0, 1, 2 or 3", "7"]),
        ("opt_level_negative", option(optimization_level=-1), SpecError, "optimization_level must be"),
        ("opt_level_string", option(optimization_level="3"), SpecError, "optimization_level must be"),
        ("opt_level_bool", option(optimization_level=True), SpecError, "optimization_level must be"),
        ("cflags_int", option(extra_cflags=42), SpecError, "extra_cflags must be a list of strings"),
        ("cflags_bytes", option(extra_cflags=[b"-O2"]), SpecError, ["bytes", "decode"]),
        ("cflags_nul", option(extra_cflags=["-DX\0Y"]), SpecError, ["NUL", "remove it"]),
        ("ldflags_dict_values", option(extra_ldflags=[{"a": 1}]), SpecError, "extra_ldflags must be a list of strings"),
        ("include_paths_int", option(extra_include_paths=5), SpecError, "extra_include_paths must be a list of strings"),
        ("workers_negative", option(ninja_workers=-1), SpecError, ["ninja_workers must be a positive integer", "None"]),
        ("workers_zero", option(ninja_workers=0), SpecError, "ninja_workers must be a positive integer"),
        ("workers_float", option(ninja_workers=1.5), SpecError, "ninja_workers must be a positive integer"),
        ("workers_bool", option(ninja_workers=True), SpecError, "ninja_workers must be a positive integer"),
        ("build_dir_is_file", lambda c: load(c, build_directory=c.file("not_a_dir", "x")), SpecError, ["is not a directory", "pass a directory"]),
        ("build_dir_int", option(build_directory=5), SpecError, ["build_directory must be a path", "int"]),
        ("build_dir_nul", option(build_directory="/tmp/a\0b"), SpecError, "without NUL"),
        ("vmap_method", option(vmap_method="parallel"), SpecError, ["vmap_method must be one of", "sequential"]),
        ("unknown_keyword", lambda c: jaxcc.load_cpp_file(c.file("k.cc", STD), ["f"], optimisation_level=2), SpecError, ["unknown argument", "optimisation_level"]),
        ("file_not_a_path", lambda c: jaxcc.load_cpp_file(42, ["f"]), SpecError, ["path", "int"]),
        ("missing_file", lambda c: jaxcc.load_cpp_file(c.scratch / "nope.cc", ["f"]), SpecError, ["cannot read", "nope.cc", "readable source file"]),
        ("file_is_directory", lambda c: jaxcc.load_cpp_file(c.scratch, ["f"]), SpecError, ["Is a directory", "readable source file"]),
        ("dir_missing", lambda c: jaxcc.load_cpp_dir(c.scratch / "nope"), SpecError, ["is not a directory", "directory of the sources"]),
        ("dir_without_sources", lambda c: jaxcc.load_cpp_dir(c.file("x.txt", "x").parent), SpecError, ["no file", "file_patterns"]),
        ("dir_pattern_string", lambda c: jaxcc.load_cpp_dir(c.file("x.txt", "x").parent, file_patterns="*.cu"), SpecError, ["no file", "['*.cu']"]),
        ("bad_timeout_env", lambda c: _with_env(c, JAXCC_BUILD_TIMEOUT="ten"), SpecError, ["JAXCC_BUILD_TIMEOUT='ten'", "number of seconds"]),
        ("negative_timeout_env", lambda c: _with_env(c, JAXCC_BUILD_TIMEOUT="-5"), SpecError, ["JAXCC_BUILD_TIMEOUT='-5'", "number of seconds"]),
        ("nan_timeout_env", lambda c: _with_env(c, JAXCC_BUILD_TIMEOUT="nan"), SpecError, ["JAXCC_BUILD_TIMEOUT='nan'", "number of seconds"]),
        ("bad_cache_cap_env", lambda c: _with_env(c, JAXCC_CACHE_MAX_BYTES="lots"), SpecError, ["JAXCC_CACHE_MAX_BYTES: invalid byte size 'lots'", "for example 4G"]),
        ("build_dir_uncreatable", option(build_directory="/proc/jaxcc_hostile/build"), SpecError, ["build_directory /proc/jaxcc_hostile/build cannot be used", "leave build_directory unset"]),
        ("set_cache_dir_int", lambda c: jaxcc.set_cache_dir(42), SpecError, ["set_cache_dir: path must be", "int"]),
        ("clear_cache_int", lambda c: jaxcc.clear_cache(42), SpecError, ["clear_cache: name must be", "int"]),
        ("clear_cache_traversal", lambda c: jaxcc.clear_cache("../x"), SpecError, ["invalid module name '../x'", "such as 'my_kernels'"]),
    ],
)
# fmt: on


def _with_env(c: Context, **values):
    with environ(**values):
        return load(c, force_rebuild=True)


# fmt: off
table(
    "cuda",
    [
        ("arch_letters", lambda c: _cuda(c, "sm_xx"), SpecError, ["sm_xx", "8.0"]),
        ("arch_too_old", lambda c: _cuda(c, "1.0"), SpecError, ["'1.0'", "below 3.0", "such as \"8.0\""]),
        ("arch_empty", lambda c: _cuda(c, ""), SpecError, ["no GPU architecture given", "pass None"]),
        ("arch_in_list", lambda c: _cuda(c, "80,sm_xx"), SpecError, ["'sm_xx'", "such as \"8.0\""]),
        ("arch_dict", lambda c: _cuda(c, {"arch": 80}), SpecError, ["compute_capability must be", "'8.0'"]),
        ("cuda_cflags_int", lambda c: jaxcc.load_cuda_inline(c.name(), STD, ["f"], compute_capability="8.0", extra_cuda_cflags=3), SpecError, "extra_cuda_cflags must be a list of strings"),
        ("cuda_file_unknown_keyword", lambda c: jaxcc.load_cuda_file(c.file("k.cu", STD), ["f"], fast_math=True), SpecError, ["unknown argument", "fast_math"]),
        ("cuda_kernel_without_gpu", lambda c: _cuda_without_gpu(c), DeviceError, ["no GPU backend", "load_cpp_inline"], {"heavy": True, "needs": ("nvcc", "no_gpu")}),
    ],
)
# fmt: on


def _cuda(c: Context, arch):
    return jaxcc.load_cuda_inline(c.name(), STD, ["f"], compute_capability=arch)


def _cuda_without_gpu(c: Context):
    # CUDA functions take the stream they must launch on (a stream-less one does not build).
    src = STD.replace("float s)", "float s, int64_t stream)")
    mod = jaxcc.load_cuda_inline(c.name("cuda"), src, ["f"], compute_capability="8.0")
    return mod.f(X, s=1.0)


def _jax_has_gpu() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def kernel(name="hostile_prim", **defs):
    """An XLACustomKernel with pure-JAX kernels: defs maps platform -> backend name."""
    k = jaxcc.XLACustomKernel(f"{name}_{uuid.uuid4().hex[:6]}")
    for platform, backend in defs.items():
        k.def_kernel(backend, platform, lambda outs, **params: lambda x: x * 2)
    return k


def _generator_raises(c: Context):
    k = kernel(cpu="jnp")
    k.def_kernel("broken", "cpu", lambda outs, **p: (_ for _ in ()).throw(ValueError("no tiles")))
    return k(X, outs=OUT, backend="broken")


def _generator_not_callable(c: Context):
    k = kernel()
    k.def_kernel("odd", "cpu", lambda outs, **p: 42)
    return k(X, outs=OUT)


def _wrong_output_shape(c: Context):
    k = kernel()
    k.def_kernel("short", "cpu", lambda outs, **p: lambda x: x[:2])
    return k(X, outs=OUT)


def _benchmark(platform="cpu", **options):
    k = kernel(cpu="jnp")
    k.def_call(lambda x: k(x, outs=OUT))
    k.def_benchmark_data(lambda *, platform: [])
    return k.benchmark(platform=platform, **options)


def _kernel_returns_string(c: Context):
    k = kernel()
    k.def_kernel("odd", "cpu", lambda outs, **p: lambda x: "result")
    return k(X, outs=OUT)


def _only_backend_raises(c: Context):
    k = kernel()
    k.def_kernel("lonely", "cpu", lambda outs, **p: lambda x: x * (1 / 0))
    return k(X, outs=OUT)


def _benchmark_without_data(c: Context):
    return kernel(cpu="jnp").benchmark(platform="cpu")


# fmt: off
table(
    "custom_kernel",
    [
        ("empty_name", lambda c: jaxcc.XLACustomKernel(""), SpecError, "name must be a non-empty string"),
        ("int_name", lambda c: jaxcc.XLACustomKernel(3), SpecError, "name must be a non-empty string"),
        ("empty_backend", lambda c: kernel().def_kernel("", "cpu", lambda **p: None), SpecError, "backend must be a non-empty string"),
        ("unknown_platform", lambda c: kernel().def_kernel("jnp", "fpga", lambda **p: None), SpecError, ["platform must be one of", "cpu"]),
        ("generator_not_callable", lambda c: kernel().def_kernel("jnp", "cpu", 42), SpecError, ["must be callable", "int"]),
        ("pallas_on_cpu", lambda c: kernel().def_pallas_kernel("cpu", lambda **p: None), SpecError, ["'gpu' or 'tpu'", "def_kernel('pallas', 'cpu'"]),
        ("cuda_raw_three_args", lambda c: kernel().def_cuda_raw_kernel("cpu", len, True, False), SpecError, "takes (kg) or (platform, kg)"),
        ("unknown_backend", lambda c: kernel(cpu="jnp")(X, outs=OUT, backend="triton"), BackendError, ["unknown backend 'triton'", "registered"]),
        ("no_kernels", lambda c: kernel()(X, outs=OUT), BackendError, ["no kernel is registered", "def_kernel"]),
        ("platform_without_kernels", lambda c: kernel(gpu="pallas")(X, outs=OUT), BackendError, ["no kernel is registered for platform 'cpu'", "gpu"]),
        ("backend_not_on_platform", lambda c: kernel(cpu="jnp", gpu="pallas")(X, outs=OUT, backend="pallas"), BackendError, ["'pallas' is not registered for cpu", "jnp"]),
        ("empty_outs", lambda c: kernel(cpu="jnp")(X, outs=[]), CallError, ["at least one output", "ShapeDtypeStruct"]),
        ("outs_int", lambda c: kernel(cpu="jnp")(X, outs=[4]), CallError, ["needs .shape and .dtype", "ShapeDtypeStruct"]),
        ("unhashable_param", lambda c: kernel(cpu="jnp")(X, outs=OUT, sizes=[1, 2]), CallError, ["unhashable", "tuple instead of a list"]),
        ("reserved_param", lambda c: kernel(cpu="jnp")(X, outs=OUT, jaxcc_batch=1), CallError, ["reserved by jaxcc", "rename the parameter"]),
        ("string_input", lambda c: kernel(cpu="jnp")("abc", outs=OUT), CallError, ["input", "array"]),
        ("generator_raises", _generator_raises, KernelError, ["no tiles", "backend='jnp'"]),
        ("generator_not_returning_callable", _generator_not_callable, KernelError, ["returned int, not a callable", "No other backend"]),
        ("wrong_output_shape", _wrong_output_shape, CallError, ["returned [(2,):float32]", "Pass outs="]),
        ("set_default_unknown", lambda c: kernel(cpu="jnp").set_default("cpu", "numba"), BackendError, ["'numba' is not registered", "jnp"]),
        ("set_default_empty_platform", lambda c: kernel(cpu="jnp").set_default("gpu", "jnp"), BackendError, ["no kernels are registered", "def_kernel"]),
        ("global_bad_platform", lambda c: jaxcc.set_backend("fpga", "x"), BackendError, "platform must be one of"),
        ("global_empty_backend", lambda c: jaxcc.set_backend("cpu", ""), BackendError, "non-empty string"),
        ("tags_match_mode", lambda c: jaxcc.get_primitives_by_tags(["x"], match="some"), SpecError, ["'all' (every tag)", "got 'some'"]),
        ("jvp_rule_not_callable", lambda c: kernel().def_jvp_rule2(3), CallError, "must be callable or None"),
        ("benchmark_without_data", _benchmark_without_data, BenchmarkDataFnNotProvidedError, "def_benchmark_data"),
        ("def_call_not_callable", lambda c: kernel().def_call(3), SpecError, "def_call needs a callable"),
        ("call_without_def_call", lambda c: kernel().call(X), SpecError, "register one with def_call"),
        ("empty_tag", lambda c: kernel().def_tags("ok", ""), SpecError, "tags must be non-empty strings"),
        ("benchmark_data_not_callable", lambda c: kernel().def_benchmark_data([]), SpecError, "def_benchmark_data needs a callable"),
        ("benchmark_zero_runs", lambda c: _benchmark(n_runs=0), SpecError, "n_runs must be an integer >= 1"),
        ("benchmark_missing_device", lambda c: _benchmark(platform="tpu"), BackendError, ["no backends are registered for platform 'tpu'", "platform that has kernels (cpu)"]),
        ("get_backend_bad_platform", lambda c: jaxcc.get_backend("fpga"), BackendError, "platform must be one of"),
        ("empty_backend_on_call", lambda c: kernel(cpu="jnp")(X, outs=OUT, backend=""), BackendError, "backend must be a non-empty string"),
        ("kernel_returns_string", _kernel_returns_string, CallError, ["returned str", "one per entry of outs"]),
        ("only_backend_raises", _only_backend_raises, KernelError, ["division by zero", "No other backend"]),
        ("transpose_rule_not_callable", lambda c: kernel().def_transpose_rule(3), SpecError, "the transpose rule must be callable"),
        ("batching_rule_not_callable", lambda c: kernel().def_batching_rule("rule"), SpecError, "the batching rule must be callable"),
        ("numba_bad_bridge", lambda c: jaxcc.numba_kernel(len, OUT, bridge="ctypes"), CallError, "bridge must be 'native' or 'callback', got 'ctypes'"),
        ("numba_not_njit", lambda c: jaxcc.numba_kernel(len, OUT), CallError, ["numba.njit function", "builtin_function_or_method"]),
    ],
)
# fmt: on


# -- running a case -----------------------------------------------------------------------------


def check(case: Case, ctx: Context) -> str | None:
    """Runs `case`; returns None if it raised its typed error with every needle, else why not.
    Cases run on the CPU, where the catalogue's kernels live, even where JAX has a GPU."""
    try:
        with jax.default_device(jax.devices("cpu")[0]):
            result = case.action(ctx)
            if isinstance(result, (jax.Array, list, tuple)):
                jax.block_until_ready(result)
    except case.error as e:
        message = str(e)
        missing = [n for n in case.needles if n not in message]
        if missing:
            return f"message lacks {missing!r}: {message[:2000]}"
        if len(message) > 20_000:
            return f"message is {len(message)} characters long"
        return None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - the point is to catch whatever escaped
        raised = f"{type(e).__module__}.{type(e).__name__}"
        return f"raised {raised} instead of {case.error.__name__}: {str(e)[:2000]}"
    return f"no error (returned {type(result).__name__})"


def unmet_need(case: Case) -> str | None:
    if "nvcc" in case.needs and not (shutil.which("nvcc") or os.environ.get("JAXCC_NVCC")):
        return "needs nvcc"
    if "no_gpu" in case.needs and _jax_has_gpu():
        return "needs a process without a GPU backend"
    return None


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return Context(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case, ctx):
    reason = unmet_need(case)
    if reason:
        pytest.skip(reason)
    failure = check(case, ctx)
    assert failure is None, f"{case.id}: {failure}"


def test_catalogue_covers_every_category():
    counts = collections.Counter(c.category for c in CASES)
    assert len(CASES) >= 100 and len(counts) >= 12, counts
    assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"
    assert all(issubclass(c.error, jaxcc.JaxccError) for c in CASES)
    print(f"\nhostile input catalogue: {len(CASES)} cases")
    for category, n in counts.items():
        print(f"  {category:<20} {n:>4}")


# Compiler runs, left out of the subprocess summary but for these representatives.
SUMMARY_HEAVY = {"compile_and_link/syntax_error", "compile_and_link/unresolved_at_load"}


def in_summary(case: Case) -> bool:
    return (not case.heavy or case.id in SUMMARY_HEAVY) and not unmet_need(case)


def summary(scratch: str) -> None:
    """Runs every cheap case in this interpreter and prints the table (used in a subprocess)."""
    ctx = Context(Path(scratch))
    totals, typed = collections.Counter(), collections.Counter()
    failures = []
    for case in CASES:
        if not in_summary(case):
            continue
        totals[case.category] += 1
        failure = check(case, ctx)
        if failure is None:
            typed[case.category] += 1
        else:
            failures.append(f"{case.id}: {failure}")
    # The process is intact after every failure: a kernel still runs correctly.
    assert float(ctx.calls.add(X, X)[0]) == 2.0
    print(f"{'category':<20} {'cases':>5} {'typed':>5}")
    for category in totals:
        print(f"  {category:<18} {totals[category]:>5} {typed[category]:>5}")
    for failure in failures:
        print("FAILED", failure)
    print(f"hostile inputs: {sum(totals.values())} cases, {sum(typed.values())} typed errors")


def test_summary_in_a_subprocess(ctx):
    ctx.calls  # noqa: B018 - built here, so the subprocess gets a cache hit
    with tempfile.TemporaryDirectory() as scratch:
        code = (
            f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            f"import test_hostile_inputs; test_hostile_inputs.summary({scratch!r})\n"
        )
        result = run_python(code, timeout=600)
    assert result.returncode == 0, result.stderr[-5000:]
    lines = result.stdout.splitlines()
    failed = [line for line in lines if line.startswith("FAILED")]
    assert not failed, "\n".join(failed)
    rows = [line.split() for line in lines if line.startswith("  ")]
    expected = collections.Counter(c.category for c in CASES if in_summary(c))
    assert {r[0]: int(r[1]) for r in rows} == dict(expected), result.stdout
    assert all(r[1] == r[2] for r in rows), result.stdout
    total = sum(expected.values())
    assert f"hostile inputs: {total} cases, {total} typed errors" in lines, result.stdout
    print("\n" + "\n".join(lines))


if __name__ == "__main__":  # python tests/test_hostile_inputs.py: every case, one line each
    sys.path.insert(0, str(Path(__file__).parent))
    context = Context(Path(tempfile.mkdtemp(prefix="jaxcc-hostile-")))
    atexit.register(shutil.rmtree, context.scratch, True)
    jaxcc.set_cache_dir(context.scratch / "cache")
    for c in CASES:
        if len(sys.argv) > 1 and not any(a in c.id for a in sys.argv[1:]):
            continue
        outcome = unmet_need(c) or check(c, context) or "ok"
        print(f"{c.id:<45} {outcome[:600]!r}")

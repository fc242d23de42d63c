"""Binding a Triton kernel's parameters: which are buffers, constexprs and runtime scalars, the
Triton type of each (pointer element types, scalar widths as Triton infers them) and the bytes
the launcher passes for a scalar."""

from __future__ import annotations

import numpy as np

from jaxcc.errors import CallError

_WHO = "triton_kernel"

POINTER_TYPES = {
    "bool": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}
SCALAR_NUMPY = {
    "i1": np.uint8, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "fp16": np.float16, "i32": np.int32, "u32": np.uint32, "fp32": np.float32,
    "i64": np.int64, "u64": np.uint64, "fp64": np.float64,
}  # fmt: skip
# Bytes of a scalar parameter of each Triton type, as the launcher passes it (bf16 is packed by
# hand: NumPy has no bfloat16).
SCALAR_BYTES = {t: np.dtype(n).itemsize for t, n in SCALAR_NUMPY.items()} | {"bf16": 2}


def pointer_type(dtype, what: str) -> str:
    name = np.dtype(dtype).name
    if name not in POINTER_TYPES:
        raise CallError(
            f"{_WHO}: {what} has dtype {name}, which Triton kernels do not take; cast it first "
            f"(supported: {', '.join(POINTER_TYPES)})"
        )
    return "*" + POINTER_TYPES[name]


def scalar_type(name: str, value, annotation: str) -> str:
    if annotation in SCALAR_BYTES:
        return annotation
    if isinstance(value, (bool, np.bool_)):
        return "i1"
    if isinstance(value, np.integer):
        return POINTER_TYPES[np.dtype(type(value)).name]
    if isinstance(value, int):  # Triton's own rule for Python ints
        if -(2**31) <= value < 2**31:
            return "i32"
        if -(2**63) <= value < 2**63:
            return "i64"
        if value < 2**64:
            return "u64"
        raise CallError(f"{_WHO}: scalar {name}={value} does not fit in 64 bits")
    if isinstance(value, np.floating) and np.dtype(type(value)).name in POINTER_TYPES:
        return POINTER_TYPES[np.dtype(type(value)).name]
    if isinstance(value, float):
        return "fp32"
    raise CallError(
        f"{_WHO}: parameter {name} is a runtime scalar of the kernel, so it needs a Python or "
        f"NumPy number, got {type(value).__name__}; pass arrays as inputs, or mark the parameter "
        "tl.constexpr to make it a compile-time constant"
    )


def scalar_word(type_name: str, value) -> int:
    """The int64 whose little-endian bytes start with the scalar's bytes."""
    word = np.zeros(1, np.int64)
    if type_name == "bf16":
        bits = np.array([value], np.float32).view(np.uint32)[0] >> 16  # truncation, as Triton
        word.view(np.uint16)[0] = bits
    else:
        item = np.array([value]).astype(SCALAR_NUMPY[type_name])
        word.view(np.uint8)[: item.itemsize] = item.view(np.uint8)
    return int(word[0])


def bind_parameters(fn, n_buffers: int, buffer_types: list[str], params: dict):
    """(signature, constexprs, scalars, meta) for the kernel's parameters: buffers first, then
    the rest by name from `params` or their defaults."""
    kernel_params = fn.params
    if len(kernel_params) < n_buffers:
        raise CallError(
            f"{_WHO}: {fn.__name__} takes {len(kernel_params)} parameter(s) but is called with "
            f"{n_buffers} buffer(s) (its inputs, then its outputs)"
        )
    signature, constexprs, scalars, meta = {}, {}, [], {}
    remaining = dict(params)
    for index, param in enumerate(kernel_params):
        if index < n_buffers:
            if param.is_constexpr:
                raise CallError(
                    f"{_WHO}: parameter {param.name} of {fn.__name__} is a tl.constexpr, but "
                    f"position {index} receives a buffer (inputs, then outputs, come first)"
                )
            signature[param.name] = buffer_types[index]
            continue
        if param.name in remaining:
            value = remaining.pop(param.name)
        elif param.has_default:
            value = param.default
        else:
            raise CallError(
                f"{_WHO}: {fn.__name__} needs a value for parameter {param.name}; pass it as "
                f"{param.name}=... (buffers fill the first {n_buffers} parameters)"
            )
        meta[param.name] = value
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            constexprs[(index,)] = value
        else:
            type_name = scalar_type(param.name, value, param.annotation)
            signature[param.name] = type_name
            scalars.append((type_name, value))
    if remaining:
        raise CallError(
            f"{_WHO}: {fn.__name__} has no parameter(s) {', '.join(sorted(remaining))}; its "
            f"parameters are {', '.join(p.name for p in kernel_params)}"
        )
    return signature, constexprs, scalars, meta

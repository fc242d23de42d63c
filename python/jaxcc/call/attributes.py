"""Converting Python attribute values to the exact scalar type a kernel declared.

XLA decodes attributes strictly (a Python float is f64, an int is i64), so a kernel declaring
`float scale` would reject `scale=2.0`. jaxcc converts, with range checks, so users pass plain
Python numbers."""

from __future__ import annotations

import math
import numbers

import numpy as np

from jaxcc.errors import CallError

_INTEGER_TYPES = {
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
}
_FLOAT_TYPES = {"float32": np.float32, "float64": np.float64}


def _bfloat16_bits(value: float) -> np.uint16:
    import ml_dtypes  # a jax dependency

    return np.asarray(value, dtype=ml_dtypes.bfloat16).view(np.uint16)[()]


def convert_attribute(function: str, name: str, declared: str, value):
    """Returns `value` as the numpy scalar XLA expects for an attribute declared `declared`."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if hasattr(value, "aval") or isinstance(value, np.ndarray):
        raise CallError(
            f"{function}: attribute '{name}' must be a Python or NumPy scalar known at trace "
            f"time, got {type(value).__name__}. Pass array-valued or traced data as an array "
            "argument instead."
        )
    if declared == "bool":
        if not isinstance(value, (bool, np.bool_, numbers.Integral)) or value not in (0, 1):
            raise CallError(
                f"{function}: attribute '{name}' is bool; got {value!r}. Pass True or False "
                "(or 0 / 1)."
            )
        return np.bool_(bool(value))
    if declared in _INTEGER_TYPES:
        if isinstance(value, (bool, np.bool_)):
            raise CallError(
                f"{function}: attribute '{name}' is {declared}; got the bool {value!r}. Pass an "
                "integer (int(flag)), or declare the C++ parameter as bool."
            )
        if not isinstance(value, numbers.Integral):
            if isinstance(value, numbers.Real) and float(value).is_integer():
                value = int(value)
            else:
                raise CallError(
                    f"{function}: attribute '{name}' is {declared}; got {value!r} "
                    f"({type(value).__name__}). Pass an integer."
                )
        info = np.iinfo(_INTEGER_TYPES[declared])
        if not info.min <= int(value) <= info.max:
            # int64 and uint64 are the widest attribute types: past them only an array helps.
            wider = (
                "pass it as an array argument instead (no attribute type is wider)"
                if declared in ("int64", "uint64")
                else "declare a wider C++ type"
            )
            raise CallError(
                f"{function}: attribute '{name}' = {value} does not fit {declared} "
                f"[{info.min}, {info.max}]. Pass a value in that range, or {wider}."
            )
        if declared == "uint64" and int(value) > np.iinfo(np.int64).max:
            # JAX builds integer attributes through a signed 64-bit path and fails on these.
            raise CallError(
                f"{function}: attribute '{name}' = {value} is above 2**63 - 1, which JAX cannot "
                "encode as an attribute; pass it as an array argument instead."
            )
        return _INTEGER_TYPES[declared](int(value))
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise CallError(
            f"{function}: attribute '{name}' is {declared}; got {value!r} "
            f"({type(value).__name__}). Pass a real number."
        )
    try:
        as_float = float(value)
    except OverflowError:  # an int beyond float64, e.g. 10**400
        raise CallError(
            f"{function}: attribute '{name}' = {value} is too large for any float type; "
            "pass a smaller value."
        ) from None
    if declared in _FLOAT_TYPES:
        _check_float_range(function, name, declared, as_float, np.finfo(_FLOAT_TYPES[declared]).max)
        return _FLOAT_TYPES[declared](as_float)
    if declared == "float16":
        _check_float_range(function, name, declared, as_float, float(np.finfo(np.float16).max))
        return np.float16(as_float).view(np.uint16)
    if declared == "bfloat16":
        import ml_dtypes

        _check_float_range(
            function, name, declared, as_float, float(ml_dtypes.finfo("bfloat16").max)
        )
        return _bfloat16_bits(as_float)
    raise CallError(f"{function}: attribute '{name}' has unsupported type {declared}.")


def _check_float_range(function: str, name: str, declared: str, value: float, largest) -> None:
    # A finite value the type cannot hold would arrive as inf: a silently different number.
    # Rounding to the nearest representable value is expected; overflowing is not. inf and nan
    # passed as such are kept.
    if math.isfinite(value) and abs(value) > float(largest):
        raise CallError(
            f"{function}: attribute '{name}' = {value!r} is outside the range of {declared} "
            f"(largest magnitude {float(largest):g}); pass a smaller value or declare the "
            "parameter as double / attr type float64."
        )

"""What the eager fast path of XLACustomKernel.__call__ keys a call by (decision 61, issue 38):
its `outs` (structure, shapes, dtypes, and the x64 flag where that changes them) and its
parameters by type and bits; and whether its inputs are concrete arrays."""

from __future__ import annotations

import functools

import numpy as np


def canonical_dtype(dtype):
    """`dtype` as JAX canonicalises an input's (x64 off: float64 is float32)."""
    import jax

    return np.dtype(jax.dtypes.canonicalize_dtype(dtype))


@functools.cache
def _fast_path_types() -> tuple:
    import jax

    from jaxcc._jax_compat import Tracer

    return jax.ShapeDtypeStruct, jax.Array, Tracer


# Dtypes whose canonical form depends on jax_enable_x64 (float64 becomes float32 with it off).
_WIDE_DTYPES = frozenset(np.dtype(d) for d in ("float64", "int64", "uint64", "complex128"))


def _x64_enabled() -> bool:
    import jax

    return bool(jax.config.jax_enable_x64)


def outs_key(outs):
    """A hashable key equal for two `outs` with the same structure, shapes and dtypes (all that
    the checked path reads of them), or None where `outs` is not a ShapeDtypeStruct or a flat
    list/tuple of them (those calls bind). A 64-bit dtype adds the x64 flag: the checked path
    canonicalises it (float64 is float32 with x64 off), so the same outs mean other outputs."""
    sds = _fast_path_types()[0]
    kind = type(outs)
    if kind is sds:
        dtype = outs.dtype
        key = (outs.shape, dtype)
        return (*key, _x64_enabled()) if dtype.itemsize >= 8 and dtype in _WIDE_DTYPES else key
    if (kind is list or kind is tuple) and outs and all(type(o) is sds for o in outs):
        key = (kind, *[(o.shape, o.dtype) for o in outs])
        if any(o.dtype in _WIDE_DTYPES for o in outs):
            return (*key, _x64_enabled())
        return key
    return None


# Parameter types whose equality is identity of value and type already (True == 1 and
# 0.0 == -0.0 are why the others need more; issue 38).
_PLAIN_PARAM_TYPES = frozenset((int, str, bool, type(None), bytes))


def _param_key(value):
    """`value` as a cache key that tells apart what compiles differently: its type (True is not
    1, np.float32(1) is not 1.0) and, for floating-point numbers, its bits (-0.0 is not 0.0, and
    a NaN equals itself), inside tuples and frozensets too. Other objects key by their own
    equality. An unhashable value stays in the key, which then raises TypeError on lookup."""
    kind = type(value)
    if kind in _PLAIN_PARAM_TYPES:
        return (kind, value)
    if kind is float:
        return (kind, value.hex())
    if kind is complex:
        return (kind, value.real.hex(), value.imag.hex())
    if isinstance(value, (np.floating, np.complexfloating)):
        return (kind, value.tobytes())
    if kind is tuple:
        return (kind, *[_param_key(v) for v in value])
    if kind is frozenset:
        return (kind, frozenset(_param_key(v) for v in value))
    return (kind, value)


def params_key(params: dict) -> tuple:
    if not params:
        return ()
    return tuple((name, _param_key(value)) for name, value in params.items())


# Concrete array types seen so far (jax.Array, not a tracer): `type(x) in` is much cheaper than
# isinstance(x, jax.Array), whose ABC check runs on every call.
_concrete_array_types: set[type] = set()


def all_concrete_arrays(ins) -> bool:
    known = _concrete_array_types
    for x in ins:
        kind = type(x)
        if kind in known:
            continue
        _, array_type, tracer_type = _fast_path_types()
        if not isinstance(x, array_type) or isinstance(x, tracer_type):
            return False
        known.add(kind)
    return True

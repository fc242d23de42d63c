"""The one `outs` helper of the bridges (Numba CPU, Numba-CUDA, Triton): what a kernel returns,
described as one ShapeDtypeStruct-like or a sequence of them."""

from __future__ import annotations

from ...errors import CallError


def output_types(outs, who: str):
    """(single, [ShapeDtypeStruct]) for `outs`: one ShapeDtypeStruct-like or a sequence of them."""
    import jax

    single = hasattr(outs, "shape") and hasattr(outs, "dtype")
    out_list = [outs] if single else list(outs)
    for item in out_list:
        if not hasattr(item, "shape") or not hasattr(item, "dtype"):
            kind = type(item).__name__
            raise CallError(f"{who}: outs entries need .shape and .dtype, got {kind}")
    return single, [jax.ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in out_list]

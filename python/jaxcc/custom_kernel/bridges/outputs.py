"""The one `outs` helper of the bridges (Numba CPU, Numba-CUDA, Triton): what a kernel returns,
described as one ShapeDtypeStruct-like or a sequence of them."""

from __future__ import annotations

from jaxcc.errors import CallError


def output_types(outs, who: str):
    """(single, [ShapeDtypeStruct]) for `outs`: one ShapeDtypeStruct-like or a sequence of them."""
    import jax

    single = hasattr(outs, "shape") and hasattr(outs, "dtype")
    out_list = [outs] if single else list(outs)
    for item in out_list:
        if not hasattr(item, "shape") or not hasattr(item, "dtype"):
            kind = type(item).__name__
            raise CallError(f"{who}: outs entries need .shape and .dtype, got {kind}")
    # Canonical as JAX makes the inputs (x64 off: float64 is float32), or the kernel would be
    # compiled for, and write, another dtype than XLA's buffer has (issue 38).
    canonical = jax.dtypes.canonicalize_dtype
    return single, [jax.ShapeDtypeStruct(tuple(o.shape), canonical(o.dtype)) for o in out_list]

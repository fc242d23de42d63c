"""A `jaxcc::Scratch` workspace's size at the call: checked, and made the hidden result XLA's
buffer assignment places (decision 94), per call or per shard (decision 118)."""

from __future__ import annotations

from jaxcc.errors import CallError

#: Largest `scratch_bytes` a call may ask for (16 GiB); above it the size is almost surely wrong.
MAX_SCRATCH_BYTES = 1 << 34


def scratch_request(function: str, attributes: dict):
    """The call's `scratch_bytes` (removed from `attributes`): an int, or a callable of the
    call's operands that returns one (evaluated on each shard's own operands under a sharding
    rule, docs/usage.md)."""
    import numpy as np

    nbytes = attributes.pop("scratch_bytes", None)
    if nbytes is None:
        raise CallError(
            f"{function}: takes a jaxcc::Scratch; pass its size in bytes as "
            "scratch_bytes=<int> (computed from the shapes, e.g. x.size * 4), or as a "
            "function of the operands (e.g. lambda x: x.size * 4)."
        )
    if callable(nbytes):
        return nbytes
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
        raise CallError(
            f"{function}: scratch_bytes must be an int or a function of the operands that "
            f"returns one, got {type(nbytes).__name__}."
        )
    _check_bytes(function, int(nbytes))
    return int(nbytes)


def _check_bytes(function: str, nbytes: int) -> None:
    if not 0 <= nbytes <= MAX_SCRATCH_BYTES:
        raise CallError(
            f"{function}: scratch_bytes={nbytes} is outside [0, {MAX_SCRATCH_BYTES}] "
            "(jaxcc.MAX_SCRATCH_BYTES, 16 GiB); a workspace that large is almost surely a "
            "size computed wrongly. Split the work, or allocate it as an output."
        )


def scratch_type(function: str, request, operands):
    """The hidden result that is the call's `jaxcc::Scratch`: uint8, `request` bytes, or what
    `request(*operands)` returns for a callable."""
    import jax
    import numpy as np

    nbytes = request
    if callable(request):
        nbytes = request(*operands)
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
            raise CallError(
                f"{function}: the scratch_bytes function returned {type(nbytes).__name__}; it "
                "must return the workspace size in bytes as an int computed from the operands' "
                "shapes (e.g. lambda x: x.size * 4)."
            )
        nbytes = int(nbytes)
        _check_bytes(function, nbytes)
    return jax.ShapeDtypeStruct((nbytes,), np.uint8)

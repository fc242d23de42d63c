"""What a call does when XLA would gather its operands (docs/sharding.md, "Calls without a
rule"): the check on calls of functions without a rule, the report of a split the mesh cannot
divide, and the switch between warning, error and silence that both obey."""

from __future__ import annotations

from jaxcc.errors import SpecError

tracing_rule = [0]  # > 0 while a call with a rule traces its per-shard body


def spec_axes(entry):
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


CHECK_MODES = ("warn", "error", "off")
_check_mode: list = [None]  # set_sharding_check's choice; None = $JAXCC_SHARDING_CHECK or "warn"
_warned: set = set()


def set_sharding_check(mode: str | None) -> None:
    """What a call of a function without a sharding rule on sharded inputs does: "warn" (once
    per function, the default), "error" (ShardingError) or "off"; None = $JAXCC_SHARDING_CHECK."""
    if mode is not None and mode not in CHECK_MODES:
        raise SpecError(f"sharding check must be one of {', '.join(CHECK_MODES)} or None, got "
                        f"{mode!r}")  # fmt: skip
    _check_mode[0] = mode


def sharding_check() -> str:
    import os

    mode = _check_mode[0] or os.environ.get("JAXCC_SHARDING_CHECK", "") or "warn"
    if mode not in CHECK_MODES:
        raise SpecError(f"JAXCC_SHARDING_CHECK must be one of {', '.join(CHECK_MODES)}, got "
                        f"{mode!r}")  # fmt: skip
    return mode


def _sharded_spec(x):
    """The PartitionSpec of `x` when it is split over more than one device, else None. Sees
    concrete jax.Arrays and, under jit, arrays of meshes with Explicit axes (jax.make_mesh's
    default); Auto-axis shardings are invisible at trace time (docs/sharding.md)."""
    import jax

    sharding = getattr(x, "sharding", None) if isinstance(x, jax.Array) else None
    try:
        if sharding is None or not hasattr(sharding, "spec"):
            sharding = getattr(jax.typeof(x), "sharding", None)
    except TypeError:
        return None
    spec = getattr(sharding, "spec", None)
    mesh = getattr(sharding, "mesh", None)
    if spec is None or mesh is None:
        return None
    sizes = dict(getattr(mesh, "shape", {}))
    manual = set(getattr(mesh, "manual_axes", ()) or ())
    for entry in spec:
        for axis in spec_axes(entry):
            if axis not in manual and sizes.get(axis, 1) > 1:
                return spec
    return None


def check_rule_less(function: str, fn_name: str, arrays, declare: str | None = None) -> None:
    """Warns (or raises) once per function when a call without a rule gets sharded inputs.
    `declare` replaces the advice on how to declare a rule (an XLACustomKernel's differs)."""
    import warnings

    from jaxcc.errors import ShardingError, ShardingWarning

    mode = sharding_check()
    if tracing_rule[0] or mode == "off" or (mode == "warn" and function in _warned):
        return
    for i, x in enumerate(arrays):
        spec = _sharded_spec(x)
        if spec is None:
            continue
        declare = declare or (
            f"load it with sharding={{'{fn_name}': 'b i -> b i'}} (or end its annotation with "
            f'sharding="b i -> b i"; one operand per input and output, one factor per '
            "dimension, docs/sharding.md)"
        )
        message = (
            f"{function}: input {i + 1} is sharded ({spec}) but `{fn_name}` has no sharding "
            "rule, so XLA inserts an all-gather of it onto every device and runs the whole "
            f"kernel replicated there (output sharding P()). Declare how the kernel splits: "
            f"{declare}, or call it inside jax.shard_map. "
            "JAXCC_SHARDING_CHECK=error makes this an error, =off silences it."
        )
        if mode == "error":
            raise ShardingError(message)
        _warned.add(function)
        warnings.warn(message, ShardingWarning, stacklevel=4)
        return


def report_uneven_split(function: str, rule_text: str, factor: str, size: int, axes,
                        devices: int) -> None:  # fmt: skip
    """A factor the chosen mesh axes do not divide is left unsplit, which makes XLA gather that
    dimension: said once per call site, like a call without a rule."""
    import warnings

    from jaxcc.errors import ShardingError, ShardingWarning

    message = (
        f'function `{function}`: sharding rule "{rule_text}": factor `{factor}` has size '
        f"{size}, which mesh axes {tuple(axes)} ({devices} devices) do not divide, so the kernel "
        "cannot run on equal shards: XLA gathers that dimension onto every device instead. Pad "
        f"it to a multiple of {devices} or split it over fewer devices. "
        "JAXCC_SHARDING_CHECK=error makes this an error, =off silences it."
    )
    mode = sharding_check()
    if mode == "error":
        raise ShardingError(message)
    if mode == "warn":
        warnings.warn(message, ShardingWarning, stacklevel=2)


_gathers_reported: set = set()


def report_gather(function: str, rule_text: str, factor: str, axes, why: str,
                  moves: str = "gathers that dimension onto every device") -> None:  # fmt: skip
    """An input arrived split in a way the rule cannot use (along a factor it keeps whole, or
    unlike another input): XLA `moves` it before the kernel runs (right, but a collective the
    user should know of). Said once per function, factor and kind of move."""
    import warnings

    from jaxcc.errors import ShardingError, ShardingWarning

    mode = sharding_check()
    if mode == "off" or (mode == "warn" and (function, factor, moves) in _gathers_reported):
        return
    shown = factor if not factor.startswith("...") else f"... dimension {factor[3:]}"
    message = (
        f'function `{function}`: sharding rule "{rule_text}": an input is split along factor '
        f"`{shown}` (mesh axes {tuple(axes)}), but {why}, so XLA {moves} before the kernel "
        "runs. Split the input along another factor, or change the rule (docs/sharding.md, "
        '"Factor kinds"). JAXCC_SHARDING_CHECK=error makes this an error, =off silences it.'
    )
    if mode == "error":
        raise ShardingError(message)
    _gathers_reported.add((function, factor, moves))
    warnings.warn(message, ShardingWarning, stacklevel=2)


def report_batch_gather(primitive: str, axes) -> None:
    """Under jax.vmap, an XLACustomKernel without a rule and without a vectorised kernel scans
    the whole batch, so a batch axis split over mesh axes is gathered first. Said once per
    primitive (ShardingWarning; ShardingError under JAXCC_SHARDING_CHECK=error)."""
    import warnings

    from jaxcc.errors import ShardingError, ShardingWarning

    mode = sharding_check()
    key = (primitive, "vmap batch axis", "gathers")
    if mode == "off" or (mode == "warn" and key in _gathers_reported):
        return
    message = (
        f"{primitive}: under jax.vmap the batch axis is split over mesh axes {tuple(axes)}, but "
        "the primitive has no sharding rule and its kernel is not vectorized=True, so it runs "
        "once per batch element over the whole batch and the batch axis is gathered onto every "
        f"device first. Give the primitive a rule (jaxcc.XLACustomKernel('{primitive}', "
        "sharding=...): the batch axis then stays split), or register a kernel that takes a "
        'leading batch axis with vectorized=True (docs/custom_kernel.md, "Sharding"). '
        "JAXCC_SHARDING_CHECK=error makes this an error, =off silences it."
    )
    if mode == "error":
        raise ShardingError(message)
    _gathers_reported.add(key)
    warnings.warn(message, ShardingWarning, stacklevel=2)

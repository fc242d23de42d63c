"""Everything in jaxcc that depends on the JAX version, in one place.

Tested: JAX 0.10.x on Python 3.11 and the newest JAX on PyPI (0.12.x) on Python 3.12; see the
README's "Tested versions". Other modules take JAX's non-public names (`jax.core`, `jax.extend`,
`jax.interpreters`) from here, never with an `import` or `try: ... except ImportError` of their
own; tests/test_jax_compat.py checks that. Each shim says which JAX versions need it, so it can go
when the lowest tested JAX no longer does.

Importing this module does not import JAX (`import jaxcc` stays cheap): the shims are attributes
resolved on first use (`from .._jax_compat import ShapedArray` inside a function).
"""

from __future__ import annotations

import re
import sys
import warnings

# The lowest JAX that CI runs the suite on (Python 3.11's newest JAX); pyproject.toml's
# `jax>=` bound says the same. The newest tested is whatever PyPI had when CI last ran.
MIN_JAX = (0, 10, 2)
TESTED_JAX = "0.10.2 (Python 3.11) and the newest on PyPI, 0.12.x (Python 3.12, 3.13 smoke)"

# Every jax.ffi.ffi_call jaxcc makes passes an explicit vmap_method, this one unless the caller
# chose another. JAX <= 0.10 treats a missing vmap_method as "sequential" with a
# DeprecationWarning; JAX >= 0.11 raises NotImplementedError under jax.vmap instead.
DEFAULT_VMAP_METHOD = "sequential"


class JaxVersionWarning(UserWarning):
    """The installed JAX is older than the lowest one jaxcc is tested with (or is missing).

    A warning, not an error: pip's `jax>=` bound already stops ordinary installs, and an older JAX
    may still do what a given user needs; issued when jaxcc is imported, before anything an old
    JAX could break, so whatever fails later comes explained."""


def _shaped_array():
    # jax.core.ShapedArray: public on every tested JAX (0.10-0.12); no jax.extend spelling yet.
    from jax.core import ShapedArray

    return ShapedArray


def _tracer():
    # jax.core.Tracer: public on every tested JAX (0.10-0.12).
    from jax.core import Tracer

    return Tracer


def _primitive():
    # jax.extend.core.Primitive: the only public spelling on every tested JAX (0.10-0.12 have no
    # jax.core.Primitive). JAX >= 0.11 documents "hijax" primitives
    # (jax.experimental.hijax.VJPHiPrimitive) for new code; they are experimental and need
    # JAX >= 0.11, so jaxcc's primitives stay jax.extend.core.Primitive with rules registered in
    # the interpreter tables below, which every tested JAX has.
    # Taken from jax._src.core, where it is defined (jax.extend.core re-exports that very class
    # on JAX 0.10.2 and 0.12.0.1): `import jax.extend.core` runs jax/extend/__init__.py, which
    # imports jax.extend.pallas and with it Pallas and checkify, 24-45 ms that the first
    # XLACustomKernel of a process would pay for nothing (decision 114). A JAX that moves the
    # class gets the public spelling.
    if "jax.extend.core" not in sys.modules:
        try:
            from jax._src.core import Primitive

            if isinstance(Primitive, type):
                return Primitive
        except ImportError:
            pass
    from jax.extend.core import Primitive

    return Primitive


def _mlir():
    # jax.interpreters.mlir (lower_fun, register_lowering): same names on JAX 0.10-0.12.
    from jax.interpreters import mlir

    return mlir


def _batching():
    # jax.interpreters.batching (primitive_batchers): same names on JAX 0.10-0.12.
    from jax.interpreters import batching

    return batching


def _ad():
    # jax.interpreters.ad (primitive_jvps, primitive_transposes, Zero, add_tangents,
    # UndefinedPrimal): same names on JAX 0.10-0.12.
    from jax.interpreters import ad

    return ad


def _trace_probes():
    # (jax._src.core.trace_ctx.is_top_level, jax._src.config.debug_key_reuse,
    # jax._src.config.disable_jit): private state the eager XLACustomKernel fast path reads
    # (decision 61); present on JAX 0.10.2, 0.11.2 and 0.12.0.1. (None, None, None) where a JAX
    # lacks them, and the fast path then steps aside for the ordinary bind.
    try:
        from jax._src import config, core

        return core.trace_ctx.is_top_level, config.debug_key_reuse, config.disable_jit
    except (ImportError, AttributeError):
        return None, None, None


def _batch_tracer():
    # jax._src.interpreters.batching.BatchTracer: tune/keys.py reads the vmaps around an operand
    # (its batch dimension and axis size) to key a tuned call at the shape the kernel runs on
    # (decision 192); present on JAX 0.10.2, 0.11.2 and 0.12.0.1. None where a JAX lacks it.
    try:
        from jax._src.interpreters.batching import BatchTracer

        return BatchTracer
    except ImportError:
        return None


def _xla_custom_call_targets():
    # jax._src.lib.xla_client.custom_call_targets(platform) -> {name: handler}: every target XLA
    # has for a platform, whoever registered it (jaxcc, jax.ffi, jaxlib). jaxcc.deserialize reads
    # it to tell registered targets from missing ones; present on JAX 0.10.2. None where a JAX
    # lacks it, and jaxcc then knows only the targets it registered itself.
    try:
        from jax._src.lib import xla_client

        return xla_client.custom_call_targets
    except (ImportError, AttributeError):
        return None


def _devices_during_lowering():
    # jax._src.dispatch.prim_requires_devices_during_lowering: the set of primitives whose
    # lowering needs the device assignment (custom_partitioning_p is in it). A primitive whose
    # lowering emits custom_partitioning must be in it too, or that lowering finds no devices.
    # Private; present on JAX 0.10.2. An empty set where a JAX lacks it (then a rule inside an
    # XLACustomKernel fails at lowering with JAX's own message).
    try:
        from jax._src import dispatch

        return dispatch.prim_requires_devices_during_lowering
    except (ImportError, AttributeError):
        return set()


def _varying_like():
    # Inside jax.shard_map, avals record the manual mesh axes a value varies over: JAX 0.10.2
    # spells it `aval.manual_axis_type.varying` (ManualAxisType), later JAX `aval.vma`.
    # varying_like(outs, args) -> outs varying over the union of the args' axes.
    def varying_of(aval):
        mat = getattr(aval, "manual_axis_type", None)
        if mat is not None:
            return frozenset(mat.varying)
        return frozenset(getattr(aval, "vma", None) or ())

    def varying_like(outs, args):
        axes = frozenset().union(*(varying_of(a) for a in args))
        if not axes:
            return list(outs)
        if hasattr(outs[0], "manual_axis_type"):
            from jax._src.core import ManualAxisType
            from jax.sharding import NamedSharding, PartitionSpec

            mesh = next(a.sharding.mesh for a in args if varying_of(a))
            mat = ManualAxisType(varying=axes)
            return [o.update(sharding=NamedSharding(mesh, PartitionSpec(*[None] * len(o.shape))),
                             manual_axis_type=mat) for o in outs]  # fmt: skip
        return [o.update(vma=axes) for o in outs]

    return varying_like


def _sdy_rule_attribute():
    # jax._src.custom_partitioning_sharding_rule: str_to_sdy_sharding_rule parses Shardy's einsum
    # notation, sdy_sharding_rule_to_mlir turns it into the `sdy.sharding_rule` attribute a custom
    # call carries under Shardy. Private; present on JAX 0.10.2 and 0.12.
    # sdy_rule_attribute(einsum, need_replication, in_types, out_types) -> MLIR attribute.
    from jax._src.custom_partitioning_sharding_rule import (
        sdy_sharding_rule_to_mlir,
        str_to_sdy_sharding_rule,
    )

    def sdy_rule_attribute(einsum, need_replication, in_types, out_types):
        rule = str_to_sdy_sharding_rule(einsum, need_replication_factors=need_replication)
        return sdy_sharding_rule_to_mlir(rule, in_types, out_types)

    return sdy_rule_attribute


_SHIMS = {
    "ShapedArray": _shaped_array,
    "Tracer": _tracer,
    "Primitive": _primitive,
    "mlir": _mlir,
    "batching": _batching,
    "ad": _ad,
    "trace_probes": _trace_probes,
    "batch_tracer": _batch_tracer,
    "xla_custom_call_targets": _xla_custom_call_targets,
    "devices_during_lowering": _devices_during_lowering,
    "varying_like": _varying_like,
    "sdy_rule_attribute": _sdy_rule_attribute,
}


def __getattr__(name: str):
    shim = _SHIMS.get(name)
    if shim is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = shim()
    globals()[name] = value  # resolved once; later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_SHIMS))


# -- the installed JAX's version ------------------------------------------------------------------


def version_tuple(version: str) -> tuple[int, ...]:
    """The leading numeric release of a version string: "0.12.0.1" -> (0, 12, 0, 1),
    "0.13.0.dev20260101" -> (0, 13, 0), "0.10.2rc1" -> (0, 10, 2)."""
    numbers = []
    for part in version.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(numbers)


def installed_jax_version() -> str | None:
    """JAX's version without importing JAX: `jax.__version__` when JAX is already imported, else
    the name of the `jax-<version>.dist-info` folder beside the package, else the installed
    distribution's metadata. None when JAX is not installed."""
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(getattr(jax, "__version__", None), str):
        return jax.__version__
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("jax")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return None
    found = list(Path(spec.origin).parent.parent.glob("jax-*.dist-info"))
    if len(found) == 1:
        return found[0].name[len("jax-") : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jax")
    except PackageNotFoundError:
        return None


def check_jax_version(version: str | None = None) -> str | None:
    """None when JAX (the installed one, or `version`) is at least the lowest tested; otherwise a
    message that names both versions and the fix. For `jaxcc doctor` and the import-time
    warning."""
    if version is None:
        version = installed_jax_version()
    lowest = ".".join(map(str, MIN_JAX))
    fix = f"pip install -U 'jax>={lowest}'"
    if version is None:
        return f"jaxcc needs JAX, which is not installed; {fix}"
    found = version_tuple(version)
    if found and found < MIN_JAX:
        return (
            f"jaxcc is tested with JAX >= {lowest} (tested: {TESTED_JAX}); this is JAX "
            f"{version}, which may fail in ways jaxcc cannot explain; {fix}"
        )
    return None


def warn_if_unsupported_jax() -> None:
    """Emits a JaxVersionWarning when check_jax_version() has something to say."""
    message = check_jax_version()
    if message is not None:
        warnings.warn(message, JaxVersionWarning, stacklevel=2)


# jaxcc/__init__.py imports this module first, so the warning comes before anything that an old
# JAX could break.
warn_if_unsupported_jax()

"""jax.export for functions that call jaxcc kernels, and a deserialize that checks targets first.

`jax.export` refuses custom calls outside JAX's own allow-list unless each target is named in a
`DisabledSafetyCheck.custom_call`. `export` names exactly the jaxcc targets the exported module
calls (plus whatever checks the caller disabled). The artefact keeps that list when serialized, so
`deserialize` knows, in a fresh process, which targets the blob needs and refuses to hand back an
artefact whose targets are not registered (jax #33522: running one could crash the process).

Target names are `<module name or target_prefix>.<function>`: chosen by the caller, so the same
in every process that loads the same module (docs/deploy.md, "Target names").
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

from jaxcc import _jax_compat
from jaxcc.call import ffi_targets
from jaxcc.call.compiled_module import CompiledModule
from jaxcc.errors import CallError, ExportError, MissingTargetError

if TYPE_CHECKING:
    from jax.export import DisabledSafetyCheck, Exported

# `stablehlo.custom_call @name(` in the module's text; a name with unusual characters is quoted.
_CUSTOM_CALL = re.compile(r'custom_call @(?:"((?:[^"\\]|\\.)*)"|([\w.$-]+))')
# The bridge launchers of XLACustomKernel (numba, numba_cuda, triton): jaxcc targets, but the
# kernel they call is an address (with the process id) passed as an attribute.
_BRIDGE = re.compile(r"^jaxcc_\w+_bridge_\d+_\d+\b")


def custom_call_targets(module_text: str) -> list[str]:
    """The custom-call target names in a StableHLO module's text, sorted, without repeats."""
    found = {quoted or plain for quoted, plain in _CUSTOM_CALL.findall(module_text)}
    return sorted(found)


def _jitted(fn: Callable[..., Any]):
    import jax

    if not callable(fn):
        raise ExportError(
            f"jaxcc.export: fn must be a function (or a jax.jit of one), got {type(fn).__name__}"
        )
    if hasattr(fn, "trace") and hasattr(fn, "lower"):
        return fn
    return jax.jit(fn)


def _checks(disabled_checks: Iterable[Any]) -> list[DisabledSafetyCheck]:
    from jax.export import DisabledSafetyCheck

    if isinstance(disabled_checks, (str, bytes)) or not isinstance(disabled_checks, Iterable):
        raise ExportError(
            "jaxcc.export: disabled_checks must be a list of jax.export.DisabledSafetyCheck, got "
            f"{type(disabled_checks).__name__}"
        )
    checks = list(disabled_checks)
    for check in checks:
        if not isinstance(check, DisabledSafetyCheck):
            raise ExportError(
                "jaxcc.export: disabled_checks must hold jax.export.DisabledSafetyCheck values "
                f"(e.g. DisabledSafetyCheck.custom_call('my_target')), got {check!r}"
            )
    return checks


def _export_allowing_jaxcc(jitted, user_checks, arg_shapes, export_kwargs):
    """(Exported, the jaxcc targets it was allowed to call). A function may load kernels while
    being traced, and XLACustomKernel builds its bridge launchers while being lowered, so a
    refusal is tried again while that registers new jaxcc targets (the registry only grows, so
    this ends)."""
    import jax
    from jax.export import DisabledSafetyCheck

    while True:
        known = set(ffi_targets.registered_targets())
        allowed = [*user_checks, *(DisabledSafetyCheck.custom_call(t) for t in sorted(known))]
        try:
            export = jax.export.export(jitted, disabled_checks=allowed, **export_kwargs)
            return export(*arg_shapes), known
        except NotImplementedError as e:
            _refuse_custom_partitioning(jitted, arg_shapes, e)
            raise
        except ValueError as e:
            if "custom calls whose targets have no compatibility guarantees" not in str(e):
                raise
            if set(ffi_targets.registered_targets()) == known:
                raise ExportError(
                    f"jaxcc.export: {e}\nOnly jaxcc's own targets are allowed automatically; "
                    "for another FFI target whose handler you ship yourself, pass "
                    "disabled_checks=[jax.export.DisabledSafetyCheck.custom_call('<target>')]."
                ) from None


def _refuse_custom_partitioning(jitted, arg_shapes, error: Exception) -> None:
    """ExportError naming the fix when jax.export refused the custom_partitioning callback of a
    call with a sharding rule (decision 103); returns for any other refusal."""
    if "host_callbacks" not in str(error):
        return
    try:
        text = jitted.lower(*arg_shapes).as_text()
    except Exception:  # noqa: BLE001 - only a better message was at stake
        return
    if "CustomSPMDPartitioning" not in text:
        return
    raise ExportError(
        "jaxcc.export: the function calls a jaxcc kernel with a sharding rule whose inputs' "
        "shardings are not known while tracing (a mesh with Auto axes, or no mesh): there the "
        "rule lowers through jax's custom_partitioning, a Python callback that jax.export "
        f"cannot serialize ({error}). Give the arguments' shapes shardings on a mesh with "
        "Explicit axes (jax.make_mesh's default): jax.ShapeDtypeStruct(shape, dtype, "
        "sharding=NamedSharding(mesh, P(...))); the rule then runs under shard_map (or as a "
        "plain call where nothing is split) and the artefact keeps the partitioned call "
        '(docs/sharding.md, "Deployment").'
    ) from None


def export(
    fn: Callable[..., Any],
    *arg_shapes: Any,
    disabled_checks: Sequence[DisabledSafetyCheck] = (),
    **export_kwargs: Any,
) -> Exported:
    """`jax.export.export(jax.jit(fn), ...)(*arg_shapes)` for a function that calls jaxcc kernels.

    The result is an ordinary `jax.export.Exported` (`.serialize()`, `.call(...)`), whose
    `disabled_safety_checks` allow exactly the jaxcc targets it calls, after the caller's own
    `disabled_checks`. `export_kwargs` go to `jax.export.export` (`platforms=["cpu", "cuda"]`).
    Kernels behind the numba/Triton bridges only run in the process that traced them, and are
    refused with an ExportError."""
    import jax
    from jax.export import DisabledSafetyCheck

    jitted = _jitted(fn)
    user_checks = _checks(disabled_checks)
    exported, candidates = _export_allowing_jaxcc(jitted, user_checks, arg_shapes, export_kwargs)
    used = [t for t in custom_call_targets(exported.mlir_module()) if t in candidates]
    bridges = [t for t in used if _BRIDGE.match(t)]
    if bridges:
        raise ExportError(
            f"jaxcc.export: the function calls {', '.join(bridges)}, the launcher of a "
            "numba_kernel/numba_cuda_kernel/triton_kernel, whose kernel is an address that is "
            "valid only in this process. Export a kernel compiled by jaxcc instead (load_cpp_* / "
            "load_cuda_*, or XLACustomKernel.def_cpp_kernel / def_cuda_raw_kernel)."
        )
    final = list(user_checks)
    for target in used:
        check = DisabledSafetyCheck.custom_call(target)
        if check not in final:
            final.append(check)
    if dataclasses.is_dataclass(exported):  # JAX 0.10-0.12: a frozen dataclass
        return dataclasses.replace(exported, disabled_safety_checks=tuple(final))
    return jax.export.export(jitted, disabled_checks=final, **export_kwargs)(*arg_shapes)


def required_targets(exported: Exported) -> list[str]:
    """The custom-call targets an artefact needs registered: those its safety checks name."""
    names = (check.is_custom_call() for check in exported.disabled_safety_checks)
    return sorted({name for name in names if name})


def _local_platform() -> str:
    import jax

    backend = jax.default_backend()
    return "cuda" if backend == "gpu" else backend


def registered_on(platform: str) -> set[str]:
    """Targets registered with XLA for `platform` ("cpu" or "cuda") by anyone in this process."""
    xla_name = "CUDA" if platform == "cuda" else platform
    names = set(ffi_targets.registered_targets_on(xla_name))
    lookup = _jax_compat.xla_custom_call_targets
    if lookup is not None:
        for spelling in {platform, xla_name}:
            try:
                names.update(lookup(spelling))
            except Exception:  # noqa: BLE001  # a private API: knowing less is not an error
                pass
    return names


def _load_bundles(bundles: Iterable[str | PathLike[str]]) -> None:
    from .bundle import load_library

    paths = [bundles] if isinstance(bundles, (str, PathLike)) else list(bundles)
    for path in paths:
        load_library(path)


def _check_modules(modules: Iterable[CompiledModule]) -> list[CompiledModule]:
    if isinstance(modules, CompiledModule):
        return [modules]
    listed = list(modules)
    for module in listed:
        if not isinstance(module, CompiledModule):
            raise CallError(
                "jaxcc.deserialize: modules= takes the CompiledModule objects that jaxcc.load_* "
                f"returned (loading them registers their targets), got {type(module).__name__}"
            )
    return listed


def deserialize(
    blob: bytes | bytearray | memoryview,
    *,
    modules: Iterable[CompiledModule] = (),
    bundles: Iterable[str | PathLike[str]] = (),
    platform: str | None = None,
) -> Exported:
    """`jax.export.deserialize(blob)`, after making sure every target the artefact calls is
    registered on `platform` (default: JAX's default backend).

    `modules` are loaded modules (their targets are registered already; listing them documents
    what the artefact needs), `bundles` are paths given to `jaxcc.load_library` first. A target
    nobody registered raises MissingTargetError naming each one, instead of an artefact that fails
    (or, on some JAX versions, crashes the process) when it is compiled."""
    import jax

    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise ExportError(
            "jaxcc.deserialize: blob must be the bytes of Exported.serialize(), got "
            f"{type(blob).__name__}"
        )
    loaded = _check_modules(modules)
    _load_bundles(bundles)
    try:
        exported = jax.export.deserialize(bytearray(blob))
    except ImportError as e:  # JAX reads artefacts with the flatbuffers package
        raise ExportError(f"jaxcc.deserialize: {e} (pip install flatbuffers)") from None
    except Exception as e:  # noqa: BLE001  # flatbuffers raises assorted errors on garbage
        raise ExportError(
            f"jaxcc.deserialize: the blob is not a jax.export artefact this JAX can read "
            f"({type(e).__name__}: {e}); serialize it again with Exported.serialize()."
        ) from None
    platform = platform or _local_platform()
    if platform not in exported.platforms:
        raise ExportError(
            f"jaxcc.deserialize: the artefact was exported for {', '.join(exported.platforms)}, "
            f"not for {platform}; export it again with platforms=[..., '{platform}']."
        )
    registered = registered_on(platform)
    missing = [t for t in required_targets(exported) if t not in registered]
    if missing:
        prefixes = sorted({t.rsplit(".", 1)[0] for t in missing if "." in t})
        have = ", ".join(m.name for m in loaded) or "none"
        raise MissingTargetError(
            f"jaxcc.deserialize: the artefact calls FFI target(s) {', '.join(missing)} that are "
            f"not registered on {platform} in this process (modules given: {have}). Load the "
            f"code that defines them before deserializing: jaxcc.load_* with name= (or "
            f"target_prefix=) {', '.join(repr(p) for p in prefixes) or 'as exported'}, or "
            "bundles=[path] for a prebuilt bundle, and pass it to jaxcc.deserialize.",
            missing,
        )
    return exported

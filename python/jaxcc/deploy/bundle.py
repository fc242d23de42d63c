"""`jaxcc.load_library`: load a prebuilt bundle (`jaxcc build`) with no compiler on the machine.

The core reads the manifest, checks it fits this machine, verifies every file's SHA-256 and only
then dlopens the library (src/bundle/); this module finds the bundle (a path or a package
resource), registers the handlers with JAX and returns the CompiledModule load_* would."""

from __future__ import annotations

import os
import pathlib
from typing import TYPE_CHECKING, NamedTuple

from jaxcc import _core
from jaxcc.build import argument_checks
from jaxcc.build import options as build_options
from jaxcc.call import ffi_targets
from jaxcc.call.compiled_module import CompiledModule
from jaxcc.environment import discovery
from jaxcc.errors import BundleError, SpecError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from jaxcc._types import PathArg


class _BundleRequest(NamedTuple):
    """What CompiledModule reads from a LoadRequest, filled from the bundle's manifest."""

    name: str
    platform: str
    target_prefix: str
    vmap_method: str


def _copy_resource(resource, into: pathlib.Path) -> None:
    into.mkdir()
    for child in resource.iterdir():
        if child.is_file():
            (into / child.name).write_bytes(child.read_bytes())
        elif child.is_dir():  # a tuned bundle's builds (decision 159b)
            _copy_resource(child, into / child.name)


def _load_any(directory: str, options: tuple, tune):
    """An ordinary bundle, or a tuned one (its variants, decisions and TunedFunctions)."""
    from jaxcc.tune import bundle as tune_bundle

    if tune_bundle.is_tuned_bundle(directory):
        return tune_bundle.load(directory, _load_dir, options, tune)
    if tune is not None:
        raise SpecError(f"load_library: tune= is for tuned bundles; {directory} is not one")
    return _load_dir(directory, *options)


def _load_dir(directory: str, target_prefix, vmap_method, auto_register, replace, sharding):
    import jax

    manifest = _core.read_bundle_manifest(directory)
    # Names the manifest supplies obey the rules load_* applies to the user's (checked before
    # anything is loaded).
    _core.validate_name(manifest.module_name, "the bundle's module name")
    if target_prefix is None:
        _core.validate_name(manifest.target_prefix, "the bundle's target prefix")
    if vmap_method is None and manifest.vmap_method not in _core.VMAP_METHODS:
        raise BundleError(
            f"bundle {directory}: vmap_method {manifest.vmap_method!r} is not one of "
            f"{', '.join(_core.VMAP_METHODS)}; rebuild it with `jaxcc build`"
        )
    gpus = discovery.jax_gpu_archs() if manifest.platform == "cuda" else []
    manifest, loaded = _core.load_bundle(directory, jax.ffi.include_dir(), gpus, sharding)
    request = _BundleRequest(
        name=manifest.module_name,
        platform=manifest.platform,
        target_prefix=target_prefix or manifest.target_prefix,
        vmap_method=vmap_method or manifest.vmap_method,
    )
    module = CompiledModule(request, loaded)
    module.bundle = manifest
    if auto_register:
        ffi_targets.register_module(module, loaded, replace=replace)
    return module


def load_library(
    path: PathArg | Traversable,
    *,
    target_prefix: str | None = None,
    vmap_method: str | None = None,
    auto_register: bool = True,
    replace: bool = False,
    sharding: dict[str, str] | None = None,
    tune: dict | None = None,
) -> CompiledModule:
    """Load a bundle written by `jaxcc build` and register its functions; no compiler, nvcc or
    ninja is needed. `path` is the bundle directory: a str, an os.PathLike or a package resource
    (`importlib.resources.files("pkg") / "kernels"`, also from a zip).

    Before anything is loaded the manifest is checked against this machine (host, XLA FFI API
    version, the GPUs JAX sees) and every file's size and SHA-256 against the manifest; any
    mismatch is a BundleError naming both sides and nothing is loaded. `target_prefix` and
    `vmap_method` default to the ones the bundle was built with; `auto_register` and `replace`
    are load_*'s. The functions keep the sharding rules they were built with (the manifest
    records them); `sharding={"fn": RULE}` adds or replaces rules, as load_*'s `sharding=` does
    (docs/sharding.md). Returns the same CompiledModule type load_* returns (`.bundle` is the
    manifest). A tuned bundle (`jaxcc build` of a module loaded with tune=) registers every
    variant and returns TunedFunctions that use its shipped decisions (decision 159b); `tune=
    {"fn": jaxcc.Autotune(key=..., tune_inputs=...)}` gives back the callables a bundle cannot
    carry.
    """
    rules = build_options._sharding_argument(sharding, "load_library")
    for flag, value in (("auto_register", auto_register), ("replace", replace)):
        if not isinstance(value, bool):
            raise SpecError(f"load_library: {flag} must be True or False, got {value!r}")
    if vmap_method is not None and vmap_method not in _core.VMAP_METHODS:
        raise SpecError(
            f"load_library: vmap_method={vmap_method!r} is not one of "
            f"{', '.join(_core.VMAP_METHODS)}"
        )
    if target_prefix is not None:
        if not isinstance(target_prefix, str):
            raise SpecError(
                "load_library: target_prefix must be a string or None, "
                f"got {type(target_prefix).__name__}"
            )
        _core.validate_name(target_prefix, "target_prefix")
    options = (target_prefix, vmap_method, auto_register, replace, rules)
    if tune is not None and not isinstance(tune, dict):
        raise SpecError(
            "load_library: tune must be a dict of function -> jaxcc.Autotune(key=..., "
            f"tune_inputs=...), got {type(tune).__name__}"
        )
    if isinstance(path, (str, bytes, os.PathLike)):
        return _load_any(argument_checks.abspath(path, "load_library: path"), options, tune)
    if not (hasattr(path, "iterdir") and hasattr(path, "read_bytes")):
        raise SpecError(
            "load_library: path must be a bundle directory (str, os.PathLike or an "
            f"importlib.resources Traversable), got {type(path).__name__}"
        )
    if not path.is_dir():
        raise BundleError(
            f"load_library: package resource {path} is not a directory; give the bundle "
            "directory that `jaxcc build --out` wrote and the package ships"
        )
    # A resource that is not a plain directory (a zip): copied to a private directory, loaded,
    # and removed; the loaded library stays mapped.
    import shutil
    import tempfile

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="jaxcc-bundle-"))
    try:
        _copy_resource(path, scratch / "bundle")
        return _load_any(str(scratch / "bundle"), options, tune)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

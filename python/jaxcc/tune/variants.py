"""Building a tuned module's variants (decision 156a): one ordinary module build per
configuration, in parallel threads (the core releases the GIL while it builds; the shared object
cache compiles the frame runtime once and each kernel unit once per configuration, so adding a
candidate builds only the new variants). Each variant's functions are registered as
`<prefix>@tune-<CONFIG>.<function>` (e.g. `mm@tune-BLOCK32-UNROLL2.matmul`); the module returned
is the reference build under the plain names, its tuned functions replaced by TunedFunctions."""

from __future__ import annotations

import os
import re
import warnings
from concurrent.futures import ThreadPoolExecutor

from jaxcc import _core
from jaxcc.build import load_request, options
from jaxcc.call import ffi_targets
from jaxcc.call.compiled_module import CompiledModule
from jaxcc.errors import AutotuneError, AutotuneWarning, CompileError, SpecError

from . import isolation, store, wire
from .choose import TunedFunction
from .spec import TuneSpec, config_flags, config_tag, config_text, merge_annotations, module_configs

# Every tuned function loaded in this process, by qualified name (module.function): `jaxcc tune`.
_tuned: dict[str, TunedFunction] = {}


def tuned_functions() -> dict[str, TunedFunction]:
    return dict(_tuned)


def tuned_module_names() -> set[str]:
    return {f._module.name for f in _tuned.values()}


def tuned_modules() -> dict[str, CompiledModule]:
    """Name -> the latest tuned module of that name loaded in this process."""
    return {f._module.name: f._module for f in _tuned.values()}


def variant_prefix(prefix: str, config: dict) -> str:
    return f"{prefix}@tune-{config_tag(config)}"


def _variant_arguments(arguments: dict, config: dict) -> dict:
    args = dict(arguments)
    flags = config_flags(config)
    args["extra_cflags"] = [*(arguments.get("extra_cflags") or []), *flags]
    if arguments.get("platform") == "cuda":
        args["extra_cuda_cflags"] = [*(arguments.get("extra_cuda_cflags") or []), *flags]
    if arguments.get("build_directory") is not None:
        # Parallel builds must not share one ninja directory.
        args["build_directory"] = os.path.join(
            os.fspath(arguments["build_directory"]), f"tune-{config_tag(config)}"
        )
    args["auto_register"] = False
    return args


# Plain request -> its sources' open tune= declarations, for loads with the loader's tune=.
_annotations: dict = {}


def _with_annotations(where: str, arguments: dict, specs: dict[str, TuneSpec]) -> dict:
    """The loader's tune= merged with the sources' tune="..." annotations (decision 159a). Read
    by the signature stage without building; once per request and process."""
    plain = options.make_request(where, **{**arguments, "auto_register": False})
    if plain not in _annotations:
        from jaxcc import _core

        _annotations[plain] = list(_core.tune_declarations(plain))
    if not _annotations[plain]:
        return specs
    return merge_annotations(specs, _annotations[plain], where)


def load_tuned(where: str, run, arguments: dict, specs: dict[str, TuneSpec],
               from_loader: bool = True) -> CompiledModule:  # fmt: skip
    if from_loader:
        specs = _with_annotations(where, arguments, specs)
    builds = module_configs(specs)
    requests = [options.make_request(where, **_variant_arguments(arguments, c)) for c in builds]
    if not _decided(requests[0].cache_dir, arguments["name"]):
        # Timing is likely (nothing decided for a module of this name yet): the tuning child
        # starts now, beside the builds and the user's code, not at the first call (decision 191).
        isolation.prestart(arguments.get("platform", "cpu"))
    workers = max(1, min(len(builds), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_try_load, r, run) for r in requests]
        outcomes = [f.result() for f in futures]
    failed = [(c, e) for c, (m, e) in zip(builds, outcomes, strict=True) if e is not None]
    built = {config_tag(c): (c, m) for c, (m, e) in zip(builds, outcomes, strict=True) if m}
    if not built:
        detail = "\n\n".join(f"[{config_text(c)}]\n{e}" for c, e in failed)
        raise CompileError(
            f"{where}: every tuning configuration of module '{arguments['name']}' failed to "
            f"compile ({len(failed)}):\n\n{detail}"
        )
    if failed:
        _check_references(where, specs, builds[0], failed)
        names = "; ".join(f"{config_text(c)}: {str(e).splitlines()[0]}" for c, e in failed)
        warnings.warn(
            f"jaxcc: module '{arguments['name']}': {len(failed)} of {len(builds)} tuning "
            f"configurations failed to compile and are left out ({names}); the others are tuned"
            + _substitute_references(specs, builds[0], built),
            AutotuneWarning,
            stacklevel=4,  # load_tuned, _load_request, the loader, the user's line
        )
    any_module = next(iter(built.values()))[1]
    unknown = [fn for fn in specs if fn not in any_module.specs]
    if unknown:
        raise SpecError(
            f"{where}: tune names {unknown}, which module '{arguments['name']}' does not have; its "
            f"functions: {', '.join(any_module.specs)}"
        )
    if any(not m.cache_hit for _, m in built.values()):
        _warn_unused_parameters(arguments, specs)
    base_prefix = requests[0].target_prefix  # the module object's may be a variant's already
    auto_register = arguments.get("auto_register", True)
    for config, module in built.values():
        module.target_prefix = variant_prefix(base_prefix, config)
        if auto_register:
            ffi_targets.register_module(module, module._loaded)
    reference = module_from_reference(where, run, arguments, builds, built)
    reference._tune_cache_dir = requests[0].cache_dir
    store.remember_variants(
        requests[0].cache_dir, {m.key: f"tune {config_text(c)}" for c, m in built.values()}
    )
    # Truthful for the whole family (decision 196): a hit only when no variant was built now.
    reference.variants_built = sum(not m.cache_hit for _, m in built.values())
    reference.cache_hit = reference.variants_built == 0
    recipes = {
        config_tag(c): _recipe(where, arguments, c, variant_prefix(base_prefix, c))
        for c in builds
        if config_tag(c) in built
    }
    # What `jaxcc build` ships (decision 159b): every compiled build's request, in build order.
    reference._tune_builds = [
        (c, r) for c, r in zip(builds, requests, strict=True) if config_tag(c) in built
    ]
    reference._tune_prefix = base_prefix
    reference._tune_base = builds[0]
    for fn, spec in specs.items():
        variants = {}
        for config in spec.configs:
            full = {**builds[0], **config}
            entry = built.get(config_tag(full))
            if entry is not None:
                variants[config_tag(config)] = (config, entry[1].functions[fn])
        tuned = TunedFunction(reference, reference.functions[fn], spec, variants)
        tuned._recipes = {
            config_tag(c): recipes[config_tag({**builds[0], **c})]
            for c, _ in variants.values()
            if recipes.get(config_tag({**builds[0], **c})) is not None
        }
        reference.functions[fn] = _tuned[tuned.__qualname__] = tuned
        reference.__dict__.pop(fn, None)  # an attribute cached by an earlier mod.<fn> look-up
    return reference


def module_from_reference(where, run, arguments, builds, built) -> CompiledModule:
    """The module the loader returns: the reference build (or the first that compiled) under the
    plain target names, for untuned functions and raw `jax.ffi.ffi_call`s."""
    config = builds[0] if config_tag(builds[0]) in built else next(iter(built.values()))[0]
    args = _variant_arguments(arguments, config)
    args["auto_register"] = arguments.get("auto_register", True)
    return load_request.load(options.make_request(where, **args), run)


def _decided(cache_dir: str, name: str) -> bool:
    """Whether the cache holds any decision for a module of this name."""
    return any(r.get("module") == name for r in store.list_decisions(cache_dir))


def _check_references(where: str, specs: dict[str, TuneSpec], base: dict, failed) -> None:
    """A reference named by `reference=` that failed to compile is an AutotuneError: no other
    configuration may silently take its place (decision 194)."""
    for fn, spec in specs.items():
        if spec.options.reference is None:
            continue
        full = {**base, **spec.reference}
        for config, error in failed:
            if config == full:
                raise AutotuneError(
                    f"{where}: tune[{fn!r}]: the reference configuration "
                    f"{config_text(spec.reference)} (named by reference=) failed to compile, so "
                    f"no variant can be checked against it; its first error: "
                    f"{str(error).strip().splitlines()[0]}. Fix that configuration or name "
                    "another with jaxcc.Autotune(..., reference={...})"
                )


def _substitute_references(specs: dict[str, TuneSpec], base: dict, built: dict) -> str:
    """What replaces an unnamed reference that failed to compile: the first configuration in
    candidate order that compiled (decision 194), said in the warning."""
    said = []
    for fn, spec in specs.items():
        if config_tag({**base, **spec.reference}) in built:
            continue
        first = next((c for c in spec.configs if config_tag({**base, **c}) in built), None)
        if first is not None:
            said.append(f"{fn}'s reference is {config_text(first)}, the first that compiled")
    return "; " + "; ".join(said) if said else ""


def _recipe(where: str, arguments: dict, config: dict, prefix: str):
    """How the tuning child loads this variant by the same request (runner.py); None when
    the arguments cannot cross to another process (the variant is then measured here)."""
    args = _variant_arguments(arguments, config)
    sources = []
    for source in args.get("sources") or []:
        if isinstance(source, tuple):
            sources.append(("inline", source[0], source[1]))
        elif isinstance(source, _core.SourceFile) and not os.path.isfile(source.label):
            sources.append(("inline", source.label, source.text))
        else:
            sources.append(("file", source.label))
    args["sources"] = sources
    recipe = ("request", where, args, prefix)
    try:
        wire.encode(recipe)
    except TypeError:  # a user object among the arguments: measured in this process
        return None
    return recipe


def _try_load(request, run):
    try:
        return load_request.load(request, run), None
    except CompileError as e:
        return None, e


def _source_texts(arguments: dict):
    for source in arguments.get("sources") or []:
        if isinstance(source, tuple):
            yield source[1]
        elif hasattr(source, "text"):
            yield source.text
        else:  # a DeferredSourceFile: its label is its path; read only after a build
            try:
                with open(source.label, encoding="utf-8", errors="replace") as f:
                    yield f.read()
            except OSError:
                continue


def _warn_unused_parameters(arguments: dict, specs: dict[str, TuneSpec]) -> None:
    """A parameter no source mentions cannot change the kernel: every variant is the same code.
    Checked after a build only, so a warm load reads no source."""
    text = "\n".join(_source_texts(arguments))
    for fn, spec in specs.items():
        unused = [n for n in spec.names if not re.search(rf"\b{re.escape(n)}\b", text)]
        if unused:
            warnings.warn(
                f"jaxcc: module '{arguments['name']}': tune[{fn!r}] parameter(s) "
                f"{', '.join(unused)} never appear in the source, so their variants are the same "
                "code; use the macro in the kernel (e.g. `#ifndef BLOCK` / `#define BLOCK 32`) "
                "or drop the parameter",
                AutotuneWarning,
                stacklevel=5,  # here, load_tuned, _load_request, the loader, the user's line
            )

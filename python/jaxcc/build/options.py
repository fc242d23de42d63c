"""Building the one typed hand-off to the core: a frozen, hashable `_core.LoadRequest` (also the
key of the in-process table) from a loader's arguments, plus the per-call run options that change
no result (verbose, force_rebuild, ninja_workers, replace)."""

from __future__ import annotations

import os
from typing import NamedTuple

from jaxcc import _core
from jaxcc.environment.cache_dir import get_cache_dir
from jaxcc.errors import SpecError

from . import argument_checks, debug_profile

CPP_OPTIONS = frozenset(
    {
        "extra_cflags", "extra_ldflags", "extra_include_paths", "build_directory", "verbose",
        "force_rebuild", "replace", "auto_register", "target_prefix", "optimization_level",
        "ninja_workers", "vmap_method", "sharding", "debug", "tune",
    }
)  # fmt: skip
CUDA_OPTIONS = CPP_OPTIONS | {
    "extra_cuda_cflags", "compute_capability", "use_fast_math", "allow_cuda_graph",
}  # fmt: skip


class RunOptions(NamedTuple):
    """How to run one load call; never part of what is built."""

    verbose: bool = False
    force_rebuild: bool = False
    replace: bool = False
    ninja_workers: int = 0


def _flag(value, name: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise SpecError(f"{where}: {name} must be True or False, got {value!r}")
    return value


def run_options(where: str, *, verbose, force_rebuild, replace, ninja_workers) -> RunOptions:
    return RunOptions(
        verbose=bool(verbose),
        force_rebuild=bool(force_rebuild),
        replace=_flag(replace, "replace", where),
        ninja_workers=argument_checks.ninja_workers(ninja_workers, where),
    )


def _sharding_argument(sharding, where: str) -> dict:
    """`sharding={"fn": RULE}` as the core takes it; the core parses each rule at load."""
    if sharding is None:
        return {}
    example = 'e.g. sharding={"add_one": "b i -> b i"}'
    if not isinstance(sharding, dict):
        raise SpecError(
            f"{where}: sharding must be a dict of function name -> rule string, {example}; got "
            f"{type(sharding).__name__}"
        )
    for fn, rule in sharding.items():
        if not isinstance(fn, str) or not isinstance(rule, str):
            raise SpecError(
                f"{where}: sharding maps function names (str) to rule strings, {example}; got "
                f"{fn!r}: {rule!r}"
            )
        argument_checks.require_utf8(fn, lambda: f"{where}: sharding key")
        argument_checks.require_utf8(rule, lambda fn=fn: f"{where}: sharding rule of {fn!r}")
    return dict(sharding)


def make_request(
    where: str,
    *,
    name,
    platform: str,
    sources: list,
    functions,
    extra_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    source_dirs=(),
    build_directory=None,
    target_prefix=None,
    optimization_level=3,
    vmap_method="sequential",
    auto_register=True,
    compute_capability=None,
    extra_cuda_cflags=None,
    use_fast_math=False,
    allow_cuda_graph=True,
    sharding=None,
    debug=None,
) -> _core.LoadRequest:
    """Checks the Python shape of every argument, then builds the request; the core checks the
    values (name and prefix syntax, optimization level, vmap method, the sources' text) on
    construction. `sources`: what `argument_checks.read_source` gave, or inline (label, text)
    pairs."""
    if not isinstance(name, str):
        raise SpecError(f"{where}: name must be a string, got {type(name).__name__}")
    argument_checks.require_utf8(name, lambda: f"{where}: name")
    if target_prefix is not None:
        if not isinstance(target_prefix, str):
            raise SpecError(
                f"{where}: target_prefix must be a string or None, "
                f"got {type(target_prefix).__name__}"
            )
        argument_checks.require_utf8(target_prefix, lambda: f"{where}: target_prefix")
    if isinstance(optimization_level, bool) or not isinstance(optimization_level, int):
        raise SpecError(
            f"{where}: optimization_level must be 0, 1, 2 or 3, got {optimization_level!r}"
        )
    if not isinstance(vmap_method, str):
        raise SpecError(
            f"{where}: vmap_method must be one of {_core.VMAP_METHODS}, got {vmap_method!r}"
        )
    debug, debug_cflags, debug_ldflags = debug_profile.debug_profile(debug, where, platform)
    source_files = argument_checks.source_files(sources, where)
    cuda = None
    if platform == "cuda":
        cuda = _core.CudaOptions(
            archs=argument_checks.arch_list(compute_capability, where),
            extra_cflags=argument_checks.string_list(extra_cuda_cflags, "extra_cuda_cflags"),
            use_fast_math=bool(use_fast_math),
            allow_cuda_graph=bool(allow_cuda_graph),
        )
    try:
        return _core.LoadRequest(
            name=name,
            platform=platform,
            sources=source_files,
            functions=argument_checks.function_requests(functions, where),
            extra_cflags=argument_checks.string_list(extra_cflags, "extra_cflags") + debug_cflags,
            extra_ldflags=argument_checks.string_list(extra_ldflags, "extra_ldflags")
            + debug_ldflags,
            extra_include_paths=[
                os.path.abspath(p)
                for p in argument_checks.string_list(extra_include_paths, "extra_include_paths")
            ],
            source_dirs=list(source_dirs),
            optimization_level=optimization_level,
            build_directory=argument_checks.build_directory(build_directory, where),
            cache_dir=get_cache_dir(),
            cuda=cuda,
            target_prefix=target_prefix,
            vmap_method=vmap_method,
            auto_register=bool(auto_register),
            sharding=_sharding_argument(sharding, where),
            debug=debug,
        )
    except SpecError as e:
        raise SpecError(f"{where}: {e}") from None

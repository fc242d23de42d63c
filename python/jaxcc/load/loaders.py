"""The public loaders: load_cpp_inline/file/dir and load_cuda_inline/file/dir.

Each turns its arguments into one frozen request (build/options.py) and hands it to
build/load_request.py's `load`, which looks it up in the in-process table or asks the C++ core to
build or fetch it. A `tune=` (or the sources' own tune annotations) goes to tune/variants.py."""

from __future__ import annotations

import os
from typing import Any

from jaxcc import _core
from jaxcc._types import ComputeCapability, Functions, PathArg, Sources, StringList
from jaxcc.build import argument_checks, load_request, options
from jaxcc.call.compiled_module import CompiledModule
from jaxcc.tune import spec


def _load_request(
    where: str,
    *,
    verbose=False,
    force_rebuild=False,
    replace=False,
    ninja_workers=None,
    tune=None,
    **request_arguments,
) -> CompiledModule:
    tuned = spec.parse_tune(tune, where)
    run = options.run_options(
        where,
        verbose=verbose,
        force_rebuild=force_rebuild,
        replace=replace,
        ninja_workers=ninja_workers,
    )
    if tuned:
        from jaxcc.tune.variants import load_tuned

        return load_tuned(where, run, request_arguments, tuned)
    try:
        return load_request.load(options.make_request(where, **request_arguments), run)
    except load_request.TuneDeclared as declared:  # the sources' own tune="..." (decision 159a)
        from jaxcc.tune.variants import load_tuned

        annotated = spec.from_annotations(declared.declarations, where)
        return load_tuned(where, run, request_arguments, annotated, from_loader=False)


def load_cpp_inline(
    name: str,
    cpp_sources: Sources,
    functions: Functions = None,
    *,
    extra_cflags: StringList = None,
    extra_ldflags: StringList = None,
    extra_include_paths: StringList = None,
    build_directory: PathArg | None = None,
    verbose: bool = False,
    force_rebuild: bool = False,
    replace: bool = False,
    auto_register: bool = True,
    target_prefix: str | None = None,
    optimization_level: int = 3,
    ninja_workers: int | None = None,
    vmap_method: str = "sequential",
    sharding=None,
    debug: bool | str | None = None,
    tune=None,
) -> CompiledModule:
    """Compile inline C++ (CPU) source and return a CompiledModule.

    `functions`: a dict name -> arg_spec tokens, a list of names (specs inferred from the C++
    signatures) or None (every `// @BE name [tokens]` annotation). Compiler diagnostics point at
    `<name>:LINE`. The result is cached by SHA-256 of everything that affects the binary.
    `sharding`: {function: rule} in Shardy's einsum notation ("b i, i -> b i"), so the function
    stays partitioned under jax.jit with sharded inputs (docs/sharding.md).
    `tune`: {function: {MACRO: [candidates]}} or {function: jaxcc.Autotune(...)}: one build per
    configuration (`-DMACRO=value`), the fastest chosen per operand shapes at the first call and
    remembered in the cache (docs/usage.md, "Autotuning").
    `replace` (brainevent's flag): loading unchanged code again is a no-op either way; changed
    code under a name that is already registered raises RegistrationError, because XLA cannot
    swap a registered handler.
    `debug`: build under the debug profile (-O0 -g, guard zones after every output, checked
    after each call), "asan" adds AddressSanitizer and UBSan; None reads $JAXCC_DEBUG. See
    docs/usage.md, "Debugging a kernel".
    """
    source = argument_checks.join_sources(cpp_sources, "cpp_sources")
    return _load_request(
        "load_cpp_inline",
        name=name,
        platform="cpu",
        sources=[(f"<{name}>", source)],
        functions=functions,
        extra_cflags=extra_cflags,
        extra_ldflags=extra_ldflags,
        extra_include_paths=extra_include_paths,
        build_directory=build_directory,
        verbose=verbose,
        force_rebuild=force_rebuild,
        replace=replace,
        auto_register=auto_register,
        target_prefix=target_prefix,
        optimization_level=optimization_level,
        ninja_workers=ninja_workers,
        vmap_method=vmap_method,
        sharding=sharding,
        debug=debug,
        tune=tune,
    )


def load_cpp_file(
    filepath: PathArg, functions: Functions = None, *, name: str | None = None, **kwargs: Any
) -> CompiledModule:
    """Compile a C++ file. `name` defaults to the file's stem; the file's directory is on the
    include path; diagnostics name the file by its real path."""
    path = argument_checks.abspath(filepath, "load_cpp_file: filepath")
    source = argument_checks.read_source(path)
    return _load_request(
        "load_cpp_file",
        name=name or _core.module_name_from_path(path),
        platform="cpu",
        sources=[source],
        functions=functions,
        source_dirs=(os.path.dirname(path),),
        **argument_checks.check_kwargs(kwargs, options.CPP_OPTIONS, "load_cpp_file"),
    )


def load_cpp_dir(
    directory: PathArg,
    functions: Functions = None,
    *,
    name: str | None = None,
    file_patterns: StringList = None,
    **kwargs: Any,
) -> CompiledModule:
    """Compile every C++ file of a directory, each as its own translation unit (compiled in
    parallel; with `build_directory=` a rebuild recompiles only the files that changed).

    `file_patterns` defaults to ["*.cc", "*.cpp", "*.cxx"] (not recursive). `name` defaults to the
    directory's name; annotations are collected across all files; the directory is on the include
    path and diagnostics name each file by its real path.
    """
    root, sources = argument_checks.collect_dir(
        directory, file_patterns, ["*.cc", "*.cpp", "*.cxx"], "load_cpp_dir"
    )
    return _load_request(
        "load_cpp_dir",
        name=name or _core.module_name_from_path(root),
        platform="cpu",
        sources=sources,
        functions=functions,
        source_dirs=(root,),
        **argument_checks.check_kwargs(kwargs, options.CPP_OPTIONS, "load_cpp_dir"),
    )


def load_cuda_inline(
    name: str,
    cuda_sources: Sources,
    functions: Functions = None,
    *,
    extra_cuda_cflags: StringList = None,
    extra_ldflags: StringList = None,
    extra_include_paths: StringList = None,
    build_directory: PathArg | None = None,
    verbose: bool = False,
    compute_capability: ComputeCapability = None,
    force_rebuild: bool = False,
    replace: bool = False,
    auto_register: bool = True,
    target_prefix: str | None = None,
    ninja_workers: int | None = None,
    optimization_level: int = 3,
    use_fast_math: bool = False,
    allow_cuda_graph: bool = True,
    vmap_method: str = "sequential",
    sharding=None,
    debug: bool | str | None = None,
    tune=None,
) -> CompiledModule:
    """Compile inline CUDA source and return a CompiledModule whose functions run on the GPU.

    The source is compiled by nvcc (with only jaxcc's kernel headers, never XLA's), the generated
    FFI wrapper by the host compiler, in parallel. `compute_capability` ("8.0", "sm_90a", "80,90"
    or a list) > $JAXCC_CUDA_ARCH > every GPU JAX sees > nvidia-smi; SASS is built for each and
    PTX for the highest. With an explicit architecture the module builds without a GPU. Targets
    are registered on platform "CUDA" as "<target_prefix or name>.<function>"; `stream`
    parameters receive XLA's CUDA stream; `allow_cuda_graph` lets XLA capture the kernels in
    CUDA graphs. `replace` as in load_cpp_inline.
    """
    source = argument_checks.join_sources(cuda_sources, "cuda_sources")
    return _load_request(
        "load_cuda_inline",
        name=name,
        platform="cuda",
        sources=[(f"<{name}>", source)],
        functions=functions,
        extra_ldflags=extra_ldflags,
        extra_include_paths=extra_include_paths,
        build_directory=build_directory,
        verbose=verbose,
        force_rebuild=force_rebuild,
        replace=replace,
        auto_register=auto_register,
        target_prefix=target_prefix,
        optimization_level=optimization_level,
        ninja_workers=ninja_workers,
        vmap_method=vmap_method,
        sharding=sharding,
        debug=debug,
        compute_capability=compute_capability,
        extra_cuda_cflags=extra_cuda_cflags,
        use_fast_math=use_fast_math,
        allow_cuda_graph=allow_cuda_graph,
        tune=tune,
    )


def load_cuda_file(
    filepath: PathArg, functions: Functions = None, *, name: str | None = None, **kwargs: Any
) -> CompiledModule:
    """Compile a .cu file (keyword arguments as load_cuda_inline). `name` defaults to the file's
    stem; the file's directory is on the include path; diagnostics name the real file."""
    path = argument_checks.abspath(filepath, "load_cuda_file: filepath")
    return _load_request(
        "load_cuda_file",
        name=name or _core.module_name_from_path(path),
        platform="cuda",
        sources=[argument_checks.read_source(path)],
        functions=functions,
        source_dirs=(os.path.dirname(path),),
        **argument_checks.check_kwargs(kwargs, options.CUDA_OPTIONS, "load_cuda_file"),
    )


def load_cuda_dir(
    directory: PathArg,
    functions: Functions = None,
    *,
    name: str | None = None,
    file_patterns: StringList = None,
    **kwargs: Any,
) -> CompiledModule:
    """Compile every CUDA file of a directory (default pattern ["*.cu"]; add "*.cc" for
    host-side C++, which the host compiler builds), each file its own translation unit, compiled
    in parallel; with `build_directory=` a rebuild recompiles only the changed files (header
    dependencies tracked). Annotations are collected across files; the directory is on the
    include path. Keyword arguments as load_cuda_inline."""
    root, sources = argument_checks.collect_dir(directory, file_patterns, ["*.cu"], "load_cuda_dir")
    return _load_request(
        "load_cuda_dir",
        name=name or _core.module_name_from_path(root),
        platform="cuda",
        sources=sources,
        functions=functions,
        source_dirs=(root,),
        **argument_checks.check_kwargs(kwargs, options.CUDA_OPTIONS, "load_cuda_dir"),
    )

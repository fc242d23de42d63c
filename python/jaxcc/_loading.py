"""load_cpp_inline / load_cpp_file: Python's side of the pipeline.

The C++ core does the work (specs, key, cache, build, dlopen). This layer normalises arguments,
keeps an in-process table so reloading the same module costs a dictionary lookup, registers the
handlers with JAX and wraps them in callables."""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
import warnings

from . import _core, _registry
from ._cache_dir import get_cache_dir
from ._module import CompiledModule
from ._progress import BuildProgress
from .errors import CacheWarning, SpecError

logger = logging.getLogger("jaxcc")

_loaded_lock = threading.Lock()
_loaded: dict[tuple, CompiledModule] = {}
_search_dirs: list[str] | None = None

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def include_dir() -> str:
    """Directory holding jaxcc's kernel headers (jaxcc/jaxcc.h, brainevent/common.h).

    The headers are installed beside the compiled extension; in an editable install that is the
    build's site-packages copy while the .py files stay in the checkout, so look there first."""
    return os.path.join(os.path.dirname(os.path.abspath(_core.__file__)), "include")


def _ninja_search_dirs() -> list[str]:
    # The `ninja` wheel keeps its binary in ninja/data/bin; found without importing the package.
    global _search_dirs
    if _search_dirs is None:
        dirs = []
        spec = importlib.util.find_spec("ninja")
        if spec is not None and spec.origin:
            dirs.append(os.path.join(os.path.dirname(spec.origin), "data", "bin"))
        dirs.append(os.path.dirname(sys.executable))
        _search_dirs = dirs
    return _search_dirs


def _normalize_functions(functions, where: str):
    """dict name -> tokens | None, list of names, or None -> tuple of (name, tokens | None)."""
    if functions is None:
        return None
    if isinstance(functions, dict):
        items = []
        for name, tokens in functions.items():
            if not isinstance(name, str):
                raise SpecError(f"{where}: function names must be strings, got {name!r}")
            if tokens is None:
                items.append((name, None))
                continue
            if isinstance(tokens, str):
                tokens = tokens.split()
            if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
                raise SpecError(
                    f"{where}: the arg_spec of '{name}' must be a list of strings such as "
                    f"['arg', 'ret', 'attr.scale:float32'], got {tokens!r}"
                )
            items.append((name, tuple(tokens)))
        for name, tokens in items:
            for text in (name, *(tokens or ())):
                _require_utf8(text, f"{where}: functions entry {name!r}")
        return tuple(items)
    if isinstance(functions, (list, tuple)):
        if not all(isinstance(n, str) for n in functions):
            raise SpecError(f"{where}: a list of functions must hold function names (strings)")
        for n in functions:
            _require_utf8(n, f"{where}: function name {n!r}")
        return tuple((n, None) for n in functions)
    hint = f"; for one function write [{functions!r}]" if isinstance(functions, str) else ""
    raise SpecError(
        f"{where}: functions must be a dict of arg_specs, a list of names or None, "
        f"got {type(functions).__name__}{hint}"
    )


def _string_list(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    try:
        items = tuple(os.fspath(v) for v in value)
    except TypeError:
        raise SpecError(f"{what} must be a list of strings, got {value!r}") from None
    for item in items:
        if not isinstance(item, str):
            raise SpecError(f"{what} must be a list of strings, got the bytes {item!r}; decode it")
        # The core hands these to the compiler as C strings: a NUL would silently cut the flag.
        if "\0" in item:
            raise SpecError(f"{what} entry {item!r} contains a NUL character; remove it")
        _require_utf8(item, what)
    return items


def _require_utf8(text: str, what: str) -> None:
    """Lone surrogates (e.g. from os.fsdecode of undecodable bytes) cannot reach the core."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise SpecError(
            f"{what} is not valid Unicode text: {e.reason} at position {e.start}; "
            "pass text that encodes as UTF-8 (decode byte strings with errors='replace')"
        ) from None


def _check_sources(sources: list[tuple[str, str]], where: str) -> None:
    """Sources must be text a compiler reads as written: UTF-8, no NUL, not all empty."""
    for label, text in sources:
        _require_utf8(text, f"{where}: source {label}")
        nul = text.find("\0")
        if nul >= 0:
            line = text.count("\n", 0, nul) + 1
            column = nul - (text.rfind("\n", 0, nul) + 1) + 1
            raise SpecError(
                f"{where}: source {label} contains a NUL character at line {line}, column "
                f"{column}; C++ sources are text (a binary file or a bad concatenation?): "
                "remove the NUL"
            )
    if all(not text.strip() for _, text in sources):
        raise SpecError(
            f"{where}: the C++ source is empty; pass the source text that defines the "
            "functions to export"
        )


def _check_ninja_workers(ninja_workers, where: str) -> int:
    if ninja_workers is None:
        return 0
    if isinstance(ninja_workers, bool) or not isinstance(ninja_workers, int) or ninja_workers < 1:
        raise SpecError(
            f"{where}: ninja_workers must be a positive integer or None (one job per core), "
            f"got {ninja_workers!r}"
        )
    return ninja_workers


def _check_build_directory(build_directory, where: str) -> str:
    if not build_directory:
        return ""
    try:
        path = os.fspath(build_directory)
    except TypeError:
        raise SpecError(
            f"{where}: build_directory must be a path (str or os.PathLike), "
            f"got {type(build_directory).__name__}"
        ) from None
    if not isinstance(path, str) or "\0" in path:
        raise SpecError(f"{where}: build_directory must be a text path without NUL, got {path!r}")
    if os.path.exists(path) and not os.path.isdir(path):
        raise SpecError(
            f"{where}: build_directory {path} exists and is not a directory; pass a directory "
            "path (it is created if missing)"
        )
    return path


def _build_timeout() -> float:
    text = os.environ.get("JAXCC_BUILD_TIMEOUT", "600")
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 1e6:  # NaN fails too
        raise SpecError(
            f"JAXCC_BUILD_TIMEOUT={text!r} is not a build time limit: set it to a number of "
            "seconds between 0 and 1e6 (default 600), or unset it"
        )
    return seconds


def _arch_list(compute_capability, where: str) -> tuple[str, ...]:
    """compute_capability: None, "8.0", "sm_90a", "80,90" or a list of those (parsed in C++)."""
    if compute_capability is None:
        return ()
    if isinstance(compute_capability, (int, float)):
        compute_capability = str(compute_capability)
    if isinstance(compute_capability, str):
        return (compute_capability,)
    if isinstance(compute_capability, (list, tuple)) and all(
        isinstance(c, (str, int, float)) for c in compute_capability
    ):
        return tuple(str(c) for c in compute_capability)
    raise SpecError(
        f"{where}: compute_capability must be a string such as '8.0', 'sm_90a' or '80,90', or a "
        f"list of them; got {compute_capability!r}"
    )


def _jax_gpu_archs() -> list[str]:
    """Compute capabilities of every GPU JAX sees ("9.0"), or [] without a GPU backend."""
    import jax

    try:
        devices = jax.devices("gpu")
    except RuntimeError:
        return []
    return sorted({str(d.compute_capability) for d in devices if hasattr(d, "compute_capability")})


def _nvcc_wheel_dirs() -> list[str]:
    """bin directories of pip's NVIDIA CUDA compiler wheels (nvidia-cuda-nvcc-cu12/13)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs = []
    for base in spec.submodule_search_locations:
        for sub in ("cuda_nvcc/bin", "cu13/bin", "cu12/bin"):
            candidate = os.path.join(base, sub)
            if os.path.isdir(candidate):
                dirs.append(candidate)
    return dirs


def forget_loaded(name: str | None) -> None:
    with _loaded_lock:
        for key in [k for k in _loaded if name is None or k[0] == name]:
            del _loaded[key]


def load_module(
    *,
    name: str,
    sources: list[tuple[str, str]],
    functions,
    platform: str = "cpu",
    extra_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    source_dirs=(),
    build_directory=None,
    verbose: bool = False,
    force_rebuild: bool = False,
    auto_register: bool = True,
    target_prefix: str | None = None,
    optimization_level: int = 3,
    ninja_workers: int | None = None,
    vmap_method: str = "sequential",
    where: str = "load_cpp_inline",
    compute_capability=None,
    extra_cuda_cflags=None,
    use_fast_math: bool = False,
    allow_cuda_graph: bool = True,
) -> CompiledModule:
    if not isinstance(name, str):
        raise SpecError(f"{where}: name must be a string, got {type(name).__name__}")
    if vmap_method not in VMAP_METHODS:
        raise SpecError(f"{where}: vmap_method must be one of {VMAP_METHODS}, got {vmap_method!r}")
    if (
        isinstance(optimization_level, bool)
        or not isinstance(optimization_level, int)
        or not 0 <= optimization_level <= 3
    ):
        raise SpecError(
            f"{where}: optimization_level must be 0, 1, 2 or 3, got {optimization_level!r}"
        )
    # The name is checked as itself first, so a bad name is not reported as a bad prefix.
    _require_utf8(name, f"{where}: name")
    _core.validate_name(name, "module name")
    if target_prefix is not None and not isinstance(target_prefix, str):
        raise SpecError(
            f"{where}: target_prefix must be a string or None, got {type(target_prefix).__name__}"
        )
    prefix = name if target_prefix is None else target_prefix
    if target_prefix is not None:
        _require_utf8(prefix, f"{where}: target_prefix")
        _core.validate_name(prefix, "target_prefix")
    ninja_workers = _check_ninja_workers(ninja_workers, where)
    build_directory = _check_build_directory(build_directory, where)
    cuda_options = ()
    if platform == "cuda":
        cuda_options = (
            _arch_list(compute_capability, where),
            _string_list(extra_cuda_cflags, "extra_cuda_cflags"),
            bool(use_fast_math),
            bool(allow_cuda_graph),
        )
    request_key = (
        name,
        platform,
        tuple(sources),
        _normalize_functions(functions, where),
        _string_list(extra_cflags, "extra_cflags"),
        _string_list(extra_ldflags, "extra_ldflags"),
        tuple(os.path.abspath(p) for p in _string_list(extra_include_paths, "extra_include_paths")),
        tuple(source_dirs),
        optimization_level,
        build_directory,
        prefix,
        auto_register,
        vmap_method,
        get_cache_dir(),
        cuda_options,
    )
    if not force_rebuild:
        module = _loaded.get(request_key)
        if module is not None:
            return module
    _check_sources(sources, where)  # O(size of the sources): after the in-process table

    import jax

    options = {
        "name": name,
        "platform": platform,
        "sources": list(sources),
        "functions": None
        if request_key[3] is None
        else [(n, None if t is None else list(t)) for n, t in request_key[3]],
        "extra_cflags": list(request_key[4]),
        "extra_ldflags": list(request_key[5]),
        "extra_include_paths": list(request_key[6]),
        "source_dirs": list(source_dirs),
        "optimization_level": optimization_level,
        "build_directory": request_key[9],
        "verbose": bool(verbose),
        "force_rebuild": bool(force_rebuild),
        "ninja_workers": ninja_workers,
        "cache_dir": request_key[13],
        "jaxcc_include_dir": include_dir(),
        "ffi_include_dir": jax.ffi.include_dir(),
        "ninja_search_dirs": _ninja_search_dirs(),
        "build_timeout_seconds": _build_timeout(),
    }
    if platform == "cuda":
        archs, cuda_cflags, fast_math, cuda_graph = cuda_options
        options.update(
            cuda_archs=list(archs),
            # Only asked when nothing more explicit names an architecture.
            detected_cuda_archs=[]
            if archs or os.environ.get("JAXCC_CUDA_ARCH")
            else _jax_gpu_archs(),
            extra_cuda_cflags=list(cuda_cflags),
            nvcc_search_dirs=_nvcc_wheel_dirs(),
            use_fast_math=fast_math,
            allow_cuda_graph=cuda_graph,
        )
    on_output = (lambda chunk: sys.stderr.write(chunk)) if verbose else None
    with BuildProgress(name):
        loaded = _core.load_module(options, on_output)
    if loaded["cache_hit"]:
        logger.info("cache hit: %s (%s)", name, loaded["library_path"])
    else:
        logger.info(
            "cache miss (%s): built %s in %.2fs -> %s",
            loaded["miss_reason"],
            name,
            loaded["build_seconds"],
            loaded["library_path"],
        )
        if loaded["evicted_entries"]:
            logger.info(
                "cache size cap: evicted %d least recently used entries", loaded["evicted_entries"]
            )

    if loaded["warning"]:
        warnings.warn(f"jaxcc: module '{name}': {loaded['warning']}", CacheWarning, stacklevel=3)

    if platform == "cuda":
        logger.info(
            "CUDA architectures for %s: %s (from %s)",
            name,
            ", ".join(f"sm_{a}" for a in loaded["cuda_archs"]),
            loaded["cuda_archs_source"],
        )
    module = CompiledModule(name, prefix, loaded, vmap_method, platform)
    if auto_register:
        for fn_name, capsule in loaded["handlers"].items():
            _registry.register_target(
                f"{prefix}.{fn_name}",
                capsule,
                "cpu" if platform == "cpu" else "CUDA",
                loaded["key"],
                name,
            )
    with _loaded_lock:
        _loaded[request_key] = module
    return module


def _join_sources(sources, what: str) -> str:
    if isinstance(sources, str):
        return sources
    if isinstance(sources, (list, tuple)) and all(isinstance(s, str) for s in sources):
        return "\n".join(sources)
    hint = ""
    if isinstance(sources, (bytes, bytearray)) or (
        isinstance(sources, (list, tuple))
        and any(isinstance(s, (bytes, bytearray)) for s in sources)
    ):
        hint = "; decode byte strings first (source.decode('utf-8'))"
    raise SpecError(
        f"{what} must be a string or a list of strings, got {type(sources).__name__}{hint}"
    )


def load_cpp_inline(
    name: str,
    cpp_sources,
    functions=None,
    *,
    extra_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose: bool = False,
    force_rebuild: bool = False,
    auto_register: bool = True,
    target_prefix: str | None = None,
    optimization_level: int = 3,
    ninja_workers: int | None = None,
    vmap_method: str = "sequential",
) -> CompiledModule:
    """Compile inline C++ (CPU) source and return a CompiledModule.

    `functions`: a dict name -> arg_spec tokens, a list of names (specs inferred from the C++
    signatures) or None (every `// @BE name [tokens]` annotation). Compiler diagnostics point at
    `<name>:LINE`. The result is cached by SHA-256 of everything that affects the binary.
    """
    source = _join_sources(cpp_sources, "cpp_sources")
    return load_module(
        name=name,
        sources=[(f"<{name}>", source)],
        functions=functions,
        extra_cflags=extra_cflags,
        extra_ldflags=extra_ldflags,
        extra_include_paths=extra_include_paths,
        build_directory=build_directory,
        verbose=verbose,
        force_rebuild=force_rebuild,
        auto_register=auto_register,
        target_prefix=target_prefix,
        optimization_level=optimization_level,
        ninja_workers=ninja_workers,
        vmap_method=vmap_method,
        where="load_cpp_inline",
    )


def _abspath(path, what: str) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise SpecError(
            f"{what} must be a path (str or os.PathLike), got {type(path).__name__}"
        ) from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return os.path.abspath(path)


def _read_source(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise SpecError(f"{path} is not valid UTF-8 ({e}); save it as UTF-8") from None
    except OSError as e:
        raise SpecError(
            f"cannot read {path}: {e.strerror}; pass the path of a readable source file"
        ) from None


def _module_name_from_path(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    name = "".join(c if c.isascii() and (c.isalnum() or c in "_-.") else "_" for c in stem)
    name = name or "module"
    if not name[:1].isalpha():  # "2024_ops.cc", ".hidden.cc": a name must start with a letter or _
        name = "_" + name
    return name[:128]


def load_cpp_file(filepath, functions=None, *, name: str | None = None, **kwargs) -> CompiledModule:
    """Compile a C++ file. `name` defaults to the file's stem; the file's directory is on the
    include path; diagnostics name the file by its real path."""
    path = _abspath(filepath, "load_cpp_file: filepath")
    source = _read_source(path)
    return load_module(
        name=name or _module_name_from_path(path),
        sources=[(path, source)],
        functions=functions,
        source_dirs=(os.path.dirname(path),),
        where="load_cpp_file",
        **_check_kwargs(kwargs, _CPP_OPTIONS, "load_cpp_file"),
    )


def _collect_dir(directory, file_patterns, default_patterns, where: str):
    import glob

    root = _abspath(directory, f"{where}: directory")
    if not os.path.isdir(root):
        raise SpecError(f"{where}: {root} is not a directory; pass the directory of the sources")
    if isinstance(file_patterns, str):
        file_patterns = [file_patterns]  # one pattern, not one per character
    patterns = list(file_patterns) if file_patterns else default_patterns
    paths = sorted({p for pattern in patterns for p in glob.glob(os.path.join(root, pattern))})
    paths = [p for p in paths if os.path.isfile(p)]
    if not paths:
        raise SpecError(f"{where}: no file in {root} matches {patterns}; pass file_patterns=[...]")
    return root, [(p, _read_source(p)) for p in paths]


def load_cpp_dir(
    directory, functions=None, *, name: str | None = None, file_patterns=None, **kwargs
) -> CompiledModule:
    """Compile every C++ file of a directory, each as its own translation unit (compiled in
    parallel; with `build_directory=` a rebuild recompiles only the files that changed).

    `file_patterns` defaults to ["*.cc", "*.cpp", "*.cxx"] (not recursive). `name` defaults to the
    directory's name; annotations are collected across all files; the directory is on the include
    path and diagnostics name each file by its real path.
    """
    root, sources = _collect_dir(
        directory, file_patterns, ["*.cc", "*.cpp", "*.cxx"], "load_cpp_dir"
    )
    return load_module(
        name=name or _module_name_from_path(root),
        sources=sources,
        functions=functions,
        source_dirs=(root,),
        where="load_cpp_dir",
        **_check_kwargs(kwargs, _CPP_OPTIONS, "load_cpp_dir"),
    )


def load_cuda_inline(
    name: str,
    cuda_sources,
    functions=None,
    *,
    extra_cuda_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose: bool = False,
    compute_capability=None,
    force_rebuild: bool = False,
    auto_register: bool = True,
    target_prefix: str | None = None,
    ninja_workers: int | None = None,
    optimization_level: int = 3,
    use_fast_math: bool = False,
    allow_cuda_graph: bool = True,
    vmap_method: str = "sequential",
) -> CompiledModule:
    """Compile inline CUDA source and return a CompiledModule whose functions run on the GPU.

    The source is compiled by nvcc (with only jaxcc's kernel headers, never XLA's), the generated
    FFI wrapper by the host compiler, in parallel. `compute_capability` ("8.0", "sm_90a", "80,90"
    or a list) > $JAXCC_CUDA_ARCH > every GPU JAX sees > nvidia-smi; SASS is built for each and
    PTX for the highest. With an explicit architecture the module builds without a GPU. Targets
    are registered on platform "CUDA" as "<target_prefix or name>.<function>"; `stream`
    parameters receive XLA's CUDA stream; `allow_cuda_graph` lets XLA capture the kernels in
    CUDA graphs.
    """
    source = _join_sources(cuda_sources, "cuda_sources")
    return load_module(
        name=name,
        sources=[(f"<{name}>", source)],
        functions=functions,
        platform="cuda",
        extra_ldflags=extra_ldflags,
        extra_include_paths=extra_include_paths,
        build_directory=build_directory,
        verbose=verbose,
        force_rebuild=force_rebuild,
        auto_register=auto_register,
        target_prefix=target_prefix,
        optimization_level=optimization_level,
        ninja_workers=ninja_workers,
        vmap_method=vmap_method,
        where="load_cuda_inline",
        compute_capability=compute_capability,
        extra_cuda_cflags=extra_cuda_cflags,
        use_fast_math=use_fast_math,
        allow_cuda_graph=allow_cuda_graph,
    )


_CPP_OPTIONS = {
    "extra_cflags", "extra_ldflags", "extra_include_paths", "build_directory", "verbose",
    "force_rebuild", "auto_register", "target_prefix", "optimization_level", "ninja_workers",
    "vmap_method",
}  # fmt: skip
_CUDA_OPTIONS = _CPP_OPTIONS | {
    "extra_cuda_cflags", "compute_capability", "use_fast_math", "allow_cuda_graph",
}  # fmt: skip


def _check_kwargs(kwargs: dict, allowed: set, where: str) -> dict:
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise SpecError(
            f"{where}: unknown argument(s) {', '.join(unknown)}; it takes "
            f"{', '.join(sorted(allowed))}"
        )
    return kwargs


def _cuda_kwargs(kwargs: dict, where: str) -> dict:
    return _check_kwargs(kwargs, _CUDA_OPTIONS, where)


def load_cuda_file(
    filepath, functions=None, *, name: str | None = None, **kwargs
) -> CompiledModule:
    """Compile a .cu file (keyword arguments as load_cuda_inline). `name` defaults to the file's
    stem; the file's directory is on the include path; diagnostics name the real file."""
    path = _abspath(filepath, "load_cuda_file: filepath")
    return load_module(
        name=name or _module_name_from_path(path),
        sources=[(path, _read_source(path))],
        functions=functions,
        platform="cuda",
        source_dirs=(os.path.dirname(path),),
        where="load_cuda_file",
        **_cuda_kwargs(kwargs, "load_cuda_file"),
    )


def load_cuda_dir(
    directory, functions=None, *, name: str | None = None, file_patterns=None, **kwargs
) -> CompiledModule:
    """Compile every CUDA file of a directory (default pattern ["*.cu"]; add "*.cc" for
    host-side C++, which the host compiler builds), each file its own translation unit, compiled
    in parallel; with `build_directory=` a rebuild recompiles only the changed files (header
    dependencies tracked). Annotations are collected across files; the directory is on the
    include path. Keyword arguments as load_cuda_inline."""
    root, sources = _collect_dir(directory, file_patterns, ["*.cu"], "load_cuda_dir")
    return load_module(
        name=name or _module_name_from_path(root),
        sources=sources,
        functions=functions,
        platform="cuda",
        source_dirs=(root,),
        where="load_cuda_dir",
        **_cuda_kwargs(kwargs, "load_cuda_dir"),
    )

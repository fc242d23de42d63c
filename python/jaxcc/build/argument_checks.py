"""Checks of the Python shape of load arguments: types, text that encodes as UTF-8, no NUL, paths.
The value rules (name syntax, ranges, vmap methods) are the core's and run when the request is
built (build/options.py); these checks only make sure each value can reach it intact."""

from __future__ import annotations

import glob
import os

from jaxcc import _core
from jaxcc.errors import SpecError


def require_utf8(text: str, what) -> None:
    """Lone surrogates (e.g. from os.fsdecode of undecodable bytes) cannot reach the core.
    `what` names the text in the error: a string, or a callable that makes it, so that callers
    on the load path format nothing unless there is an error."""
    if text.isascii():  # the common case, checked without encoding a copy
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise SpecError(
            f"{what() if callable(what) else what} is not valid Unicode text: {e.reason} at "
            f"position {e.start}; "
            "pass text that encodes as UTF-8 (decode byte strings with errors='replace')"
        ) from None


def function_requests(functions, where: str):
    """dict name -> tokens | None, list of names, or None -> [FunctionRequest] or None."""
    if functions is None:
        return None
    if isinstance(functions, dict):
        requests = []
        for name, tokens in functions.items():
            if not isinstance(name, str):
                raise SpecError(f"{where}: function names must be strings, got {name!r}")
            if isinstance(tokens, str):
                tokens = tokens.split()
            if tokens is not None and (
                not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens)
            ):
                raise SpecError(
                    f"{where}: the arg_spec of '{name}' must be a list of strings such as "
                    f"['arg', 'ret', 'attr.scale:float32'], got {tokens!r}"
                )
            for text in (name, *(tokens or ())):
                require_utf8(text, lambda name=name: f"{where}: functions entry {name!r}")
            requests.append(_core.FunctionRequest(name, None if tokens is None else list(tokens)))
        return requests
    if isinstance(functions, (list, tuple)):
        if not all(isinstance(n, str) for n in functions):
            raise SpecError(f"{where}: a list of functions must hold function names (strings)")
        for n in functions:
            require_utf8(n, lambda n=n: f"{where}: function name {n!r}")
        return [_core.FunctionRequest(n, None) for n in functions]
    hint = f"; for one function write [{functions!r}]" if isinstance(functions, str) else ""
    raise SpecError(
        f"{where}: functions must be a dict of arg_specs, a list of names or None, "
        f"got {type(functions).__name__}{hint}"
    )


def string_list(value, what: str) -> list[str]:
    if value is None:
        return []
    # list and tuple first: isinstance(..., os.PathLike) runs the ABC machinery, a visible part
    # of a warm load the first time a process asks.
    if not isinstance(value, (list, tuple)) and isinstance(value, (str, os.PathLike)):
        value = [value]
    try:
        items = [v if type(v) is str else os.fspath(v) for v in value]
    except TypeError:
        raise SpecError(f"{what} must be a list of strings, got {value!r}") from None
    for item in items:
        if not isinstance(item, str):
            raise SpecError(f"{what} must be a list of strings, got the bytes {item!r}; decode it")
        # The core hands these to the compiler as C strings: a NUL would silently cut the flag.
        if "\0" in item:
            raise SpecError(f"{what} entry {item!r} contains a NUL character; remove it")
        require_utf8(item, what)
    return items


def source_files(sources, where: str) -> list:
    """The request's sources as the core takes them: files from read_source pass as they are;
    inline (label, text) pairs must encode as UTF-8 to cross. The core owns the rules on the text
    itself (no NUL, not all blank: pipeline/source_text.h)."""
    files = []
    for source in sources:
        if not isinstance(source, (_core.SourceFile, _core.DeferredSourceFile)):
            label, text = source
            require_utf8(text, lambda label=label: f"{where}: source {label}")
            source = _core.SourceFile(label, text)
        files.append(source)
    return files


def ninja_workers(value, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(
            f"{where}: ninja_workers must be a positive integer or None (one job per core), "
            f"got {value!r}"
        )
    return value


def build_directory(value, where: str) -> str:
    if not value:
        return ""
    try:
        path = os.fspath(value)
    except TypeError:
        raise SpecError(
            f"{where}: build_directory must be a path (str or os.PathLike), "
            f"got {type(value).__name__}"
        ) from None
    if not isinstance(path, str) or "\0" in path:
        raise SpecError(f"{where}: build_directory must be a text path without NUL, got {path!r}")
    if os.path.exists(path) and not os.path.isdir(path):
        raise SpecError(
            f"{where}: build_directory {path} exists and is not a directory; pass a directory "
            "path (it is created if missing)"
        )
    return path


def arch_list(compute_capability, where: str) -> list[str]:
    """compute_capability: None, "8.0", "sm_90a", "80,90" or a list of those (parsed in C++)."""
    if compute_capability is None:
        return []
    if isinstance(compute_capability, (int, float)):
        compute_capability = str(compute_capability)
    if isinstance(compute_capability, str):
        return [compute_capability]
    if isinstance(compute_capability, (list, tuple)) and all(
        isinstance(c, (str, int, float)) for c in compute_capability
    ):
        return [str(c) for c in compute_capability]
    raise SpecError(
        f"{where}: compute_capability must be a string such as '8.0', 'sm_90a' or '80,90', or a "
        f"list of them; got {compute_capability!r}"
    )


def join_sources(sources, what: str) -> str:
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


def abspath(path, what: str) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise SpecError(
            f"{what} must be a path (str or os.PathLike), got {type(path).__name__}"
        ) from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    # A name that is not UTF-8 decodes to lone surrogates, which cannot reach the core.
    require_utf8(path, lambda: f"{what} {path!r}")
    return os.path.abspath(path)


def read_source(path: str):
    """The file for a request, as the core gives it: a `_core.DeferredSourceFile` (path and settled
    stat stamp; a warm load never reads it, decision 139) or a `_core.SourceFile` read now. Its
    bytes never become a Python string; SpecError when unreadable or not UTF-8."""
    return _core.open_source_file(path)


def collect_dir(directory, file_patterns, default_patterns, where: str):
    """(root, [SourceFile]) of the files of `directory` matching the patterns (not recursive)."""
    root = abspath(directory, f"{where}: directory")
    if not os.path.isdir(root):
        raise SpecError(f"{where}: {root} is not a directory; pass the directory of the sources")
    if isinstance(file_patterns, str):
        file_patterns = [file_patterns]  # one pattern, not one per character
    patterns = list(file_patterns) if file_patterns else default_patterns
    paths = sorted({p for pattern in patterns for p in glob.glob(os.path.join(root, pattern))})
    paths = [p for p in paths if os.path.isfile(p)]
    if not paths:
        raise SpecError(f"{where}: no file in {root} matches {patterns}; pass file_patterns=[...]")
    return root, [read_source(p) for p in paths]


def check_kwargs(kwargs: dict, allowed: frozenset, where: str) -> dict:
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise SpecError(
            f"{where}: unknown argument(s) {', '.join(unknown)}; it takes "
            f"{', '.join(sorted(allowed))}"
        )
    return kwargs

"""The fingerprint of the Numba extensions a process has registered outside Numba and NumPy:
`@overload`, `@overload_method`, `@overload_attribute`, `@intrinsic`, `@register_jitable`,
hand-written typing templates and `@lower_builtin`-style lowering (issue 37, decision 148).

Numba's typing picks these by the types it meets, from anywhere in the process, so a kernel's
code does not name all of those it reaches (an `operator.add` overload is reached by `+`). Every
such extension is therefore part of every kernel's key: its implementation's code as the kernel's
own is keyed (bytecode, constants, the globals and module attributes it reads), so an edit to an
overload in another file is another key. An extension whose implementation cannot be keyed makes
every kernel unkeyable: compiled in each process, never kept (numba_cpu_cache_notes.py says why).

Numba's own extensions are keyed by Numba's version (part of every key) and skipped, as are those
of NumPy, llvmlite and the standard library. The registries only grow, so the fingerprint is
computed again only when one of them has grown.
"""

from __future__ import annotations

import hashlib
import inspect

from .numba_cpu_cache import Unkeyable, _key_function, _key_value, _versioned


def _qualified(obj) -> str:
    """A typing key (a function, a type class, a string...) by name: its repr may carry an
    address, which differs in every process."""
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return repr(obj)
    if isinstance(obj, tuple):
        return "(" + ",".join(_qualified(o) for o in obj) + ")"
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if module and name:
        return f"{module}.{name}"
    if type(obj).__module__.startswith("numba"):  # a Numba type instance: its str is its identity
        return str(obj)
    return type(obj).__qualname__


def _implementations(template) -> list:
    """The Python functions that decide what a typing template does: the function given to
    @overload/@overload_method/@overload_attribute, an @intrinsic's definition, or, for a
    hand-written template class, the methods of its own that a user's module defined."""
    found = [
        getattr(template, attribute)
        for attribute in ("_overload_func", "_definition_func")
        if callable(getattr(template, attribute, None))
    ]
    if found:
        return found
    return [
        value
        for klass in template.__mro__
        for value in vars(klass).values()
        if inspect.isfunction(value) and not _skipped(_module_of(value))
    ]


def _module_of(function) -> str:
    """A function's module; for one made by exec (Numba makes some), its globals' module."""
    return function.__module__ or getattr(function, "__globals__", {}).get("__name__") or ""


def _skipped(module: str) -> bool:
    """Numba's, NumPy's, llvmlite's and the standard library's, keyed by their versions, and
    jaxcc's own (its entry's intrinsic, registered at its first use: keyed by jaxcc's version,
    so that a kernel's key does not depend on whether an entry was made before it)."""
    return _versioned(module) or module.split(".")[0] == "jaxcc"


def _is_users(template) -> bool:
    for attribute in ("_overload_func", "_definition_func"):
        function = getattr(template, attribute, None)
        if callable(function):
            return not _skipped(_module_of(function))
    return bool(_implementations(template))


def _registries():
    from numba.core import imputils
    from numba.core.typing import templates

    return templates.builtin_registry, imputils.builtin_registry


def _lists(typing, lowering) -> list:
    return [
        ("typing", typing.functions), ("typing", typing.attributes),
        *(("lowering " + kind, getattr(lowering, kind))
          for kind in ("functions", "getattrs", "setattrs", "casts", "constants")),
    ]  # fmt: skip


def _typing_part(template) -> str | None:
    if not isinstance(template, type) or not _is_users(template):
        return None
    name = f"{template.__module__}.{template.__qualname__}"
    try:
        implementations = [_key_function(f, set()) for f in _implementations(template)]
    except Unkeyable as error:
        raise Unkeyable(f"the Numba extension {name} ({error})") from None
    options = sorted(map(str, (getattr(template, "_jit_options", None) or {}).items()))
    return (
        f"typing {_qualified(getattr(template, 'key', None))} "
        f"{getattr(template, '_attr', '')} {implementations} {options}"
    )


def _lowering_part(kind: str, item) -> str | None:
    implementation, *keys = item
    if _skipped(_module_of(implementation)):
        return None
    try:
        fingerprint = _key_value(implementation, set())
    except Unkeyable as error:
        raise Unkeyable(f"the Numba lowering {_qualified(implementation)} ({error})") from None
    return f"{kind} {fingerprint} {[_qualified(k) for k in keys]}"


# What has been read of each registry list (they only grow), the parts found, the digest.
_seen_counts: list = []
_parts: set = set()  # equal extensions made again (a factory per configuration) count once
_memo: dict = {}


def extensions_fingerprint() -> str:
    """SHA-256 over every user extension registered in this process; raises Unkeyable (naming
    the extension) when one cannot be keyed. Reads only what was registered since the last
    call."""
    from numba.core import entrypoints

    entrypoints.init_all()  # third-party extensions load at the first compile: load them now
    lists = _lists(*_registries())
    if not _seen_counts:
        _seen_counts.extend([0] * len(lists))
    if "error" in _memo:
        raise Unkeyable(_memo["error"])
    grew = False
    for index, (kind, items) in enumerate(lists):
        count = len(items)
        if count == _seen_counts[index]:
            continue
        grew = True
        try:
            for item in items[_seen_counts[index] : count]:
                part = _typing_part(item) if kind == "typing" else _lowering_part(kind, item)
                if part is not None:
                    _parts.add(part)
        except Unkeyable as error:
            _memo["error"] = str(error)
            raise
        _seen_counts[index] = count
    if grew or "digest" not in _memo:
        _memo["digest"] = hashlib.sha256("\0".join(sorted(_parts)).encode()).hexdigest()
    return _memo["digest"]

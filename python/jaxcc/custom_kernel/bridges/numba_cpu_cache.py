"""Compiled Numba CPU code kept in jaxcc's cache between processes (decision 92).

Two kinds of entries, both ordinary cache entries (`<cache>/<name>-<24 hex>/manifest.json`, so
`jaxcc cache ls/prune/clear` and the size cap see them):
  numba_kernel_<function>  a kernel's native code for one tuple of argument types
  numba_entry              the bridge's shared entry point for one tuple of argument types
Each holds one file, `<name>.<12 hex of its SHA-256>.numba`: the machine code and LLVM bitcode
of Numba's final, optimised module, its global symbols renamed after the entry's key (so that code
loaded from the cache never clashes with what Numba compiles in the same process, whose mangled
names carry per-process counters); numba_cpu_object.py writes and reads that file.
Loading it is Numba's JIT linking the machine code: no typing, no optimisation, no code
generation. Entries are written by a background thread of the process that compiled them, while
it does other work, and whatever is left at its end (numba_cpu_cache_writer.py, decision 117).
The manifest records the file's SHA-256 (checked before use: a damaged or altered file is deleted
and compiled again) and the native symbol to look up.

The key is the SHA-256 of every input that decides the machine code (decision 148): the kernel's
bytecode and constants (nested functions and lambdas at any depth), the values of its closure
cells, default arguments and the globals its code names (other njit functions by their own
fingerprint, arrays by content, dtypes with their fields, namedtuples with their field names),
the attribute chains its code reads through a user's modules (`pkg.sub.CONST`), its Numba options
with `locals=` and its pipeline, every Numba extension registered outside Numba
(numba_cpu_extensions.py), the argument types, the versions of Python, NumPy, Numba, llvmlite and
jaxcc, the CPU name and features LLVM targets and Numba's code-generation settings. A kernel that
names something that cannot be keyed safely (an arbitrary object, a ctypes function), returns a
value, uses Numba's environment (object mode, dynamic globals) or needed a conversion of its
argument types is compiled as before and simply not kept, and numba_cpu_cache_notes.py records
why for `jaxcc cache ls`. A parallel kernel's entry names Numba's reload hooks (an allow-list),
run before its code is linked, as Numba's own cache does. Nothing is unpickled: the only data
read back is object code whose digest the manifest vouches for, in a directory only this user
can write (the trust rule of docs/cache.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import time

from .numba_cpu_values import (
    Unkeyable,
    _key_function,
    _options,
)

SCHEMA = "jaxcc-numba-cache-v2"
_LIBRARY_SUFFIX = ".numba"


def _environment() -> dict:
    """Everything outside the kernel that decides the machine code."""
    import llvmlite
    import numba
    import numpy as np
    from llvmlite import binding
    from numba.core import config

    from jaxcc import _core

    return {
        "python": sys.version,
        "numpy": np.__version__,
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "jaxcc": _core.version(),
        "cpu": binding.get_host_cpu_name(),
        "cpu_features": binding.get_host_cpu_features().flatten(),
        "numba_config": [
            repr(getattr(config, name, None))
            for name in (
                "OPT", "CPU_NAME", "CPU_FEATURES", "BOUNDSCHECK", "FASTMATH", "DEBUGINFO_DEFAULT",
                "ENABLE_AVX", "LOOP_VECTORIZE", "SLP_VECTORIZE", "DISABLE_JIT", "THREADING_LAYER",
            )
        ],
    }  # fmt: skip


_environment_memo: dict | None = None


def key_inputs(kind: str, arg_types: tuple, kernel=None) -> dict:
    """The key's inputs (recorded in the manifest); raises Unkeyable."""
    global _environment_memo
    if _environment_memo is None:
        _environment_memo = _environment()
    inputs = {
        "schema": SCHEMA,
        "kind": kind,
        "arg_types": [str(t) for t in arg_types],
        "environment": _environment_memo,
    }
    if kernel is not None:
        from .numba_cpu_extensions import extensions_fingerprint

        inputs["kernel"] = _key_function(kernel.py_func, set())
        inputs["options"] = _options(kernel)
        inputs["extensions"] = extensions_fingerprint()
    return inputs


def key_of(inputs: dict) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def entry_name(kind: str, function_name: str | None = None) -> str:
    """The cache entry's module name: numba_entry, or numba_kernel_<function>."""
    if function_name is None:
        return f"numba_{kind}"
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in function_name)
    return f"numba_{kind}_{safe}"[:100]


def _trusted(path: str) -> bool:
    """Owned by this user and writable by nobody else (docs/cache.md, Trust)."""
    info = os.lstat(path)
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _entry_dir(root: str, name: str, key: str) -> str:
    return os.path.join(root, f"{name}-{key[:24]}")


def _reload_parfors() -> None:
    from numba.core.typed_passes import _reload_parfors as numba_reload_parfors

    numba_reload_parfors()


# Numba's reload hooks (CompileResult.reload_init) that an entry may ask its loader to run, by
# name, as its own cache pickles them by reference; each runs through a static import, so an
# entry never names code to import. Parfors code calls Numba's threading layer through symbols
# that only `_launch_threads` defines: linked without them, it jumped to null.
_RELOAD_HOOKS = {"numba.core.typed_passes._reload_parfors": _reload_parfors}


def reload_hook_names(result) -> list[str]:
    """The names of a compile's reload hooks; Unkeyable for a hook jaxcc does not know."""
    names = []
    for hook in getattr(result, "reload_init", None) or ():
        name = f"{getattr(hook, '__module__', '?')}.{getattr(hook, '__qualname__', '?')}"
        if name not in _RELOAD_HOOKS:
            raise Unkeyable(f"Numba asks for a reload hook jaxcc does not know ({name})")
        names.append(name)
    return sorted(set(names))


def run_reload_hooks(names) -> None:
    """Runs an entry's reload hooks before its code is linked (names outside the allow-list
    never reach here: `load` treats such an entry as damaged)."""
    for name in names:
        _RELOAD_HOOKS[name]()


def load(root: str, name: str, inputs: dict):
    """(bitcode, symbol, reload hooks) of a complete, intact entry, or None (a miss).
    A damaged entry is removed so that the next store replaces it."""
    key = key_of(inputs)
    directory = _entry_dir(root, name, key)
    try:
        with open(os.path.join(directory, "manifest.json"), "rb") as f:
            manifest = json.loads(f.read())
        if manifest.get("key") != key:
            return None
        path = os.path.join(directory, manifest["library_file"])
        if not (_trusted(root) and _trusted(directory) and _trusted(path)):
            return None  # never loaded; the loaders' trust check reports it with its fix
        with open(path, "rb") as f:
            blob = f.read()
        if hashlib.sha256(blob).hexdigest() != manifest["library_sha256"]:
            raise ValueError("digest mismatch")
        symbol = manifest["function_names"][0]
        if not blob or not isinstance(symbol, str):
            raise ValueError("empty")
        hooks = manifest.get("reload_init", [])
        if not isinstance(hooks, list) or not set(hooks) <= _RELOAD_HOOKS.keys():
            raise ValueError("unknown reload hooks")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        _remove(directory)
        return None
    _touch(directory)
    return blob, symbol, hooks


def _touch(directory: str) -> None:
    # The entry's mtime is its last use for LRU eviction, refreshed at most once a minute.
    with contextlib.suppress(OSError):
        if time.time() - os.stat(directory).st_mtime > 60:
            os.utime(directory)


def _remove(directory: str) -> None:
    import shutil

    with contextlib.suppress(OSError):
        if _trusted(directory):
            shutil.rmtree(directory)


def store(
    root, name, inputs, blob: bytes, symbol: str, build_seconds: float, reload_hooks=()
) -> None:
    """Publishes an entry: the file, then the manifest, each under a temporary name renamed into
    place, so a reader sees a complete entry or none. Failures (read-only cache, full disk) only
    mean the next process compiles again."""
    import secrets
    import socket

    from jaxcc import _core

    key = key_of(inputs)
    directory = _entry_dir(root, name, key)
    digest = hashlib.sha256(blob).hexdigest()
    library = f"{name}.{digest[:12]}{_LIBRARY_SUFFIX}"
    manifest = {
        "schema": 1, "key": key, "module_name": name, "library_file": library,
        "library_sha256": digest, "jaxcc_version": _core.version(), "function_names": [symbol],
        "dependencies": [], "inputs": inputs, "build_seconds": build_seconds,
        "created_unix": int(time.time()), "reload_init": sorted(reload_hooks),
    }  # fmt: skip
    suffix = f".tmp-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not (_trusted(root) and _trusted(directory)):
            return
        for file_name, data in ((library, blob), ("manifest.json", json.dumps(manifest).encode())):
            temporary = os.path.join(directory, file_name + suffix)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, os.path.join(directory, file_name))
    except OSError:
        return
    from .numba_cpu_cache_notes import forget

    forget(root, name)  # kept now: an older note on why it was not is stale


def register_runtime_symbols() -> None:
    """The C functions of Numba's runtime (NRT_MemInfo_*...) made known to its JIT linker, as
    Numba's own runtime initialisation does, without compiling the runtime's LLVM functions
    (cached code carries its own copies)."""
    from llvmlite import binding
    from numba.core.runtime import _nrt_python

    for py_name, address in _nrt_python.c_helpers.items():
        binding.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)

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

The key is the SHA-256 of every input that decides the machine code: the kernel's bytecode and
constants (nested code included), the values of its closure cells, default arguments and the
globals its code names (other njit functions by their own fingerprint, arrays by content), its
Numba options, the argument types, the versions of Python, NumPy, Numba, llvmlite and jaxcc, the
CPU name and features LLVM targets and Numba's code-generation settings. A kernel that names
something that cannot be keyed safely (an arbitrary object, a ctypes function), returns a value,
uses Numba's environment (object mode, dynamic globals) or needed a conversion of its argument
types is compiled as before and simply not kept. Nothing is unpickled: the only data read back is
object code whose digest the manifest vouches for, in a directory only this user can write
(the trust rule of docs/cache.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import time
import types as pytypes

SCHEMA = "jaxcc-numba-cache-v1"
_LIBRARY_SUFFIX = ".numba"
_MAX_ARRAY_BYTES = 1 << 20  # a global array larger than this makes the kernel unkeyable
# Modules whose contents are fixed by their version (part of every key): naming one is keyed by
# its name alone.
_VERSIONED_MODULES = ("numpy", "math", "cmath", "numba", "operator", "builtins")


class Unkeyable(Exception):
    """The kernel names something whose effect on the compiled code cannot be keyed."""


def _key_code(code, out: list, seen: set) -> None:
    out += [
        "code", code.co_code.hex(), repr(code.co_names), repr(code.co_varnames),
        repr(code.co_freevars), repr(code.co_cellvars), str(code.co_argcount),
        str(code.co_flags),
    ]  # fmt: skip
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            _key_code(const, out, seen)
        else:
            out.append(_key_value(const, seen))


def _key_function(function, seen: set) -> str:
    """The fingerprint of a Python function as Numba compiles it: code, closure, defaults and
    the globals its code names."""
    if id(function) in seen:  # recursion between kernels: the name suffices inside the cycle
        return f"recursive:{function.__qualname__}"
    seen.add(id(function))
    out = [function.__qualname__]
    _key_code(function.__code__, out, seen)
    for cell in function.__closure__ or ():
        try:
            out.append(_key_value(cell.cell_contents, seen))
        except ValueError:  # an empty cell: a name bound later
            raise Unkeyable("an unbound closure cell") from None
    for value in function.__defaults__ or ():
        out.append(_key_value(value, seen))
    names = set(function.__code__.co_names)
    for const in function.__code__.co_consts:
        if isinstance(const, pytypes.CodeType):
            names.update(const.co_names)
    scope = function.__globals__
    for name in sorted(names):
        if name in scope:
            out.append(f"global {name}=" + _key_value(scope[name], seen, names))
    return hashlib.sha256("\0".join(out).encode()).hexdigest()


def function_fingerprint(function) -> str | None:
    """The fingerprint of a Python function's code, closure, defaults and the globals it names
    (as in the key above), or None when it names something that cannot be keyed. Other bridges
    use it to recognise equal kernels made again within a process (decision 115)."""
    try:
        return _key_function(function, set())
    except Unkeyable:
        return None


def _key_value(value, seen: set, attributes: set | None = None) -> str:
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (tuple, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, frozenset) else value
        return f"{type(value).__name__}(" + ",".join(_key_value(v, seen) for v in items) + ")"
    if isinstance(value, np.generic):
        return f"np:{value.dtype.str}:{value!r}"
    if isinstance(value, np.ndarray):
        if value.nbytes > _MAX_ARRAY_BYTES or value.dtype.hasobject:
            raise Unkeyable("a large or object array")
        data = np.ascontiguousarray(value).tobytes()
        return f"ndarray:{value.dtype.str}:{value.shape}:{hashlib.sha256(data).hexdigest()}"
    if isinstance(value, np.dtype):
        return f"dtype:{value.str}"
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"nptype:{np.dtype(value).str}"
    if isinstance(value, np.ufunc):
        return f"ufunc:{value.__name__}"
    if hasattr(value, "py_func") and hasattr(value, "targetoptions"):  # another njit function
        return f"njit:{_key_function(value.py_func, seen)}:{_options(value)}"
    if isinstance(value, pytypes.ModuleType):
        name = value.__name__
        if name.split(".")[0] in _VERSIONED_MODULES:
            return f"module:{name}"
        # A user's module: what the kernel reads from it (attribute names are among its names).
        found = [
            f"{a}=" + _key_value(getattr(value, a), seen)
            for a in sorted(attributes or ()) if hasattr(value, a)
        ]  # fmt: skip
        return f"module:{name}{{{','.join(found)}}}"
    if isinstance(value, (pytypes.BuiltinFunctionType, type)):
        module = getattr(value, "__module__", None) or ""
        if module.split(".")[0] in _VERSIONED_MODULES:
            return f"builtin:{module}.{value.__qualname__}"
    if isinstance(value, pytypes.FunctionType):
        module = value.__module__ or ""
        if module.split(".")[0] in _VERSIONED_MODULES:
            return f"function:{module}.{value.__qualname__}"
        return f"function:{_key_function(value, seen)}"
    from numba.core import types as numba_types

    if isinstance(value, numba_types.Type):
        return f"numbatype:{value}"
    raise Unkeyable(f"a global or closure value of type {type(value).__name__}")


def _canonical(value) -> str:
    """repr with sets and dicts in sorted order (a set's repr follows string hashing, which
    changes from process to process)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_canonical(v) for v in value)) + "}"
    if isinstance(value, dict):
        items = sorted((_canonical(k), _canonical(v)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "(" + ",".join(_canonical(v) for v in value) + ")"
    return repr(value)


def _options(kernel) -> list:
    """The njit options (fastmath, parallel, boundscheck...) in a process-independent form."""
    return sorted((str(k), _canonical(v)) for k, v in kernel.targetoptions.items())


def _environment() -> dict:
    """Everything outside the kernel that decides the machine code."""
    import llvmlite
    import numba
    import numpy as np
    from llvmlite import binding
    from numba.core import config

    from ... import _core

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
                "ENABLE_AVX", "LOOP_VECTORIZE", "SLP_VECTORIZE", "DISABLE_JIT",
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
        inputs["kernel"] = _key_function(kernel.py_func, set())
        inputs["options"] = _options(kernel)
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


def load(root: str, name: str, inputs: dict):
    """(bitcode, symbol) of a complete, intact entry, or None (a miss).
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
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        _remove(directory)
        return None
    _touch(directory)
    return blob, symbol


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


def store(root, name, inputs, blob: bytes, symbol: str, build_seconds: float) -> None:
    """Publishes an entry: the file, then the manifest, each under a temporary name renamed into
    place, so a reader sees a complete entry or none. Failures (read-only cache, full disk) only
    mean the next process compiles again."""
    import secrets
    import socket

    from ... import _core

    key = key_of(inputs)
    directory = _entry_dir(root, name, key)
    digest = hashlib.sha256(blob).hexdigest()
    library = f"{name}.{digest[:12]}{_LIBRARY_SUFFIX}"
    manifest = {
        "schema": 1, "key": key, "module_name": name, "library_file": library,
        "library_sha256": digest, "jaxcc_version": _core.version(), "function_names": [symbol],
        "dependencies": [], "inputs": inputs, "build_seconds": build_seconds,
        "created_unix": int(time.time()),
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


def register_runtime_symbols() -> None:
    """The C functions of Numba's runtime (NRT_MemInfo_*...) made known to its JIT linker, as
    Numba's own runtime initialisation does, without compiling the runtime's LLVM functions
    (cached code carries its own copies)."""
    from llvmlite import binding
    from numba.core.runtime import _nrt_python

    for py_name, address in _nrt_python.c_helpers.items():
        binding.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)

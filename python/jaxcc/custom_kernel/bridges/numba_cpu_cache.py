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
import types as pytypes

SCHEMA = "jaxcc-numba-cache-v2"
_LIBRARY_SUFFIX = ".numba"
_MAX_ARRAY_BYTES = 1 << 20  # a global array larger than this makes the kernel unkeyable
# Modules whose contents are fixed by their version (part of every key): naming one is keyed by
# its name alone.
_VERSIONED_MODULES = (
    "numpy", "math", "cmath", "numba", "operator", "builtins", "llvmlite", "collections",
)  # fmt: skip


class Unkeyable(Exception):
    """The kernel names something whose effect on the compiled code cannot be keyed."""


def _code_objects(code):
    """The code object and those of its nested functions, lambdas and comprehensions at any
    depth (each is a constant of the code that defines it)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            yield from _code_objects(const)


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


_chains_of_code: dict = {}
_CHAIN_STARTS = ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME")
_CHAIN_LINKS = ("LOAD_ATTR", "LOAD_METHOD")


def _attribute_chains(code) -> set:
    """(where, name, attributes) of every name the code (nested code included) loads and the
    attributes it reads from it at once: `pkg.sub.CONST` is ('LOAD_GLOBAL', 'pkg', ('sub',
    'CONST')). Numba resolves such a chain while typing, through every module on the way."""
    found = _chains_of_code.get(code)
    if found is not None:
        return found
    import dis

    chains = set()
    for nested in _code_objects(code):
        chain = None
        for instruction in dis.get_instructions(nested):
            if instruction.opname in _CHAIN_STARTS:
                if chain is not None:
                    chains.add((chain[0], chain[1], tuple(chain[2])))
                chain = (instruction.opname, instruction.argval, [])
            elif instruction.opname in _CHAIN_LINKS and chain is not None:
                chain[2].append(instruction.argval)
            elif instruction.opname not in ("EXTENDED_ARG", "CACHE", "NOP"):
                if chain is not None:
                    chains.add((chain[0], chain[1], tuple(chain[2])))
                chain = None
        if chain is not None:
            chains.add((chain[0], chain[1], tuple(chain[2])))
    if len(_chains_of_code) < 4096:  # code objects are immutable: read each once
        _chains_of_code[code] = frozenset(chains)
    return frozenset(chains)


def _versioned(module_name: str) -> bool:
    return module_name.split(".")[0] in _VERSIONED_MODULES


def _key_chain(value, attributes: tuple, seen: set) -> str:
    """The fingerprint of what a chain of attribute reads from `value` reaches: through a
    user's modules (a submodule, its constant), the value at the end; a versioned module or
    any other object is keyed whole where the chain leaves the user's modules."""
    path = []
    for attribute in attributes:
        if not isinstance(value, pytypes.ModuleType) or _versioned(value.__name__):
            break
        if not hasattr(value, attribute):
            return ".".join(path + [attribute]) + ":missing"
        value = getattr(value, attribute)
        path.append(attribute)
    return ".".join(path) + "=" + _key_value(value, seen)


def _named(name: str, function, value, seen: set) -> str:
    """_key_value, an Unkeyable naming the global or cell and the function that reads it (what
    `jaxcc cache ls` shows the user)."""
    try:
        return _key_value(value, seen)
    except Unkeyable as error:
        if str(error).startswith("`"):  # named already, deeper down
            raise
        raise Unkeyable(f"`{name}` read by {function.__qualname__} is {error}") from None


def _key_function(function, seen: set) -> str:
    """The fingerprint of a Python function as Numba compiles it: code (nested functions and
    lambdas included), closure, defaults, the globals its code names at any depth and the
    attributes it reads through modules (`pkg.sub.CONST`)."""
    if id(function) in seen:  # recursion between kernels: the name suffices inside the cycle
        return f"recursive:{function.__qualname__}"
    seen.add(id(function))
    out = [function.__qualname__]
    _key_code(function.__code__, out, seen)
    cells = {}
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (), strict=False):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # an empty cell: a name bound later
            raise Unkeyable("an unbound closure cell") from None
        out.append(f"cell {name}=" + _named(name, function, cells[name], seen))
    for value in function.__defaults__ or ():
        out.append(_key_value(value, seen))
    for value in (function.__kwdefaults__ or {}).values():
        out.append(_key_value(value, seen))
    scope = function.__globals__
    builtins = scope.get("__builtins__", {})
    builtins = builtins if isinstance(builtins, dict) else vars(builtins)
    names = set()
    for nested in _code_objects(function.__code__):
        names.update(nested.co_names)
    for name in sorted(names):
        if name in scope:
            out.append(f"global {name}=" + _named(name, function, scope[name], seen))
        elif name not in builtins:
            out.append(f"global {name}:missing")
    for where, name, attributes in sorted(_attribute_chains(function.__code__)):
        if where == "LOAD_DEREF":
            if name not in cells:  # a variable of the kernel's own, read by a nested function
                continue
            root = cells[name]
        elif name in scope:
            root = scope[name]
        else:
            continue
        if isinstance(root, pytypes.ModuleType) and attributes:
            out.append(f"chain {name}." + _key_chain(root, attributes, seen))
    return hashlib.sha256("\0".join(out).encode()).hexdigest()


def function_fingerprint(function) -> str | None:
    """The fingerprint of a Python function's code, closure, defaults and the globals it names
    (as in the key above), or None when it names something that cannot be keyed. Other bridges
    use it to recognise equal kernels made again within a process (decision 115)."""
    try:
        return _key_function(function, set())
    except Unkeyable:
        return None


def _key_dtype(dtype) -> str:
    """A dtype with its fields' names, types and offsets, its itemsize and alignment: `.str`
    alone is `|V8` for every 8-byte record, whatever its fields."""
    if dtype.fields is None and dtype.subdtype is None:
        return dtype.str
    fields = (
        {name: (_key_dtype(f[0]), f[1]) for name, f in dtype.fields.items()}
        if dtype.fields
        else None
    )
    sub = (_key_dtype(dtype.subdtype[0]), dtype.subdtype[1]) if dtype.subdtype else None
    return json.dumps(
        [dtype.str, dtype.names, fields, sub, dtype.itemsize, dtype.isalignedstruct],
        default=str,
    )


def _key_value(value, seen: set) -> str:
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # a namedtuple
        return (
            f"namedtuple:{_key_namedtuple_type(type(value))}("
            + ",".join(_key_value(v, seen) for v in value)
            + ")"
        )
    if isinstance(value, (tuple, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, frozenset) else value
        return f"{type(value).__name__}(" + ",".join(_key_value(v, seen) for v in items) + ")"
    if isinstance(value, np.generic):
        return f"np:{_key_dtype(value.dtype)}:{value!r}"
    if isinstance(value, np.ndarray):
        if value.nbytes > _MAX_ARRAY_BYTES or value.dtype.hasobject:
            raise Unkeyable(f"an array over {_MAX_ARRAY_BYTES} bytes or of objects")
        data = np.ascontiguousarray(value).tobytes()
        return f"ndarray:{_key_dtype(value.dtype)}:{value.shape}:{hashlib.sha256(data).hexdigest()}"
    if isinstance(value, np.dtype):
        return f"dtype:{_key_dtype(value)}"
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"nptype:{np.dtype(value).str}"
    if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields"):
        return f"namedtuple_type:{_key_namedtuple_type(value)}"
    if isinstance(value, np.ufunc):
        return f"ufunc:{value.__name__}"
    if hasattr(value, "py_func") and hasattr(value, "targetoptions"):  # another njit function
        return f"njit:{_key_function(value.py_func, seen)}:{_options(value)}"
    from numba.core.extending import _Intrinsic

    if isinstance(value, _Intrinsic):  # typed and lowered by its definition function
        return f"intrinsic:{value._name}:{_key_function(value._defn, seen)}"
    if isinstance(value, pytypes.ModuleType):
        # What the kernel reads from a user's module is keyed by its attribute chains.
        return f"module:{value.__name__}"
    if isinstance(value, (pytypes.BuiltinFunctionType, type)):
        module = getattr(value, "__module__", None) or ""
        if _versioned(module):
            return f"builtin:{module}.{value.__qualname__}"
    if isinstance(value, pytypes.FunctionType):
        module = value.__module__ or value.__globals__.get("__name__") or ""
        if _versioned(module):
            return f"function:{module}.{value.__qualname__}"
        return f"function:{_key_function(value, seen)}"
    from numba.core import types as numba_types

    if isinstance(value, numba_types.Type):
        return f"numbatype:{value}"
    raise Unkeyable(f"a {type(value).__name__}, which jaxcc cannot fingerprint")


def _key_namedtuple_type(cls) -> str:
    """A namedtuple class by its name, field names and defaults: Numba types its instances and
    their attribute reads by field name."""
    defaults = getattr(cls, "_field_defaults", {})
    return json.dumps(
        [cls.__module__, cls.__qualname__, list(cls._fields), sorted(map(str, defaults))]
    ) + ",".join(_key_value(defaults[k], set()) for k in sorted(defaults))


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
    """The njit options (fastmath, parallel, boundscheck...), its `locals=` types and its
    compiler pipeline, in a process-independent form."""
    options = []
    for name, value in kernel.targetoptions.items():
        if callable(value):  # e.g. inline= a cost model: keyed by its code
            options.append((str(name), _key_value(value, set())))
        else:
            options.append((str(name), _canonical(value)))
    locals_ = getattr(kernel, "locals", None) or {}
    options.append(("locals", _canonical({str(k): str(v) for k, v in locals_.items()})))
    pipeline = getattr(getattr(kernel, "_compiler", None), "pipeline_class", None)
    if pipeline is not None:
        module = getattr(pipeline, "__module__", "") or ""
        if not _versioned(module):
            raise Unkeyable(f"a custom compiler pipeline ({module}.{pipeline.__qualname__})")
        options.append(("pipeline", f"{module}.{pipeline.__qualname__}"))
    return sorted(options)


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

    from ... import _core

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

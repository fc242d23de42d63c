"""Keying the values a Numba kernel's compile depends on (decision 148), for numba_cpu_cache.py's
entry key and numba_cpu_extensions.py's fingerprint of the user's Numba extensions: a function by
its bytecode and constants (nested code at any depth), the globals and closure cells it reads,
the attribute chains its code walks through a user's modules, and values by content (arrays,
dtypes with their fields, namedtuples with their field names). What cannot be keyed safely raises
`Unkeyable`, and the kernel is then compiled in each process and never kept."""

from __future__ import annotations

import hashlib
import json
import types as pytypes

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
    if not getattr(kernel, "_can_compile", True):
        # Explicit signatures (`@njit("void(f8[:], f8[:])")`) limit what the kernel takes: the
        # same code compiled for other types by a plain @njit must not serve it (keys of plain
        # kernels are unchanged).
        options.append(("signatures", sorted(str(s) for s in kernel.signatures)))
    pipeline = getattr(getattr(kernel, "_compiler", None), "pipeline_class", None)
    if pipeline is not None:
        module = getattr(pipeline, "__module__", "") or ""
        if not _versioned(module):
            raise Unkeyable(f"a custom compiler pipeline ({module}.{pipeline.__qualname__})")
        options.append(("pipeline", f"{module}.{pipeline.__qualname__}"))
    return sorted(options)

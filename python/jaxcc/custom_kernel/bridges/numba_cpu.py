"""numba_kernel: a Numba `njit` kernel as an XLA FFI call that runs as native code.

Numba compiles the kernel for the buffers' dtypes and ranks (once per process for equal code,
and from jaxcc's cache in later processes: numba_cpu_cache.py); a C++ trampoline compiled by
jaxcc calls its native function by address in Numba's calling convention, or, for kernels that
return a value or have very many buffers, through an entry `cfunc` shared by every kernel of
those types (numba_cpu_entry.py; decision 91). No Python runs and the GIL is not taken on the
call path, so XLA's CPU threads can run several such kernels at once. `bridge='callback'`
instead calls the kernel through a ctypes Python callback (under the GIL, on every call):
slower, for comparison and debugging.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np

from jaxcc._jax_compat import DEFAULT_VMAP_METHOD
from jaxcc.errors import CallError, CallValueError, DeviceError

from .numba_cpu_compile import collector_paused, compile_kernel
from .numba_cpu_trampoline import start_building, trampoline_target
from .outputs import output_types

MAX_RANK = 8
# vmap methods under which XLA hands the FFI call buffers with an extra leading batch axis: the
# kernel was compiled (and its address taken) for the unbatched rank when the call was traced.
_BATCHED_VMAP_METHODS = ("expand_dims", "broadcast_all", "legacy_vectorized")
_lock = threading.Lock()
# (kernel, bridge, buffer specs) -> (what must stay alive, entry address, kernel address). Kept
# for the life of the process: compiled executables hold the addresses.
_entries: dict[tuple, tuple[object, int, int]] = {}
# cache key of a kernel (its code, closure, globals, options, argument types) -> (what keeps its
# code alive, address, return type): operators make a new njit object per configuration, often
# for code compiled before; equal keys mean equal code, so it is compiled once per process.
_compiled: dict[str, tuple[object, int, object]] = {}
# (array types, return type) -> (the entry object, its address): one entry for all kernels.
_shared_entries: dict[tuple, tuple[object, int]] = {}


def _numba():
    try:
        import numba
    except ImportError:
        raise CallError("numba_kernel needs the numba package: pip install numba") from None
    return numba


def _buffer_specs(arrays, outs) -> tuple[tuple[str, int], ...]:
    specs = []
    for what, items in (("input", arrays), ("output", outs)):
        for i, item in enumerate(items):
            dtype = np.dtype(item.dtype)
            rank = len(item.shape)
            if rank > MAX_RANK:
                raise CallError(f"numba_kernel: {what} {i} has rank {rank}; at most {MAX_RANK}")
            # Numba's CPU target has no float16 (its data model refuses it) nor bfloat16.
            if dtype.kind not in "biufc" or dtype.name in ("bfloat16", "float16"):
                raise CallError(f"numba_kernel: {what} {i} has dtype {dtype}, which numba lacks")
            specs.append((dtype.str, rank))
    return tuple(specs)


def _array_types(specs) -> tuple:
    """The Numba types of the arrays the entry builds: C-contiguous, one per buffer."""
    numba = _numba()
    return tuple(numba.types.Array(numba.from_dtype(np.dtype(d)), r, "C") for d, r in specs)


def _kernel_native(kernel, arg_types):
    """(object keeping the code alive, native address, return type) of `kernel` compiled for
    `arg_types`: from jaxcc's cache when this kernel was compiled before, else compiled by Numba
    (and kept in the cache when it can be keyed safely; else the cache's notes say why)."""
    from . import numba_cpu_cache as cache
    from .numba_cpu_cache_notes import note

    numba = _numba()
    name = cache.entry_name("kernel", getattr(kernel, "__name__", "kernel"))
    try:
        inputs = cache.key_inputs("kernel", arg_types, kernel)
    except cache.Unkeyable as error:
        inputs = None
        note(_cache_root(), name, kernel, f"not fingerprinted: {error}")
    if inputs is not None:
        key = cache.key_of(inputs)
        if key in _compiled:  # the same code made again (a new njit object per configuration)
            return _compiled[key]
        found = _load_cached(name, inputs)
        if found is not None:
            _compiled[key] = (*found, numba.types.none)
            return _compiled[key]
    start = time.perf_counter()
    with collector_paused():
        result, compiled_for = compile_kernel(kernel, arg_types)
    symbol = result.fndesc.llvm_func_name
    address = result.library.get_pointer_to_function(symbol)
    if inputs is not None:
        why_not = _not_persistable(result, compiled_for, arg_types)
        if why_not is None:
            hooks = cache.reload_hook_names(result)
            _store(name, inputs, result.library, symbol, time.perf_counter() - start, hooks)
        else:
            note(_cache_root(), name, kernel, why_not)
        _compiled[key] = (result, address, result.signature.return_type)
    return result, address, result.signature.return_type


def _not_persistable(result, compiled_for, arg_types) -> str | None:
    """Why the compiled code cannot be kept, or None. Only code that needs nothing but its own
    bytes (and, for parallel kernels, Numba's reload hooks, which the load runs): no Python
    objects (Numba's environment), no addresses of this process (dynamic globals), no returned
    value, no conversions."""
    from . import numba_cpu_cache as cache

    numba = _numba()
    environment = getattr(result, "environment", None)
    reasons = (
        (compiled_for != arg_types, "compiled for converted argument types"),
        (result.signature.return_type != numba.types.none, "returns a value"),
        (bool(result.objectmode or result.lifted), "uses object mode"),
        (bool(result.library.has_dynamic_globals), "holds addresses of this process"),
        (environment is not None and bool(environment.consts), "holds Python objects"),
    )
    for failed, reason in reasons:
        if failed:
            return f"not kept: the kernel {reason}"
    try:
        cache.reload_hook_names(result)
    except cache.Unkeyable as error:
        return f"not kept: {error}"
    return None


# cache key -> (library, address) of what this process loaded from the cache: one entry is loaded
# once (its renamed symbols may be defined only once), whichever kernel object asks.
_loaded: dict[str, tuple[object, int]] = {}


def _load_cached(name, inputs):
    """(library, address) from jaxcc's cache, or None (a miss, or code Numba cannot load)."""
    from numba.core.registry import cpu_target
    from numba.core.runtime import rtsys

    from . import numba_cpu_cache as cache
    from .numba_cpu_object import split

    key = cache.key_of(inputs)
    if key in _loaded:
        return _loaded[key]
    found = cache.load(_cache_root(), name, inputs)
    if found is None:
        return None
    blob, symbol, hooks = found
    try:
        cache.run_reload_hooks(
            hooks
        )  # parallel kernels: Numba's threading layer, as its cache does
        object_code, bitcode = split(blob)
        context = cpu_target.target_context
        if not rtsys._init:
            cache.register_runtime_symbols()
        library = context.codegen().unserialize_library((name, "object", (object_code, bitcode)))
        address = library.get_pointer_to_function(symbol)
    except Exception:  # noqa: BLE001 - an entry Numba cannot load is a miss; a compile follows
        return None
    if not address:
        return None
    _loaded[key] = (library, address)
    return _loaded[key]


def _store(name, inputs, library, symbol, seconds, reload_hooks=()) -> None:
    from .numba_cpu_cache_writer import store_later

    store_later(_cache_root(), name, inputs, library, symbol, seconds, tuple(reload_hooks))


def _cache_root() -> str:
    from jaxcc.environment.cache_dir import get_cache_dir

    return get_cache_dir()


def _shared_entry(arg_types, return_type):
    """(CFunc or library, address) of the bridge's entry for these types: one per process and
    types, shared by every kernel; from the cache when a process built it before."""
    from . import numba_cpu_cache as cache
    from .numba_cpu_entry import make_entry

    key = (arg_types, return_type)
    found = _shared_entries.get(key)
    if found is not None:
        return found
    name = cache.entry_name("entry")
    inputs = cache.key_inputs("entry", arg_types + (return_type,))
    persist = return_type == _numba().types.none
    stored = _load_cached(name, inputs) if persist else None
    if stored is not None:
        _shared_entries[key] = stored
        return stored
    start = time.perf_counter()
    with collector_paused():
        entry = make_entry(arg_types, return_type)
    if persist:
        _store(name, inputs, entry._library, entry.native_name, time.perf_counter() - start)
    _shared_entries[key] = (entry, entry.address)
    return _shared_entries[key]


def _flat_argument_count(arg_types) -> int | None:
    """How many arguments the kernel's native function takes when every array field is one
    (5 + 2 * rank each), or None when Numba's calling convention says otherwise."""
    from numba.core.registry import cpu_target

    expected = sum(5 + 2 * t.ndim for t in arg_types)
    packer = cpu_target.target_context.call_conv._get_arg_packer(arg_types)
    return expected if len(packer.argument_types) == expected else None


def _native_entry(kernel, specs):
    """(objects that must stay alive, entry address, kernel address): the kernel's own native
    code, called by the trampoline directly (entry 0) when it returns nothing and its arrays
    fit, else through the shared entry for these buffer types (decision 91)."""
    from .numba_cpu_trampoline import MAX_FLAT_ARGS

    arg_types = _array_types(specs)
    code, impl, return_type = _kernel_native(kernel, arg_types)
    if return_type == _numba().types.none:
        count = _flat_argument_count(arg_types)
        if count is not None and count <= MAX_FLAT_ARGS:
            return (code, None), 0, impl
    entry, address = _shared_entry(arg_types, return_type)
    return (code, entry), address, impl


_CALLBACK_TYPE = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64),
    ctypes.c_void_p,
)  # fmt: skip


def _callback_entry(kernel, specs):
    """The same ABI served by a Python function (GIL, NumPy views built on every call)."""
    dtypes = [np.dtype(s[0]) for s in specs]
    ranks = [s[1] for s in specs]

    def call(buffers, dims, _impl):
        try:
            arrays, used = [], 0
            for i, (dtype, rank) in enumerate(zip(dtypes, ranks, strict=True)):
                shape = tuple(dims[used + d] for d in range(rank))
                used += rank
                count = int(np.prod(shape, dtype=np.int64))
                if count == 0:
                    arrays.append(np.empty(shape, dtype))
                    continue
                raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(buffers[i])
                arrays.append(np.frombuffer(raw, dtype).reshape(shape))
            kernel(*arrays)
            return 0
        except Exception:  # noqa: BLE001 - reported as a status code, like the native bridge
            import traceback

            traceback.print_exc()
            return 1

    callback = _CALLBACK_TYPE(call)
    return callback, ctypes.cast(callback, ctypes.c_void_p).value, 0


def entry_address(kernel, arrays, outs, bridge: str = "native") -> tuple[int, int]:
    """(entry address, kernel address) for these buffers, compiled and pinned on first use."""
    specs = _buffer_specs(arrays, outs)
    key = (kernel, bridge, specs)
    with _lock:
        found = _entries.get(key)
        if found is None:
            make = _native_entry if bridge == "native" else _callback_entry
            found = make(kernel, specs)
            _entries[key] = found
    return found[1], found[2]


def _refuse_inputs_placed_off_the_cpu(kernel, ins) -> None:
    """A Numba kernel has a handler on the CPU only: an eager call placed on a GPU (the default
    device where JAX has one) would reach XLA as 'No FFI handler registered ... on a platform
    CUDA'. Said here, with the fix, when the placement is known (every input concrete): JAX runs
    the call where its committed inputs live, or on the default device when none is committed.
    Under jit XLA places the call by its inputs and its own message stands (decision 81)."""
    import jax

    from jaxcc._jax_compat import Tracer

    arrays = [x for x in ins if isinstance(x, jax.Array)]
    if not arrays or any(isinstance(x, Tracer) for x in ins):
        return
    committed = [x for x in arrays if getattr(x, "committed", True)]
    if committed:
        platforms = {d.platform for x in committed for d in x.devices()}
    else:
        default = jax.config.jax_default_device
        if default is None or isinstance(default, str):
            platforms = {jax.devices(default)[0].platform if default else jax.default_backend()}
        else:
            platforms = {default.platform}
    if platforms - {"cpu"}:
        raise DeviceError(
            f"numba_kernel {getattr(kernel, '__name__', kernel)!s}: a Numba kernel runs on the "
            f"CPU, but this call would run on {sorted(platforms - {'cpu'})[0]}. Put the inputs "
            "on the CPU (jax.device_put(x, jax.devices('cpu')[0])) or call it inside "
            "`with jax.default_device(jax.devices('cpu')[0]):`; for a GPU kernel use "
            "numba_cuda_kernel."
        )


def _refuse_batched_vmap(kernel, vmap_method) -> None:
    """The kernel is compiled for the ranks of the buffers seen when the call is traced, but under
    `expand_dims`, `broadcast_all` or `legacy_vectorized` XLA's vmap hands the same FFI call
    buffers with one more leading axis: the trampoline would pass them to code compiled for the
    lower rank (a crash, or outputs never written; issue 38). Refused when wrapped, with the two
    ways that work."""
    if vmap_method in _BATCHED_VMAP_METHODS:
        raise CallValueError(
            f"numba_kernel {getattr(kernel, '__name__', kernel)!s}: vmap_method={vmap_method!r} "
            "would hand the kernel buffers with an extra leading batch axis, but it is compiled "
            "for the unbatched ranks. Leave vmap_method unset (or 'sequential'): one call per "
            "batch element; or, for one call over the whole batch, register a generator with "
            "def_numba_kernel(kg, vectorized=True): it is then called with the batched outs and "
            "the kernel is compiled for the batched ranks."
        )


def numba_kernel(
    kernel, outs, *, vmap_method=None, input_output_aliases=None, bridge: str = "native"
):
    """Wraps a `numba.njit` kernel `kernel(*inputs, *outputs)` (it writes its outputs in place)
    as a function of the inputs that returns the outputs described by `outs`.

    Usable on its own or returned from a kernel generator given to `def_numba_kernel`.
    `vmap_method` is passed to `jax.ffi.ffi_call` (default 'sequential'); the methods that would
    hand the kernel batched buffers are refused (a CallValueError, see `_refuse_batched_vmap`).
    """
    import jax

    if bridge not in ("native", "callback"):
        raise CallError(f"numba_kernel: bridge must be 'native' or 'callback', got {bridge!r}")
    _refuse_batched_vmap(kernel, vmap_method)
    if not hasattr(kernel, "py_func"):
        _numba()  # without numba, no njit function can be made: name the install first
        raise CallError(
            "numba_kernel: kernel must be a numba.njit function (it is called as "
            f"kernel(*inputs, *outputs)), got {type(kernel).__name__}"
        )
    single, result_types = output_types(outs, "numba_kernel")

    def call(*ins):
        _refuse_inputs_placed_off_the_cpu(kernel, ins)
        start_building(len(ins), len(result_types))  # overlaps the kernel's compile below
        address, impl = entry_address(kernel, ins, result_types, bridge)
        target = trampoline_target(len(ins), len(result_types))
        ffi = jax.ffi.ffi_call(
            target,
            result_types,
            vmap_method=vmap_method or DEFAULT_VMAP_METHOD,
            input_output_aliases=input_output_aliases,
        )
        results = ffi(*ins, fn=np.int64(address), impl=np.int64(impl), pid=np.int64(os.getpid()))
        return results[0] if single else results

    return call

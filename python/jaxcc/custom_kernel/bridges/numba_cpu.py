"""numba_kernel: a Numba `njit` kernel as an XLA FFI call that runs as native code.

The kernel is wrapped in a Numba `cfunc` (compiled once per input/output dtypes and ranks) that
rebuilds the arrays from raw pointers and dimensions; a C++ trampoline compiled by jaxcc calls it
by address. No Python runs and the GIL is not taken on the call path, so XLA's CPU threads can
run several such kernels at once. `bridge='callback'` instead calls the kernel through a ctypes
Python callback (under the GIL, on every call): slower, for comparison and debugging.
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from ..._jax_compat import DEFAULT_VMAP_METHOD
from ...errors import CallError, DeviceError
from .numba_cpu_trampoline import trampoline_target
from .outputs import output_types

MAX_RANK = 8
_lock = threading.Lock()
# (kernel, bridge, buffer specs) -> (the object that must stay alive, its address). Entries are
# kept for the life of the process: compiled executables hold the addresses.
_entries: dict[tuple, tuple[object, int]] = {}
_shape_builders: list | None = None


def _numba():
    try:
        import numba
    except ImportError:
        raise CallError("numba_kernel needs the numba package: pip install numba") from None
    return numba


def _make_shape_builders():
    # One tiny function per rank: the shape tuple of buffer i, read from `dims` at `offset`.
    numba = _numba()
    njit = numba.njit

    def rank(r):
        if r == 0:
            return njit(lambda d, o: ())
        if r == 1:
            return njit(lambda d, o: (d[o],))
        previous = rank(r - 1)
        return njit(lambda d, o: (*previous(d, o), d[o + r - 1]))

    return [rank(r) for r in range(MAX_RANK + 1)]


def _buffer_specs(arrays, outs) -> tuple[tuple[str, int], ...]:
    specs = []
    for what, items in (("input", arrays), ("output", outs)):
        for i, item in enumerate(items):
            dtype = np.dtype(item.dtype)
            rank = len(item.shape)
            if rank > MAX_RANK:
                raise CallError(f"numba_kernel: {what} {i} has rank {rank}; at most {MAX_RANK}")
            if dtype.kind not in "biufc" or dtype.name == "bfloat16":
                raise CallError(f"numba_kernel: {what} {i} has dtype {dtype}, which numba lacks")
            specs.append((dtype.str, rank))
    return tuple(specs)


def _native_entry(kernel, specs):
    """A cfunc `int32(void**, int64*)` that calls `kernel(*arrays)`; returns 1 if it raised."""
    global _shape_builders
    numba = _numba()
    from numba import types

    if _shape_builders is None:
        _shape_builders = _make_shape_builders()
    carray = numba.carray
    count = len(specs)

    # A chain of small jitted steps, each appending one array view to a tuple, so that any number
    # of buffers is handled without generating Python source.
    def step(i, offset):
        if i == count:
            return numba.njit(lambda buffers, dims, arrays: kernel(*arrays))
        dtype = np.dtype(specs[i][0]).type
        rank = specs[i][1]
        shape_of = _shape_builders[rank]
        following = step(i + 1, offset + rank)

        def view(buffers, dims, arrays):
            array = carray(buffers[i], shape_of(dims, offset), dtype)
            following(buffers, dims, (*arrays, array))

        return numba.njit(view)

    first = step(0, 0)

    @numba.cfunc(types.int32(types.CPointer(types.voidptr), types.CPointer(types.int64)))
    def entry(buffers, dims):
        try:
            first(buffers, dims, ())
        except Exception:  # noqa: BLE001 - the status code carries the failure to C++
            return 1
        return 0

    return entry, entry.address


_CALLBACK_TYPE = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)
)


def _callback_entry(kernel, specs):
    """The same ABI served by a Python function (GIL, NumPy views built on every call)."""
    dtypes = [np.dtype(s[0]) for s in specs]
    ranks = [s[1] for s in specs]

    def call(buffers, dims):
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
    return callback, ctypes.cast(callback, ctypes.c_void_p).value


def entry_address(kernel, arrays, outs, bridge: str = "native") -> int:
    """The address of the compiled entry for these buffers (compiled and pinned on first use)."""
    specs = _buffer_specs(arrays, outs)
    key = (kernel, bridge, specs)
    with _lock:
        found = _entries.get(key)
        if found is None:
            make = _native_entry if bridge == "native" else _callback_entry
            found = make(kernel, specs)
            _entries[key] = found
    return found[1]


def _refuse_inputs_placed_off_the_cpu(kernel, ins) -> None:
    """A Numba kernel has a handler on the CPU only: an eager call placed on a GPU (the default
    device where JAX has one) would reach XLA as 'No FFI handler registered ... on a platform
    CUDA'. Said here, with the fix, when the placement is known (every input concrete): JAX runs
    the call where its committed inputs live, or on the default device when none is committed.
    Under jit XLA places the call by its inputs and its own message stands (decision 81)."""
    import jax

    from ..._jax_compat import Tracer

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


def numba_kernel(
    kernel, outs, *, vmap_method=None, input_output_aliases=None, bridge: str = "native"
):
    """Wraps a `numba.njit` kernel `kernel(*inputs, *outputs)` (it writes its outputs in place)
    as a function of the inputs that returns the outputs described by `outs`.

    Usable on its own or returned from a kernel generator given to `def_numba_kernel`.
    `vmap_method` is passed to `jax.ffi.ffi_call` (default 'sequential').
    """
    import jax

    if bridge not in ("native", "callback"):
        raise CallError(f"numba_kernel: bridge must be 'native' or 'callback', got {bridge!r}")
    if not hasattr(kernel, "py_func"):
        raise CallError(
            "numba_kernel: kernel must be a numba.njit function (it is called as "
            f"kernel(*inputs, *outputs)), got {type(kernel).__name__}"
        )
    single, result_types = output_types(outs, "numba_kernel")

    def call(*ins):
        _refuse_inputs_placed_off_the_cpu(kernel, ins)
        address = entry_address(kernel, ins, result_types, bridge)
        target = trampoline_target(len(ins), len(result_types))
        ffi = jax.ffi.ffi_call(
            target,
            result_types,
            vmap_method=vmap_method or DEFAULT_VMAP_METHOD,
            input_output_aliases=input_output_aliases,
        )
        results = ffi(*ins, fn=np.int64(address), pid=np.int64(os.getpid()))
        return results[0] if single else results

    return call

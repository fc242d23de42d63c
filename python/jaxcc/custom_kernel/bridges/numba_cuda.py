"""numba_cuda_kernel: a Numba-CUDA kernel as an XLA FFI call on the GPU, launched natively on
XLA's stream.

Numba-CUDA compiles the kernel to PTX for the buffers' dtypes and ranks (once per combination);
a launcher compiled by jaxcc's CUDA path loads that PTX with the CUDA runtime and launches it on
the stream XLA gives the custom call. No Python runs per call, the data never leaves the GPU, and
the launch can be captured in a CUDA graph.
"""

from __future__ import annotations

import os
import re
import threading
import types as pytypes

import numpy as np

from jaxcc._jax_compat import DEFAULT_VMAP_METHOD
from jaxcc.errors import CallError, CallValueError

from .gpu_common import c_buffer, oldest_gpu_cc, parse_cc, require_gpu_backend
from .gpu_common import launch_dims as launch_dims_of
from .launcher import preload
from .numba_cuda_launcher import PRELOAD_SYMBOL, function_name, launcher_module
from .outputs import output_types

_WHO = "numba_cuda_kernel"

_lock = threading.Lock()
# (kernel's code key, buffer specs, cc, options) -> (ptx buffer, name buffer): kept for the life
# of the process, compiled executables hold their addresses. The code key is the kernel's
# fingerprint (code, closure values, defaults, the globals it names), so a new `cuda.jit` object
# with equal code, made per configuration and per trace as operators do, reuses the PTX compiled
# before (decision 115); a kernel that names something unkeyable is keyed by the object itself.
_compiled: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(")


def _numpy_names_numba_cuda_expects() -> None:
    # numba-cuda up to at least 0.30 registers an overload for np.row_stack when its CUDA target
    # is first used; NumPy 2.5 removed that alias of np.vstack, so the import fails with an
    # AttributeError. Putting the alias back (only where it is missing) lets those releases run;
    # it is the function NumPy itself exported under that name until 2.4 (decision 81).
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def _numba_cuda():
    _numpy_names_numba_cuda_expects()
    try:
        from numba import cuda, types
    except ImportError:
        raise CallError(
            "numba_cuda_kernel needs Numba's CUDA target: pip install numba-cuda"
        ) from None
    return cuda, types


def _specs(arrays, outs) -> tuple[tuple[str, int], ...]:
    specs = []
    for what, items in (("input", arrays), ("output", outs)):
        for i, item in enumerate(items):
            dtype = np.dtype(item.dtype)
            if dtype.kind not in "biufc" or dtype.name == "bfloat16":
                raise CallValueError(
                    f"numba_cuda_kernel: {what} {i} has dtype {dtype}, which numba lacks; cast it "
                    "(for example to float32) before the call"
                )
            specs.append((dtype.str, len(item.shape)))
    return tuple(specs)


# `@cuda.jit` options that change the PTX, passed to `cuda.compile_ptx` as they are.
_PTX_OPTIONS = ("debug", "lineinfo", "fastmath", "opt", "forceinline", "launch_bounds")


def jit_options(kernel) -> tuple[tuple[str, object], ...]:
    """The `@cuda.jit(...)` options of `kernel` that jaxcc honours, as a sorted, hashable tuple:
    the PTX options above and `max_registers` (the PTX JIT's register limit at load). Options
    jaxcc cannot honour yet are refused rather than dropped."""
    options = dict(getattr(kernel, "targetoptions", None) or {})
    name = getattr(getattr(kernel, "py_func", kernel), "__name__", "kernel")
    for unsupported in ("link", "extensions"):
        if options.get(unsupported):
            raise CallError(
                f"{_WHO}: {name} was declared with @cuda.jit({unsupported}=...), which "
                "numba_cuda_kernel cannot honour (its launcher loads one PTX module, without "
                "linking); write the linked code as a jaxcc CUDA kernel (load_cuda_inline) or "
                "as a @cuda.jit(device=True) function in Python"
            )
    kept = {k: options[k] for k in _PTX_OPTIONS if options.get(k) is not None}
    if options.get("max_registers"):
        kept["max_registers"] = int(options["max_registers"])
    if isinstance(kept.get("launch_bounds"), list):
        kept["launch_bounds"] = tuple(kept["launch_bounds"])
    return tuple(sorted(kept.items()))


def compile_ptx(kernel, specs, cc: tuple[int, int], options=()) -> tuple[str, str]:
    """The PTX of `kernel` for these (dtype, rank) buffers and `@cuda.jit` options (from
    `jit_options`), and its entry's name."""
    cuda, types = _numba_cuda()
    from numba import from_dtype

    signature = tuple(types.Array(from_dtype(np.dtype(d)), rank, "C") for d, rank in specs)
    py_func = getattr(kernel, "py_func", kernel)
    ptx_options = {k: v for k, v in options if k in _PTX_OPTIONS}
    try:
        ptx, _ = cuda.compile_ptx(py_func, signature, device=False, cc=cc, **ptx_options)
    except Exception as e:
        raise CallError(
            f"numba_cuda_kernel: Numba could not compile {getattr(py_func, '__name__', py_func)} "
            f"for {[f'{np.dtype(d).name}[{r}d]' for d, r in specs]} (it is called as "
            f"kernel(*inputs, *outputs)): {e}"
        ) from e
    found = _ENTRY.findall(ptx)
    if len(found) != 1:
        raise CallError(
            f"numba_cuda_kernel: expected one kernel entry in Numba's PTX, found {len(found)}"
        )
    return ptx, found[0]


def _code_key(kernel) -> tuple:
    from .numba_cpu_values import function_fingerprint

    py_func = getattr(kernel, "py_func", kernel)
    if isinstance(py_func, pytypes.FunctionType):
        fingerprint = function_fingerprint(py_func)
        if fingerprint is not None:
            return ("code", fingerprint)
    return ("object", kernel)


def _buffers(kernel, specs, cc, options) -> tuple[int, int]:
    key = (_code_key(kernel), specs, cc, options)
    with _lock:
        found = _compiled.get(key)
        if found is None:
            ptx, entry = compile_ptx(kernel, specs, cc, options)
            found = (c_buffer(ptx.encode()), c_buffer(entry.encode()))
            _compiled[key] = found
    return found[0].ctypes.data, found[1].ctypes.data


# The tile of threads per block that a launch of `launch_dims` threads takes along each axis, by
# the number of axes (brainevent 0.3's choice, so an operator ported from it launches the same
# blocks): 1-D launches take `threads_per_block`, 2-D 16x16 tiles, 3-D 8x8x4 tiles.
_TILES = {2: (16, 16), 3: (8, 8, 4)}
# vmap methods under which XLA hands the kernel each buffer with an extra batch axis; the PTX is
# compiled for the unbatched ranks, so such a launch would read its parameters wrongly.
_BATCHED_VMAP_METHODS = ("expand_dims", "broadcast_all", "legacy_vectorized")


def launch_config(launch_dims, threads_per_block: int = 256):
    """(grid, block), each padded to 3 ints, for a launch of at least `launch_dims` threads (an int
    or 1 to 3 non-negative ints, one per axis): blocks of `threads_per_block` threads for 1-D,
    16x16 for 2-D and 8x8x4 for 3-D, each shrunk to the extent where that is smaller, and as many
    blocks as cover the extent (none along an empty axis). Bad values raise CallValueError."""
    items = tuple(launch_dims) if isinstance(launch_dims, (tuple, list)) else (launch_dims,)
    if not 1 <= len(items) <= 3 or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in items
    ):
        raise CallValueError(
            f"{_WHO}: launch_dims must be a non-negative int or a tuple of 1 to 3 of them (the "
            f"threads to launch along each axis), got {launch_dims!r}"
        )
    if (
        not isinstance(threads_per_block, (int, np.integer))
        or isinstance(threads_per_block, bool)
        or not 1 <= threads_per_block <= 1024
    ):
        raise CallValueError(
            f"{_WHO}: threads_per_block must be an int from 1 to 1024 (CUDA's limit), got "
            f"{threads_per_block!r}"
        )
    dims = tuple(int(v) for v in items)
    tile = _TILES.get(len(dims), (int(threads_per_block),))
    block = tuple(max(1, min(t, d)) for t, d in zip(tile, dims, strict=True))
    grid = tuple(-(-d // b) for d, b in zip(dims, block, strict=True))
    pad = (1,) * (3 - len(dims))
    grid, block = grid + pad, block + pad
    if any(g > limit for g, limit in zip(grid, (2**31 - 1, 65535, 65535), strict=True)):
        raise CallValueError(
            f"{_WHO}: launch_dims {dims} needs a grid of {grid} blocks, beyond CUDA's limits (x < "
            "2**31, y and z <= 65535); fold the extra work into the first axis"
        )
    return grid, block


def _launch(grid, block, launch_dims, threads_per_block, vmap_method):
    """The (grid, block, vmap_method for ffi_call) of a wrap: explicit or from launch_dims."""
    explicit = grid is not None or block is not None
    if explicit and launch_dims is not None:
        raise CallValueError(
            f"{_WHO}: give either grid= and block= or launch_dims=, not both (launch_dims= "
            "derives the grid and block itself)"
        )
    if not explicit and launch_dims is None:
        raise CallValueError(
            f"{_WHO}: no launch configuration; give grid= and block= (blocks, threads per block) "
            "or launch_dims= (the threads to launch; grid and block are derived)"
        )
    if explicit and (grid is None or block is None):
        raise CallValueError(
            f"{_WHO}: grid= and block= go together, got grid={grid!r}, block={block!r}; give "
            "both, or launch_dims= alone"
        )
    if launch_dims is not None:
        grid3, block3 = launch_config(launch_dims, threads_per_block)
        # Under vmap each batch element gets the launch `launch_dims` describes: the kernel is
        # compiled for the unbatched buffers, so every method that would hand it batched ones is
        # run as XLA's sequential map, one launch per element (brainevent launches per slice too).
        if vmap_method in _BATCHED_VMAP_METHODS:
            vmap_method = DEFAULT_VMAP_METHOD
        return grid3, block3, vmap_method
    if vmap_method in _BATCHED_VMAP_METHODS:
        raise CallValueError(
            f"{_WHO}: vmap_method={vmap_method!r} with an explicit grid would launch that one grid "
            "over buffers with an extra batch axis the kernel was not compiled for; give "
            "launch_dims= instead of grid= and block= (each batch element then gets its own "
            "launch), or leave vmap_method unset (one launch per element)"
        )
    grid3, block3 = launch_dims_of(grid, "grid", _WHO), launch_dims_of(block, "block", _WHO)
    return grid3, block3, vmap_method


def numba_cuda_kernel(
    kernel,
    outs,
    *,
    grid=None,
    block=None,
    launch_dims=None,
    threads_per_block: int = 256,
    shared_mem: int = 0,
    vmap_method=None,
    input_output_aliases=None,
    compute_capability=None,
):
    """Wraps a Numba-CUDA kernel `kernel(*inputs, *outputs)` (a `numba.cuda.jit` function, or
    the plain Python function) as a function of the inputs that returns the outputs described by
    `outs`, launched on XLA's stream with `grid` blocks of `block` threads, or with the grid and
    block `launch_config(launch_dims, threads_per_block)` derives (brainevent 0.3's form).

    A launch of zero threads (a 0 in `launch_dims`) runs nothing and returns zero outputs. Under
    `jax.vmap` a `launch_dims` kernel is launched once per batch element whatever `vmap_method`
    says; an explicit grid refuses the methods that would hand it batched buffers. A bfloat16
    output, which numba lacks, is refused here, a bfloat16 input when the call is traced (both
    CallValueError, also a ValueError).
    The kernel's `@cuda.jit` options (fastmath, lineinfo, debug, opt, forceinline, launch_bounds,
    max_registers) apply as they would under Numba; `link=` is refused with a CallError.
    Usable on its own or returned from a kernel generator given to `def_numba_cuda_kernel`.
    `compute_capability` ("8.0") fixes the PTX target; by default the oldest GPU JAX sees.
    """
    import jax
    import jax.numpy as jnp

    grid3, block3, vmap_method = _launch(grid, block, launch_dims, threads_per_block, vmap_method)
    if not callable(kernel):
        raise CallError(f"numba_cuda_kernel: kernel must be a function, got {type(kernel)}")
    if block3[0] * block3[1] * block3[2] > 1024 or block3[2] > 64:
        raise CallError(
            f"{_WHO}: block {block3} exceeds CUDA's limits (at most 1024 threads, z <= 64)"
        )
    if not isinstance(shared_mem, (int, np.integer)) or shared_mem < 0:
        raise CallError(f"numba_cuda_kernel: shared_mem must be an int >= 0, got {shared_mem!r}")
    single, result_types = output_types(outs, _WHO)
    for i, result in enumerate(result_types):
        if np.dtype(result.dtype).name == "bfloat16":
            raise CallValueError(
                f"{_WHO}: output {i} is bfloat16, which numba cannot compile a kernel for; "
                "declare it float32 (or float16) and cast the result: out.astype(jnp.bfloat16)"
            )
    options = jit_options(kernel)
    max_registers = dict(options).get("max_registers", 0)
    arch = None if compute_capability is None else parse_cc(compute_capability, _WHO)
    empty = 0 in grid3

    def call(*ins):
        specs = _specs(ins, result_types)
        if empty:
            # No thread runs, so nothing is written: the outputs are zeros (as on brainevent),
            # and there is nothing to compile or launch.
            results = [jnp.zeros(r.shape, r.dtype) for r in result_types]
            return results[0] if single else results
        cc = arch or oldest_gpu_cc(_WHO)
        ptx, name = _buffers(kernel, specs, cc, options)
        module = launcher_module(len(ins), len(result_types), f"{cc[0]}.{cc[1]}")
        ffi = jax.ffi.ffi_call(
            module.target_name(function_name(len(ins), len(result_types))),
            result_types,
            vmap_method=vmap_method or DEFAULT_VMAP_METHOD,
            input_output_aliases=input_output_aliases,
        )
        attrs = dict(zip(("gx", "gy", "gz"), grid3, strict=True))
        attrs.update(zip(("bx", "by", "bz"), block3, strict=True))
        require_gpu_backend(_WHO)
        # Load the PTX on every device now, at trace time, never inside a graph capture.
        preload(module, PRELOAD_SYMBOL, (ptx, name, max_registers), _WHO)
        results = ffi(
            *ins,
            ptx=np.int64(ptx),
            name=np.int64(name),
            pid=np.int64(os.getpid()),
            shared_mem=np.int64(shared_mem),
            max_registers=np.int64(max_registers),
            **{k: np.int64(v) for k, v in attrs.items()},
        )
        return results[0] if single else results

    return call

"""What the native GPU bridges (Numba-CUDA, Triton) share: reading compute capabilities, finding
the GPUs to compile for, launch-dimension limits, keeping NUL-terminated buffers alive for
launchers, and the error for a process without a GPU backend. The per-arity launcher builder is
bridges/launcher.py and the `outs` helper bridges/outputs.py (shared with the Numba CPU bridge)."""

from __future__ import annotations

import numpy as np

from jaxcc.errors import CallError, DeviceError


def parse_cc(value, who: str) -> tuple[int, int]:
    """ "8.0", "80", "sm_80", "sm_90a" or 8.0 as (major, minor); the spelling rule is the core's
    (toolchain/cuda_arch.h), the same that load_cuda_* applies."""
    from jaxcc import _core
    from jaxcc.errors import SpecError

    try:
        arch = _core.normalize_cuda_arch(str(value).strip())  # "80", "90a", "100"
    except SpecError as e:
        raise CallError(f"{who}: compute_capability {value!r}: {e}") from None
    digits = arch.rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits[:-1]), int(digits[-1])


def gpu_capabilities() -> list[tuple[int, int]]:
    """(major, minor) of every GPU JAX sees, sorted, without repeats; [] without a GPU."""
    from jaxcc.environment.discovery import jax_gpu_archs

    return sorted({tuple(int(p) for p in a.split(".")) for a in jax_gpu_archs()})


def oldest_gpu_cc(who: str) -> tuple[int, int]:
    """Code for the oldest GPU JAX sees runs on all of them (PTX is JIT-compiled forward)."""
    found = gpu_capabilities()
    if not found:
        raise DeviceError(
            f"{who}: JAX sees no GPU, so there is nothing to compile the kernel for; run on a "
            "machine with an NVIDIA GPU and a CUDA-enabled jaxlib (pip install 'jax[cuda13]'), "
            "or pass compute_capability= to only build"
        )
    return found[0]


def require_gpu_backend(who: str) -> None:
    """Raised at trace time: the launcher is built, but XLA has no CUDA platform to run it on."""
    from jaxcc.environment.discovery import gpu_backend_present

    if not gpu_backend_present():
        raise DeviceError(
            f"{who}: the kernel is built, but this process has no GPU backend to run it on; "
            "install a CUDA-enabled jaxlib (pip install 'jax[cuda13]') on a machine with an "
            "NVIDIA GPU"
        )


def c_buffer(data: bytes) -> np.ndarray:
    """`data` plus a NUL byte in memory the caller keeps alive; `.ctypes.data` is its address."""
    return np.frombuffer(data + b"\0", np.uint8).copy()


def launch_dims(value, what: str, who: str, *, allow_zero: bool = False) -> tuple[int, int, int]:
    """A positive int or 1 to 3 of them as a 3-tuple padded with 1s. The CUDA limits are
    checked here so that a bad grid is a Python error, not a failed launch."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    low = 0 if allow_zero else 1
    if not 1 <= len(items) <= 3 or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= low for v in items
    ):
        kind = "non-negative" if allow_zero else "positive"
        raise CallError(
            f"{who}: {what} must be a {kind} int or a tuple of 1 to 3 {kind} ints, got {value!r}"
        )
    dims = tuple(int(v) for v in items) + (1,) * (3 - len(items))
    limits = (2**31 - 1, 65535, 65535)
    if any(d > limit for d, limit in zip(dims, limits, strict=True)):
        raise CallError(
            f"{who}: {what} {dims} exceeds CUDA's limits (x < 2**31, y and z <= 65535); fold "
            "the extra work into the x dimension"
        )
    return dims

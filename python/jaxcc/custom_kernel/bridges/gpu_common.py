"""What the native GPU bridges (Numba-CUDA, Triton) share: reading compute capabilities, finding
the GPUs to compile for, describing outputs, keeping NUL-terminated buffers alive for launchers,
building the per-arity launchers, and the error for a process without a GPU backend."""

from __future__ import annotations

import threading

import numpy as np

from ...errors import CallError, DeviceError


def parse_cc(value, who: str) -> tuple[int, int]:
    """ "8.0", "80", "sm_80", "sm_90a" or 8.0 as (major, minor)."""
    text = str(value).strip().lower().removeprefix("sm_").removeprefix("compute_")
    text = text.removesuffix("a").removesuffix("f")
    major, dot, minor = text.partition(".")
    if not dot and text.isdigit() and len(text) >= 2:
        major, minor = text[:-1], text[-1]
    if not (major.isdigit() and (minor or "0").isdigit()):
        raise CallError(
            f"{who}: compute_capability must look like '8.0', '80' or 'sm_80', got {value!r}"
        )
    return int(major), int(minor or 0)


def gpu_capabilities() -> list[tuple[int, int]]:
    """(major, minor) of every GPU JAX sees, sorted, without repeats; [] without a GPU."""
    from ..._discovery import jax_gpu_archs

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
    from ..._discovery import gpu_backend_present

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


def output_types(outs, who: str):
    """(single, [ShapeDtypeStruct]) for `outs`: one ShapeDtypeStruct-like or a sequence of them."""
    import jax

    single = hasattr(outs, "shape") and hasattr(outs, "dtype")
    out_list = [outs] if single else list(outs)
    for item in out_list:
        if not hasattr(item, "shape") or not hasattr(item, "dtype"):
            kind = type(item).__name__
            raise CallError(f"{who}: outs entries need .shape and .dtype, got {kind}")
    return single, [jax.ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in out_list]


_launcher_lock = threading.Lock()
_launchers: dict[tuple, object] = {}


def arity_function_name(kind: str, n_in: int, n_out: int) -> str:
    return f"{kind}_bridge_{n_in}_{n_out}"


def arity_launcher(kind, prelude, launch, attributes, n_in, n_out, compute_capability, who):
    """The launcher FFI target of bridge `kind` for `n_in` inputs and `n_out` outputs (built,
    cached and registered on first use): `prelude` defines `launch(tensors, count, <attributes>,
    stream)`, which every arity's entry point calls with its buffers. `compute_capability` only
    matters without a GPU (tests that build but cannot run)."""
    from ..._loading import load_cuda_inline

    if n_out < 1 or n_in + n_out > 64:
        raise CallError(
            f"{who}: needs 1 to 64 buffers with at least one output, got {n_in} input(s) and "
            f"{n_out} output(s)"
        )
    key = (kind, n_in, n_out, compute_capability)
    with _launcher_lock:
        module = _launchers.get(key)
        if module is None:
            name = arity_function_name(kind, n_in, n_out)
            params = [f"const jaxcc::Tensor a{i}" for i in range(n_in)]
            params += [f"jaxcc::Tensor r{i}" for i in range(n_out)]
            params += [f"int64_t {a}" for a in attributes] + ["int64_t stream"]
            buffers = [f"&a{i}" for i in range(n_in)] + [f"&r{i}" for i in range(n_out)]
            source = (
                prelude
                + f"\nvoid {name}({', '.join(params)}) {{\n"
                + f"  const jaxcc::Tensor* tensors[] = {{{', '.join(buffers)}}};\n"
                + f"  {launch}(tensors, {n_in + n_out}, {', '.join(attributes)}, stream);\n}}\n"
            )
            tokens = ["arg"] * n_in + ["ret"] * n_out
            tokens += [f"attr.{a}:int64" for a in attributes] + ["stream"]
            module = load_cuda_inline(
                f"jaxcc_{name}", source, {name: tokens}, compute_capability=compute_capability
            )
            _launchers[key] = module
    return module

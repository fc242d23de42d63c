"""Finding what a build needs in this process: jaxcc's kernel headers, ninja, pip's nvcc wheels,
the GPUs JAX sees, and the BuildEnvironment the core builds with. Nothing here decides a result
(the cache key covers the tools themselves), so none of it is in the in-process table key."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

from jaxcc import _core


@functools.cache
def _ffi_include_dir() -> str:
    """XLA's FFI headers of the jaxlib this process imported: fixed for the process's life."""
    import jax

    return jax.ffi.include_dir()


def include_dir() -> str:
    """Directory holding jaxcc's kernel headers (jaxcc/jaxcc.h, brainevent/common.h).

    The headers are installed beside the compiled extension; in an editable install that is the
    build's site-packages copy while the .py files stay in the checkout, so the core asks the
    dynamic loader where its extension is."""
    return _core.include_dir()


def ninja_search_dirs() -> list[str]:
    """Where the `ninja` wheel may keep its binary (<entry>/ninja/data/bin for every sys.path
    entry in import order, then the interpreter's bin directory). Only strings: a load passes
    sys.path itself and the core makes these on a cache miss alone (toolchain/ninja.h)."""
    return _core.ninja_search_dirs(sys.path, sys.executable)


# (sys.path, the imported `nvidia` package), the folders watched and their mtimes, the answer.
_nvcc_memo: tuple | None = None
_nvcc_asked = False  # the first look-up in a process is not kept
_WHEEL_SUBDIRS = ("cuda_nvcc", "cu13", "cu12", "cuda_runtime")
# Where pip's NVIDIA wheels keep nvcc (bin) and the shared CUDA runtime (lib), CUDA 13 and 12.
_BIN_SUBDIRS = ("cuda_nvcc/bin", "cu13/bin", "cu12/bin")
_LIB_SUBDIRS = ("cu13/lib", "cuda_runtime/lib", "cu12/lib")


def _watched_folders(entries: tuple[str, ...]) -> tuple[str, ...]:
    """Every sys.path entry, and its nvidia/ and nvidia/<sub>/ folders that exist: pip installing
    or removing a wheel adds or removes a folder in one of these, which moves its mtime (a
    folder not there yet appears in its parent, which is watched)."""
    folders = []
    for entry in entries:
        entry = entry or "."
        folders.append(entry)
        base = os.path.join(entry, "nvidia")
        if os.path.isdir(base):
            folders.append(base)
            folders.extend(
                os.path.join(base, sub)
                for sub in _WHEEL_SUBDIRS
                if os.path.isdir(os.path.join(base, sub))
            )
    return tuple(folders)


def _mtimes(folders: tuple[str, ...]) -> list[int]:
    return _core.mtimes_ns(folders)  # -1 for a folder that is not there


def nvidia_wheel_dirs() -> tuple[list[str], list[str]]:
    """(bin, lib) directories of pip's NVIDIA CUDA wheels: nvcc's (nvidia-cuda-nvcc) and the
    shared runtime's (nvidia-cuda-runtime, the copy JAX's CUDA plugin loads by path).

    Asked on every CUDA load (the warm fingerprint covers them). importlib's look-up costs about
    55 us, a tenth of jaxcc's own work in a warm CUDA load, so the answer is kept while sys.path,
    the imported package and the watched folders' mtimes stay the same (decision 106)."""
    global _nvcc_memo, _nvcc_asked
    if not _nvcc_asked:
        # Setting the memo up costs about 40 us more than one look-up: a process that loads a
        # single CUDA module does not pay it.
        _nvcc_asked = True
        return _find_wheel_dirs()
    key = (tuple(p for p in sys.path if isinstance(p, str)), id(sys.modules.get("nvidia")))
    memo = _nvcc_memo
    if memo is not None and memo[0] == key and _mtimes(memo[1]) == memo[2]:
        return list(memo[3]), list(memo[4])
    folders = _watched_folders(key[0])
    stamps = _mtimes(folders)  # before the look-up: a change during it is seen next time
    bins, libs = _find_wheel_dirs()
    _nvcc_memo = (key, folders, stamps, tuple(bins), tuple(libs))
    return bins, libs


def nvcc_wheel_dirs() -> list[str]:
    """bin directories of pip's NVIDIA CUDA compiler wheels (nvidia-cuda-nvcc-cu12/13)."""
    return nvidia_wheel_dirs()[0]


def _find_wheel_dirs() -> tuple[list[str], list[str]]:
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return [], []
    bins, libs = [], []
    for base in spec.submodule_search_locations:
        for subdirs, found in ((_BIN_SUBDIRS, bins), (_LIB_SUBDIRS, libs)):
            for sub in subdirs:
                candidate = os.path.join(base, sub)
                if os.path.isdir(candidate):
                    found.append(candidate)
    return bins, libs


def jax_gpu_archs() -> list[str]:
    """Compute capabilities of every GPU JAX sees ("9.0"), or [] without a GPU backend."""
    import jax

    try:
        devices = jax.devices("gpu")
    except RuntimeError:
        return []
    return sorted({str(d.compute_capability) for d in devices if hasattr(d, "compute_capability")})


@functools.lru_cache(maxsize=1)
def gpu_backend_present() -> bool:
    """Whether JAX has a GPU backend in this process (asked once)."""
    import jax

    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def build_environment(
    request, *, verbose: bool, force_rebuild: bool, ninja_workers: int
) -> _core.BuildEnvironment:
    """Everything the core needs beyond the request; imports jax (only on a table miss). The core
    fills in what it can find alone: its kernel headers, sys.path for ninja, $JAXCC_BUILD_TIMEOUT
    and $JAXCC_CUDA_RUNTIME (each a SpecError when malformed, on every load)."""
    detected = []
    cuda = request.platform == "cuda"
    # Only asked when nothing more explicit names an architecture.
    if cuda and not request.cuda_archs and not os.environ.get("JAXCC_CUDA_ARCH"):
        detected = jax_gpu_archs()
    bins, libs = nvidia_wheel_dirs() if cuda else ([], [])
    return _core.BuildEnvironment(
        ffi_include_dir=_ffi_include_dir(),
        nvcc_search_dirs=bins,
        cuda_runtime_dirs=libs,
        detected_cuda_archs=detected,
        verbose=verbose,
        force_rebuild=force_rebuild,
        ninja_workers=ninja_workers,
    )

"""Process-wide backend choices that override every primitive's own default.

Choices are read when a primitive is bound (traced), and the chosen backend name becomes one of the
primitive's parameters. So a new choice takes effect at the next trace, executables compiled for
the previous choice stay cached (switching back is free), and nothing calls `jax.clear_caches()`.
"""

from __future__ import annotations

import threading

from ..errors import BackendError
from .kernel_entry import PLATFORMS

_lock = threading.Lock()
_global_backends: dict[str, str] = {}


def _check_platform(platform) -> str:
    if platform not in PLATFORMS:
        raise BackendError(f"platform must be one of {PLATFORMS}, got {platform!r}")
    return platform


def set_backend(platform: str, backend: str | None) -> None:
    """Prefer `backend` on `platform` for every primitive that registered it (None: forget).

    Primitives without that backend keep their own default. Jitted functions already traced keep
    the backend they were traced with; new traces (and eager calls) use the new choice.
    """
    _check_platform(platform)
    if backend is not None and (not isinstance(backend, str) or not backend):
        raise BackendError(f"backend must be a non-empty string or None, got {backend!r}")
    with _lock:
        if backend is None:
            _global_backends.pop(platform, None)
        else:
            _global_backends[platform] = backend


def get_backend(platform: str) -> str | None:
    """The process-wide preferred backend for `platform`, or None."""
    _check_platform(platform)
    return _global_backends.get(platform)


def clear_backends() -> None:
    """Forget every process-wide backend preference."""
    with _lock:
        _global_backends.clear()


def global_backends() -> dict[str, str]:
    with _lock:
        return dict(_global_backends)

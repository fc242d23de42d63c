"""Backend choices that outlive one call: process-wide ones (`jaxcc.set_backend`) and the
per-primitive defaults chosen with `set_default`, published together as part of JAX's jit key.

A primitive reads the choices when it is bound (traced) and binds the chosen backend names as one
of its parameters. For a function that `jax.jit` already compiled to reach a new choice, its cache
must miss: so every change publishes a snapshot of all choices into a JAX "user context", a config
value that JAX includes in the key of every jit, trace and lowering cache. The next call of any
jitted function then traces again under the new snapshot, and returning to an earlier snapshot
finds the executables compiled for it. Nothing calls `jax.clear_caches()`.

The choices are per process. A jitted call computes its key when it starts and binds the
primitives (reading the choices) while it traces; a switch in between, from another thread or
from inside the trace, would store an executable made with the new choices under the old key,
found again once the switch is undone (issue 38). So a switch made while another Python thread
is running (jaxcc's own helper threads aside) or inside a trace starts a new epoch: the key of
every snapshot carries the epoch, and a key published before is never published again, so
switching back compiles once more instead of finding what a racing trace stored. In a process
with one thread a switch cannot race, and switching back reuses the earlier key.
"""

from __future__ import annotations

import contextlib
import threading

from jaxcc.errors import BackendError

from .kernel_entry import PLATFORMS

_lock = threading.Lock()
_global_backends: dict[str, str] = {}
# (KernelTable.key, platform) -> backend, for set_default choices that differ from the
# registration default.
_chosen_defaults: dict[tuple, str] = {}
_context = None  # the JAX user context holding the snapshot, made on first use
_epoch = 0  # bumped by a switch that could race a trace (see the module's docstring)
_last: tuple = ((), ())  # the snapshot published last


def _make_jit_key_context(default):
    """A value JAX includes in the key of every jit cache (and trace cache), settable globally.

    Version-dependent: `jax.make_user_context` (public; checked on JAX 0.10.2 and 0.12) returns
    an object with `set_global(value)`. JAX releases without it have no public equivalent; there
    the choices still apply to every new trace and eager call, but a function already compiled
    keeps the backend it was compiled with, and this returns None.
    """
    import jax

    make = getattr(jax, "make_user_context", None)
    return None if make is None else make(default_value=default)


def _snapshot() -> tuple:
    return (tuple(sorted(_global_backends.items())), tuple(sorted(_chosen_defaults.items())))


def _may_race_a_trace() -> bool:
    """Whether a jitted call may be between computing its key and tracing right now: another
    Python thread is running (jaxcc's helper threads, which trace nothing, aside), or this
    thread is inside a trace."""
    from jaxcc._jax_compat import trace_probes

    is_top_level = trace_probes[0]
    if is_top_level is not None and not is_top_level():
        return True
    me = threading.current_thread()
    return any(t is not me and not t.name.startswith("jaxcc-") for t in threading.enumerate())


def _publish(switch: bool = True) -> None:
    """Makes the current choices part of JAX's jit key. Call with `_lock` held; `switch` False
    for creating the context, which changes no choice."""
    global _context, _epoch, _last
    if _context is None:
        _context = _make_jit_key_context(())
        if _context is None:
            return
    value = _snapshot()
    if switch and value == _last:
        return  # nothing changed (a first registration, the same choice again)
    if switch and _may_race_a_trace():
        _epoch += 1
    _last = value
    # The empty snapshot of epoch 0 is the context's default, so a process that never chose
    # anything, or returned to that state without a race, keys its functions as if the context
    # did not exist.
    _context.set_global((value, _epoch) if any(value) or _epoch else ())


def install() -> None:
    """Creates the jit-key context (once). Called by every XLACustomKernel constructor: creating
    it later would change the key of functions compiled before, recompiling them once."""
    with _lock:
        if _context is None:
            _publish(switch=False)


def fixed_jit_key():
    """A context in which JAX sees the empty snapshot, whatever the choices are. For compiling a
    bind whose parameters already name the backend (eager calls of a primitive whose kernels
    call no other primitive): its executable does not depend on the choices, so it should not
    be compiled again for each of them."""
    if _context is None:
        return contextlib.nullcontext()
    return _context(())


def jit_key() -> object:
    """The snapshot of choices JAX currently keys compiled functions with (for tests)."""
    with _lock:
        return _snapshot() if any(_snapshot()) else ()


def _check_platform(platform) -> str:
    if platform not in PLATFORMS:
        raise BackendError(f"platform must be one of {PLATFORMS}, got {platform!r}")
    return platform


def set_backend(platform: str, backend: str | None) -> None:
    """Prefer `backend` on `platform` for every primitive that registered it (None: forget).

    Takes effect at the next call of anything, including functions `jax.jit` compiled before:
    the choice is part of JAX's jit cache key, so they trace again once, and switching back
    reuses the executables compiled for the earlier choice. A primitive without that backend
    keeps its own default and warns once (a `jaxcc.BackendWarning`).
    """
    _check_platform(platform)
    if backend is not None and (not isinstance(backend, str) or not backend):
        raise BackendError(f"backend must be a non-empty string or None, got {backend!r}")
    with _lock:
        if backend is None:
            _global_backends.pop(platform, None)
        else:
            _global_backends[platform] = backend
        _publish()


def get_backend(platform: str) -> str | None:
    """The process-wide preferred backend for `platform`, or None."""
    _check_platform(platform)
    return _global_backends.get(platform)


def clear_backends() -> None:
    """Forget every process-wide backend preference (per-primitive defaults stay)."""
    with _lock:
        _global_backends.clear()
        _publish()


def global_backends() -> dict[str, str]:
    with _lock:
        return dict(_global_backends)


def new_epoch() -> None:
    """A new jit key for the same choices: for a change of what a call runs that the choices do
    not record (a registration after calls were compiled). Keys published before are not used
    again, so every jitted function traces once more."""
    global _epoch
    with _lock:
        _epoch += 1
        _publish(switch=False)


def publish_default(table_key: tuple, platform: str, backend: str | None) -> None:
    """Records a primitive's `set_default` choice (None: back to its registration default)."""
    with _lock:
        if backend is None:
            _chosen_defaults.pop((table_key, platform), None)
        else:
            _chosen_defaults[(table_key, platform)] = backend
        _publish()

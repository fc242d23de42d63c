"""Writes Numba cache entries (numba_cpu_cache.py) off the first call's path (decision 117): a
background thread once a few wait, under Numba's compiler lock, and the rest at exit."""

from __future__ import annotations

import os
import threading
import time

from .numba_cpu_cache import _entry_dir, key_of, store
from .numba_cpu_object import serialized

# Entries waiting to be written, the thread writing them, how many it is writing now, and when
# the last one was queued (a compile just ended).
_pending: list = []
_queue_changed = threading.Condition()
_writing = [0]
_writer: list = []
_last_queued = [0.0]
_stopping = [False]
# The writer starts once BATCH entries wait and no kernel was compiled for QUIET_SECONDS. A
# store holds Numba's compiler lock (and llvmlite's global lock) for its code generation, so a
# compile that starts meanwhile waits for it: a process that makes a few kernels (a notebook, one
# operator) writes them at exit and none of its first calls waits; one that makes many (a test
# suite, a sweep over configurations) has most of its stores written while it works.
BATCH = 4
QUIET_SECONDS = 0.3


def store_later(root, name, inputs, library, symbol, build_seconds, reload_hooks=()) -> None:
    """Queues a store. Serialising means generating the machine code once more, which the first
    call should not wait for (decision 92): a background thread does it once BATCH entries wait
    and no kernel has been compiled for QUIET_SECONDS, while the process runs other things
    (XLA's compile, the kernel, the caller's own work; on another core where there is one), and
    `flush` at exit writes what is left (decision 117)."""
    with _queue_changed:
        _pending.append((root, name, inputs, library, symbol, build_seconds, reload_hooks))
        _last_queued[0] = time.monotonic()
        if not _writer:
            import atexit

            atexit.register(_finish)
            thread = threading.Thread(target=_write_in_background, name="jaxcc-numba-cache",
                                      daemon=True)  # fmt: skip
            _writer.append(thread)
            thread.start()
        _queue_changed.notify_all()


def _write_next() -> bool:
    """Writes the next queued store, counted as being written meanwhile; False when the queue
    is empty."""
    with _queue_changed:
        if not _pending:
            return False
        _writing[0] += 1
        item = _pending.pop(0)
    try:
        _write(item)
    finally:
        with _queue_changed:
            _writing[0] -= 1
            _queue_changed.notify_all()
    return True


def _write_in_background() -> None:
    while True:
        with _queue_changed:
            while True:
                if _stopping[0]:
                    return
                quiet_for = time.monotonic() - _last_queued[0]
                if len(_pending) >= BATCH and quiet_for >= QUIET_SECONDS:
                    break
                _queue_changed.wait(None if len(_pending) < BATCH else QUIET_SECONDS - quiet_for)
        _write_next()


def _write(item) -> None:
    """Serialises one queued library and publishes it. Under Numba's compiler lock: LLVM's
    context is one per process and not thread-safe, and every Numba compile holds that lock, so
    a store never interleaves with a compile (a compile waits at most for one store)."""
    from numba.core.compiler_lock import global_compiler_lock

    root, name, inputs, library, symbol, seconds, hooks = item
    key = key_of(inputs)
    if os.path.exists(os.path.join(_entry_dir(root, name, key), "manifest.json")):
        return
    try:
        with global_compiler_lock:
            blob, renamed = serialized(library, key, symbol)
    except Exception:  # noqa: BLE001 - not kept; the next process compiles again
        return
    store(root, name, inputs, blob, renamed, seconds, hooks)


def _finish() -> None:
    """At exit: writes what is queued, then ends the background thread, so that nothing of
    jaxcc's is still running (or frozen mid-wait with its frame) while the interpreter tears
    down; decision 142."""
    flush()
    with _queue_changed:
        _stopping[0] = True
        _queue_changed.notify_all()
    for thread in _writer:
        thread.join(timeout=10.0)


def flush() -> None:
    """Writes every queued entry and waits for the one the background thread is writing (at
    exit, or when a test asks)."""
    while True:
        if _write_next():
            continue
        with _queue_changed:
            if not _pending and not _writing[0]:
                return
            _queue_changed.wait(timeout=1.0)

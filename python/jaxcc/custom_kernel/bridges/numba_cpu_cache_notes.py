"""Why a Numba kernel was compiled in its process and not kept in jaxcc's cache (issue 37,
decision 148): `jaxcc cache ls` lists these notes beside the entries, so a user who expects a warm
first call learns which input jaxcc could not fingerprint.

A note is `<cache>/numba-not-persisted/<entry name>-<12 hex of the reason>.json`, written
(atomically, replaced) by the process that compiled the kernel: one file per kernel name and
reason, so their number stays bounded. The directory's name is not an entry's
(`<name>-<24 hex>`), so the cache's listing, pruning and size cap do not see it; `clear_cache`
removes the notes with the entries, and a kernel later kept removes its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import time

NOTES_DIR = "numba-not-persisted"
_written: set = set()  # (root, name, reason) noted by this process: each is written once


def note(root: str, name: str, kernel, reason: str) -> None:
    """Records that the kernel behind entry `name` is compiled per process, and why. Failures
    (a read-only cache) are ignored: the note only informs."""
    if (root, name, reason) in _written:
        return
    _written.add((root, name, reason))
    py_func = getattr(kernel, "py_func", kernel)
    code = getattr(py_func, "__code__", None)
    record = {
        "name": name,
        "function": f"{getattr(py_func, '__module__', '?')}."
        f"{getattr(py_func, '__qualname__', '?')}",
        "file": f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "",
        "reason": reason,
        "unix": int(time.time()),
    }
    directory = os.path.join(root, NOTES_DIR)
    digest = hashlib.sha256(reason.encode()).hexdigest()[:12]
    path = os.path.join(directory, f"{name}-{digest}.json")
    temporary = f"{path}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    with contextlib.suppress(OSError):
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(temporary, path)


def forget(root: str, name: str | None = None) -> int:
    """Removes the notes of entry `name` (all notes when None); returns how many."""
    directory = os.path.join(root, NOTES_DIR)
    removed = 0
    with contextlib.suppress(OSError):
        for file_name in os.listdir(directory):
            if name is None or file_name.rsplit("-", 1)[0] == name:
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(directory, file_name))
                    removed += 1
    return removed


def notes(root: str) -> list[dict]:
    """Every readable note, most recent first."""
    directory = os.path.join(root, NOTES_DIR)
    found = []
    with contextlib.suppress(OSError):
        for file_name in os.listdir(directory):
            if not file_name.endswith(".json"):
                continue
            with contextlib.suppress(OSError, ValueError):
                with open(os.path.join(directory, file_name), encoding="utf-8") as f:
                    record = json.load(f)
                if isinstance(record, dict) and {"name", "reason"} <= record.keys():
                    found.append(record)
    return sorted(found, key=lambda r: -int(r.get("unix", 0)))

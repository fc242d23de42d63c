"""Tuning decisions remembered in the cache directory (decision 156c): one small JSON file per
decision under `<cache>/.autotune/`, named by the SHA-256 of what the decision depends on: the
reference build's cache key (source, flags, compiler, headers), the function, its candidate
configurations, the tuning key and the device model. A second process reads the file and times
nothing. Written as the core writes its manifests: a temporary file beside it, then rename."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile

_DIR = ".autotune"
_VERSION = 1


def decision_id(module_key: str, function: str, candidates: list[str], reference: str,
                key: str, device: str) -> str:  # fmt: skip
    text = json.dumps([_VERSION, module_key, function, candidates, reference, key, device])
    return hashlib.sha256(text.encode()).hexdigest()


def _path(cache_dir: str, ident: str) -> str:
    return os.path.join(cache_dir, _DIR, f"{ident[:32]}.json")


def read(cache_dir: str, ident: str) -> dict | None:
    """The stored decision, or None when there is none or it cannot be read (then tune again)."""
    try:
        with open(_path(cache_dir, ident), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("id") != ident:
        return None
    return record


def write(cache_dir: str, ident: str, record: dict) -> None:
    """Atomically: readers see the old file or the whole new one, never a part. A cache that
    cannot be written costs only the memory of the decision, never the call."""
    folder = os.path.join(cache_dir, _DIR)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({**record, "id": ident}, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, _path(cache_dir, ident))
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        pass


def remember_variants(cache_dir: str, labels: dict[str, str]) -> None:
    """Notes which cache entries are tuning variants ({cache key: "tune BLOCK=32"}), one small
    file per entry under `.autotune/variants/`, so `jaxcc cache ls` can label their rows
    (decision 196). Written once per entry; a cache that cannot be written only loses labels."""
    folder = os.path.join(cache_dir, _DIR, "variants")
    for key, label in labels.items():
        path = os.path.join(folder, key[:32])
        if os.path.exists(path):
            continue
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(label)
            os.replace(temp, path)
        except OSError:
            pass


def entry_labels(cache_dir: str) -> dict[str, str]:
    """{cache key prefix (32 hex digits): label} of the entries remember_variants noted."""
    folder = os.path.join(cache_dir, _DIR, "variants")
    labels = {}
    try:
        names = [n for n in os.listdir(folder) if not n.startswith(".")]
    except OSError:
        return {}
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                labels[name] = f.read(200).strip()
        except OSError:
            continue
    return labels


def list_decisions(cache_dir: str) -> list[dict]:
    """Every readable decision, newest first (for `jaxcc cache ls`)."""
    folder = os.path.join(cache_dir, _DIR)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith(".")]
    except OSError:
        return []
    records = []
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                record = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            records.append(record)
    records.sort(key=lambda r: r.get("created_unix", 0), reverse=True)
    return records


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), which selects a CPU kernel's tuning."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def describe(records: list[dict]) -> list[str]:
    """`jaxcc cache ls`'s lines for the decisions: one a decision, under a heading."""
    if not records:
        return []
    lines = [f"autotuning decisions: {len(records)}"]
    for r in records:
        lines.append(
            f"  {r.get('module')}.{r.get('function')} [{r.get('key')}] on {r.get('device')}: "
            f"{r.get('chosen_text')} {r.get('time_s', 0) * 1e6:.1f} us of "
            f"{r.get('tried')} tried" + (" (budget exhausted)" if r.get("budget_exhausted") else "")
            + (f"; excluded {', '.join(f'{c} ({w})' for c, w in r['excluded'].items())}"
               if r.get("excluded") else "")
            + (" (under load)" if r.get("noisy") else "")
        )  # fmt: skip
    return lines


def forget(cache_dir: str, module: str | None = None) -> int:
    """Removes the decisions of `module` (all when None); returns how many."""
    folder = os.path.join(cache_dir, _DIR)
    removed = 0
    for record in list_decisions(cache_dir):
        if module is not None and record.get("module") != module:
            continue
        ident = str(record.get("id", ""))
        try:
            os.unlink(_path(cache_dir, ident))
            removed += 1
        except OSError:
            pass
    if module is None:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)  # leftovers of interrupted writes, labels
    return removed

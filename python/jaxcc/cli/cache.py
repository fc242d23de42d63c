"""`jaxcc cache ...`: where the cache is, what it holds, pruning and clearing it."""

from __future__ import annotations

import json
import os
import time

from jaxcc import _core
from jaxcc.environment.cache_dir import get_cache_dir
from jaxcc.maintenance.clear import clear_cache
from jaxcc.tune import store as tune_store


def _human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return f"{max(seconds, 0):.0f}s ago"


# The fields of _core.CacheEntry that `cache ls --json` prints.
_ENTRY_FIELDS = (
    "name", "dir", "key", "bytes", "last_used_ns", "created_unix", "build_seconds", "functions",
    "complete",
)  # fmt: skip


def list_entries(as_json: bool) -> int:
    # Imported here: jaxcc.custom_kernel is heavy, and only `ls` needs its notes.
    from jaxcc.custom_kernel.bridges.numba_cpu_cache_notes import notes

    root = get_cache_dir()
    rows = _core.cache_list(root)
    not_kept = notes(root)  # Numba kernels compiled in each process, and why (decision 148)
    labels = {row.key: _label(row, tune_store.entry_labels(root)) for row in rows}
    if as_json:
        entries = [
            {**{field: getattr(row, field) for field in _ENTRY_FIELDS}, "label": labels[row.key]}
            for row in rows
        ]
        decisions = tune_store.list_decisions(root)
        print(json.dumps({"cache_dir": root, "entries": entries, "not_persisted": not_kept,
                          "autotune": decisions}, indent=2))  # fmt: skip
        return 0
    cap = _core.cache_max_bytes()
    total = sum(row.bytes for row in rows)
    now = time.time()
    print(f"{root}: {len(rows)} entries, {_human_bytes(total)}", end="")
    print(f" (cap {_human_bytes(cap)})" if cap else " (no size cap)")
    _print_not_persisted(not_kept, now)
    if not rows:
        return 0
    header = f"{'module':<28} {'key':<14} {'size':>10} {'last used':>10} {'build':>7}  functions"
    print(header)
    for row in rows:
        state = "" if row.complete else "  [incomplete]"
        state += f"  [{labels[row.key]}]" if labels[row.key] else ""
        functions = ", ".join(row.functions)
        print(
            f"{row.name:<28} {row.key[:12]:<14} {_human_bytes(row.bytes):>10} "
            f"{_age(now - row.last_used_ns / 1e9):>10} {row.build_seconds:>6.1f}s  "
            f"{functions}{state}"
        )
    for line in tune_store.describe(tune_store.list_decisions(root)):
        print(line)
    return 0


def _label(row, tuned: dict[str, str]) -> str:
    """What sets an entry apart from the module's plain build: a tuning variant ("tune
    BLOCK=32", noted by tune/store.py) or check_kernel's debug twin ("debug build": built with
    the debug profile's guards, read off its manifest's compile flags); "" for a plain build."""
    if row.key[:32] in tuned:
        return tuned[row.key[:32]]
    try:
        with open(os.path.join(row.dir, "manifest.json"), encoding="utf-8") as f:
            flags = json.load(f).get("inputs", {}).get("compile_flags", [])
    except (OSError, ValueError, AttributeError):
        return ""
    return "debug build" if {"-DJAXCC_DEBUG=1", "-DJAXCC_DEBUG_GUARDS=1"} & set(flags) else ""


def _print_not_persisted(not_kept: list, now: float) -> None:
    if not not_kept:
        return
    print("compiled in each process, not kept (Numba kernels whose inputs jaxcc cannot key):")
    for note in not_kept:
        print(
            f"  {note['name']:<28} {_age(now - note.get('unix', now)):>10}  {note['reason']}"
            f"  [{note.get('function', '')} at {note.get('file', '')}]"
        )


def prune(max_bytes: str | None, older_than_days: float | None) -> int:
    # An explicit --max-bytes 0 empties the cache; a cap of 0 from the environment means "no cap".
    if max_bytes is not None:
        limit = _core.parse_byte_size(max_bytes)
    else:
        limit = _core.cache_max_bytes() or None
    older = older_than_days * 86400 if older_than_days is not None else None
    report = _core.cache_prune(get_cache_dir(), limit, older)
    print(
        f"pruned {get_cache_dir()}: removed {report.entries_removed} entries "
        f"({_human_bytes(report.bytes_freed)}) and {report.orphans_removed} orphans; "
        f"kept {report.entries_kept} ({_human_bytes(report.bytes_kept)})"
        + (f"; {report.busy_skipped} being built, skipped" if report.busy_skipped else "")
    )
    return 0


def add_cache_command(commands) -> None:
    cache = commands.add_parser("cache", help="inspect, prune or clear the build cache")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True)
    cache_commands.add_parser("dir", help="print the cache directory")
    ls = cache_commands.add_parser("ls", help="list entries, most recently used first")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    clear = cache_commands.add_parser("clear", help="remove entries (all, or one module's)")
    clear.add_argument("name", nargs="?")
    prune_command = cache_commands.add_parser(
        "prune",
        help="evict least recently used entries over the size cap, and orphaned build files",
    )
    prune_command.add_argument(
        "--max-bytes", help="size to prune down to, e.g. 2G (default: $JAXCC_CACHE_MAX_BYTES)"
    )
    prune_command.add_argument(
        "--older-than", type=float, metavar="DAYS", help="also evict entries unused this long"
    )


def run_cache_command(args) -> int:
    if args.cache_command == "dir":
        print(get_cache_dir())
    elif args.cache_command == "ls":
        return list_entries(args.json)
    elif args.cache_command == "clear":
        print(f"removed {clear_cache(args.name)} entries from {get_cache_dir()}")
    elif args.cache_command == "prune":
        return prune(args.max_bytes, args.older_than)
    return 0

"""`jaxcc` command line: version, cache maintenance, bundles and benchmarks."""

from __future__ import annotations

import argparse
import json
import sys
import time


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


def _cache_ls(as_json: bool) -> int:
    from . import _core, get_cache_dir
    from .custom_kernel.bridges.numba_cpu_cache_notes import notes

    root = get_cache_dir()
    rows = _core.cache_list(root)
    not_kept = notes(root)  # Numba kernels compiled in each process, and why (decision 148)
    if as_json:
        entries = [{field: getattr(row, field) for field in _ENTRY_FIELDS} for row in rows]
        print(json.dumps({"cache_dir": root, "entries": entries, "not_persisted": not_kept},
                         indent=2))  # fmt: skip
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
        functions = ", ".join(row.functions)
        print(
            f"{row.name:<28} {row.key[:12]:<14} {_human_bytes(row.bytes):>10} "
            f"{_age(now - row.last_used_ns / 1e9):>10} {row.build_seconds:>6.1f}s  "
            f"{functions}{state}"
        )
    return 0


def _print_not_persisted(not_kept: list, now: float) -> None:
    if not not_kept:
        return
    print("compiled in each process, not kept (Numba kernels whose inputs jaxcc cannot key):")
    for note in not_kept:
        print(
            f"  {note['name']:<28} {_age(now - note.get('unix', now)):>10}  {note['reason']}"
            f"  [{note.get('function', '')} at {note.get('file', '')}]"
        )


def _cache_prune(max_bytes: str | None, older_than_days: float | None) -> int:
    from . import _core, get_cache_dir

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


def _doctor(as_json: bool) -> int:
    import dataclasses

    from . import _doctor

    checks = _doctor.run_checks()
    if as_json:
        print(json.dumps([dataclasses.asdict(c) for c in checks], indent=2))
    else:
        print(_doctor.report(checks))
    return 1 if any(c.status == _doctor.FAIL for c in checks) else 0


def main(argv: list[str] | None = None) -> int:
    from . import __version__, clear_cache, get_cache_dir
    from ._cli_benchmark import add_benchmark_command, run_benchmark_command
    from ._cli_build import add_build_command, join_flag_list_values, run_build_command
    from .errors import JaxccError

    parser = argparse.ArgumentParser(prog="jaxcc", description=__doc__)
    parser.add_argument("--version", action="version", version=f"jaxcc {__version__}")
    commands = parser.add_subparsers(dest="command")
    cache = commands.add_parser("cache", help="inspect, prune or clear the build cache")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True)
    cache_commands.add_parser("dir", help="print the cache directory")
    ls = cache_commands.add_parser("ls", help="list entries, most recently used first")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    clear = cache_commands.add_parser("clear", help="remove entries (all, or one module's)")
    clear.add_argument("name", nargs="?")
    prune = cache_commands.add_parser(
        "prune",
        help="evict least recently used entries over the size cap, and orphaned build files",
    )
    prune.add_argument(
        "--max-bytes", help="size to prune down to, e.g. 2G (default: $JAXCC_CACHE_MAX_BYTES)"
    )
    prune.add_argument(
        "--older-than", type=float, metavar="DAYS", help="also evict entries unused this long"
    )
    doctor = commands.add_parser(
        "doctor", help="check versions, compilers, GPUs and the cache; exit 1 on a FAIL"
    )
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    add_benchmark_command(commands)
    add_build_command(commands)
    args = parser.parse_args(join_flag_list_values(sys.argv[1:] if argv is None else argv))
    if args.command == "build":
        return run_build_command(args)
    if args.command == "benchmark":
        return run_benchmark_command(args)
    if args.command == "doctor":
        return _doctor(args.json)
    if args.command != "cache":
        parser.print_help()
        return 0
    try:
        if args.cache_command == "dir":
            print(get_cache_dir())
        elif args.cache_command == "ls":
            return _cache_ls(args.json)
        elif args.cache_command == "clear":
            print(f"removed {clear_cache(args.name)} entries from {get_cache_dir()}")
        elif args.cache_command == "prune":
            return _cache_prune(args.max_bytes, args.older_than)
    except JaxccError as error:
        print(f"jaxcc: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

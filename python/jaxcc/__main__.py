"""`jaxcc` command line: version, cache maintenance and benchmarks."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    from . import __version__, clear_cache, get_cache_dir
    from ._cli_benchmark import add_benchmark_command, run_benchmark_command

    parser = argparse.ArgumentParser(prog="jaxcc", description=__doc__)
    parser.add_argument("--version", action="version", version=f"jaxcc {__version__}")
    commands = parser.add_subparsers(dest="command")
    cache = commands.add_parser("cache", help="inspect or clear the build cache")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True)
    cache_commands.add_parser("dir", help="print the cache directory")
    clear = cache_commands.add_parser("clear", help="remove entries (all, or one module's)")
    clear.add_argument("name", nargs="?")
    add_benchmark_command(commands)
    args = parser.parse_args(argv)
    if args.command == "benchmark":
        return run_benchmark_command(args)
    if args.command != "cache":
        parser.print_help()
        return 0
    if args.cache_command == "dir":
        print(get_cache_dir())
    elif args.cache_command == "clear":
        print(f"removed {clear_cache(args.name)} entries from {get_cache_dir()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

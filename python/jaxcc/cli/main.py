"""`jaxcc` command line: version, cache maintenance, doctor, bundles, checks, tuning, benchmarks,
stubs."""

from __future__ import annotations

import argparse
import json
import sys


def _doctor(as_json: bool) -> int:
    import dataclasses

    from . import doctor

    checks = doctor.run_checks()
    if as_json:
        print(json.dumps([dataclasses.asdict(c) for c in checks], indent=2))
    else:
        print(doctor.report(checks))
    return 1 if any(c.status == doctor.FAIL for c in checks) else 0


def main(argv: list[str] | None = None) -> int:
    # Each command's module is imported here, not at the top: `jaxcc --version` stays quick.
    from jaxcc import _core
    from jaxcc.errors import JaxccError

    from .benchmark import add_benchmark_command, run_benchmark_command
    from .build import add_build_command, join_flag_list_values, run_build_command
    from .cache import add_cache_command, run_cache_command
    from .check import add_check_command, run_check_command
    from .stubs import add_stubs_command, run_stubs_command
    from .tune import add_tune_command, run_tune_command

    parser = argparse.ArgumentParser(prog="jaxcc", description=__doc__)
    parser.add_argument("--version", action="version", version=f"jaxcc {_core.version()}")
    commands = parser.add_subparsers(dest="command")
    add_cache_command(commands)
    doctor = commands.add_parser(
        "doctor", help="check versions, compilers, GPUs and the cache; exit 1 on a FAIL"
    )
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    add_benchmark_command(commands)
    add_build_command(commands)
    add_check_command(commands)
    add_tune_command(commands)
    add_stubs_command(commands)
    args = parser.parse_args(join_flag_list_values(sys.argv[1:] if argv is None else argv))
    if args.command == "build":
        return run_build_command(args)
    if args.command == "tune":
        return run_tune_command(args)
    if args.command == "benchmark":
        return run_benchmark_command(args)
    if args.command == "check":
        return run_check_command(args)
    if args.command == "stubs":
        return run_stubs_command(args)
    if args.command == "doctor":
        return _doctor(args.json)
    if args.command != "cache":
        parser.print_help()
        return 0
    try:
        return run_cache_command(args)
    except JaxccError as error:
        print(f"jaxcc: {error}", file=sys.stderr)
        return 2

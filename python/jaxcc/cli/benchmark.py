"""`jaxcc benchmark`: benchmark every registered XLACustomKernel that has benchmark data."""

from __future__ import annotations

import argparse
import importlib
import sys


def add_benchmark_command(commands) -> None:
    bench = commands.add_parser(
        "benchmark",
        help="time every backend of the registered primitives",
        description="Imports the given modules (which define XLACustomKernel primitives), then "
        "runs benchmark() on every primitive with a call function and benchmark data.",
    )
    bench.add_argument("--platform", default="cpu", choices=["cpu", "gpu", "tpu"])
    bench.add_argument(
        "--module",
        "-m",
        action="append",
        default=[],
        help="import this module first (repeatable), e.g. --module mypkg.ops",
    )
    bench.add_argument("--tags", nargs="*", default=[], help="only primitives with these tags")
    bench.add_argument(
        "--match", choices=["all", "any"], default="all", help="how --tags must match"
    )
    bench.add_argument("--backends", nargs="*", default=None, help="only these backends")
    bench.add_argument("--n-warmup", type=int, default=5)
    bench.add_argument("--n-runs", type=int, default=20)
    bench.add_argument("--n-batch-per-run", type=int, default=1)
    bench.add_argument("--output", "-o", help="write the records to FILE.json or FILE.csv")
    bench.add_argument("--plot", help="write a PNG bar chart to this path")


def run_benchmark_command(args: argparse.Namespace) -> int:
    from jaxcc.custom_kernel import BenchmarkResult, get_primitives_by_tags

    for module in args.module:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            print(f"jaxcc benchmark: cannot import {module!r}: {exc}", file=sys.stderr)
            return 2
    candidates = [
        k
        for k in get_primitives_by_tags(args.tags, match=args.match)
        if k._call_fn is not None
        and k._benchmark_data_fn is not None
        and k.available_backends(args.platform)
    ]
    if not candidates:
        print(
            f"jaxcc benchmark: no primitive with a call function, benchmark data and "
            f"{args.platform} kernels matches tags {args.tags or '(any)'}; import the modules "
            "defining them with --module",
            file=sys.stderr,
        )
        return 1
    results, failed = [], 0
    for kernel in sorted(candidates, key=lambda k: k.name):
        backends = None
        if args.backends:
            backends = [b for b in args.backends if b in kernel.available_backends(args.platform)]
            if not backends:
                continue
        try:
            result = kernel.benchmark(
                platform=args.platform,
                n_warmup=args.n_warmup,
                n_runs=args.n_runs,
                n_batch_per_run=args.n_batch_per_run,
                backends=backends,
            )
        except Exception as exc:  # one broken primitive must not hide the others' results
            print(f"jaxcc benchmark: {kernel.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed += 1
            continue
        failed += sum(not r.success for r in result.records)
        results.append(result)
    combined = BenchmarkResult.concat(results)
    print(combined.table())
    if args.output:
        print(f"wrote {combined.save(args.output)}")
    if args.plot:
        combined.plot(args.plot)
        print(f"wrote {args.plot}")
    return 1 if failed else 0

"""`jaxcc check MODULE...`: check_kernel for every kernel a module declares sample inputs for.

A module declares them in a module-level dict, `JAXCC_CHECKS = {"name": (fn, args, kwargs)}`,
where a value may also be a function of no arguments returning that triple (so that importing the
module builds nothing); `kwargs` are check_kernel's (outs=, the kernel's attributes, checks=,
rtol=, ...). The process gets 8 virtual CPU devices (before JAX starts) so that the `sharding`
row runs."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

_DEVICES_FLAG = "--xla_force_host_platform_device_count"


def add_check_command(commands) -> None:
    check = commands.add_parser(
        "check",
        help="check_kernel every kernel a module declares in JAXCC_CHECKS; exit 1 on a failure",
    )
    check.add_argument("modules", nargs="+", metavar="MODULE", help="importable module name")
    check.add_argument("--only", action="append", default=[], metavar="NAME",
                       help="check only this entry of JAXCC_CHECKS (repeatable)")  # fmt: skip
    check.add_argument("--checks", help="comma-separated rows to run (default: all)")
    check.add_argument("--skip", help="comma-separated rows to leave out")
    check.add_argument(
        "--devices", type=int, default=8,
        help="virtual CPU devices for the sharding row (default 8; 1 skips it)",
    )  # fmt: skip


def _force_devices(count: int) -> None:
    """Gives the process `count` CPU devices, unless JAX has started or the flag is set."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "jax" in sys.modules or _DEVICES_FLAG in flags or count <= 1:
        return
    os.environ["XLA_FLAGS"] = f"{flags} {_DEVICES_FLAG}={count}".strip()


def _entries(module_name: str):
    from jaxcc.errors import SpecError

    sys.path.insert(0, os.getcwd())  # `jaxcc check mypkg.ops` from the project's root
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SpecError(f"jaxcc check: cannot import {module_name!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    declared = getattr(module, "JAXCC_CHECKS", None)
    if not isinstance(declared, dict) or not declared:
        raise SpecError(
            f"jaxcc check: {module_name} declares no kernels to check; add a module-level "
            'JAXCC_CHECKS = {"name": (fn, args, kwargs)} (docs/usage.md, "Checking a kernel")'
        )
    for name, entry in declared.items():
        if callable(entry):
            entry = entry()
        if not (isinstance(entry, tuple) and len(entry) in (2, 3)):
            raise SpecError(
                f"jaxcc check: {module_name}.JAXCC_CHECKS[{name!r}] must be (fn, args) or "
                f"(fn, args, kwargs), or a function returning one; got {type(entry).__name__}"
            )
        fn, args, kwargs = (*entry, {}) if len(entry) == 2 else entry
        yield f"{module_name}:{name}", fn, tuple(args), dict(kwargs)


def _names(text: str | None):
    return None if text is None else [n.strip() for n in text.split(",") if n.strip()]


def run_check_command(args: argparse.Namespace) -> int:
    from jaxcc.errors import JaxccError

    _force_devices(args.devices)
    from jaxcc.check.check_kernel import check_kernel

    failed, total = [], 0
    try:
        for module_name in args.modules:
            for label, fn, sample, kwargs in _entries(module_name):
                if args.only and label.split(":", 1)[1] not in args.only:
                    continue
                options = dict(kwargs)
                if args.checks is not None:
                    options["checks"] = _names(args.checks)
                if args.skip is not None:
                    options["skip"] = [*options.get("skip", ()), *_names(args.skip)]
                report = check_kernel(fn, *sample, **options)
                total += 1
                print(f"{label}\n{report}\n")
                if not report.ok:
                    failed.append(label)
    except JaxccError as error:
        text = str(error)
        print(text if text.startswith("jaxcc check") else f"jaxcc check: {text}", file=sys.stderr)
        return 2
    if failed:
        print(f"jaxcc check: {len(failed)} of {total} kernel(s) failed: {', '.join(failed)}")
        return 1
    print(f"jaxcc check: {total} kernel(s) ok")
    return 0

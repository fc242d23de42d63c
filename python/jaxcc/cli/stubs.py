"""`jaxcc stubs MODULE...`: a `.pyi` for every jaxcc module a Python module loads at import, so
editors and type checkers see each kernel function's inputs, `outs`, typed attributes and the
comment above its C++ function. Nothing is built that the import does not build itself."""

from __future__ import annotations

import argparse
import importlib
import os
import sys


def add_stubs_command(commands) -> None:
    stubs = commands.add_parser(
        "stubs",
        help="write a .pyi of the kernel functions of every jaxcc module a Python module loads",
        description=__doc__,
    )
    stubs.add_argument("modules", nargs="+", metavar="MODULE", help="importable module name")
    stubs.add_argument(
        "-o", "--out", default=".", metavar="DIR", help="where to write <name>.pyi (default: .)"
    )


def _requests(module_names: list[str]):
    from jaxcc.build import load_request
    from jaxcc.errors import SpecError

    sys.path.insert(0, os.getcwd())  # `jaxcc stubs mypkg.ops` from the project's root
    try:
        with load_request.recording_loads() as recorded:
            for name in module_names:
                try:
                    importlib.import_module(name)
                except ImportError as exc:
                    raise SpecError(f"jaxcc stubs: cannot import {name!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    requests = list(dict.fromkeys(recorded))
    if not requests:
        raise SpecError(
            f"jaxcc stubs: importing {', '.join(module_names)} loaded no jaxcc module; give a "
            "module that calls jaxcc.load_* at import"
        )
    return requests


def run_stubs_command(args: argparse.Namespace) -> int:
    from jaxcc import _core
    from jaxcc.call.stubs import functions_of, write_stub
    from jaxcc.errors import JaxccError

    try:
        os.makedirs(args.out, exist_ok=True)
        for request in _requests(args.modules):
            specs = _core.resolve_specs(request)
            path = os.path.join(args.out, f"{request.name}.pyi")
            write_stub(path, request.name, functions_of(request.name, specs, request))
            names = ", ".join(spec.name for spec in specs)
            print(f"jaxcc stubs: {request.name} ({names}) -> {os.path.abspath(path)}")
    except (JaxccError, OSError) as error:
        text = str(error)
        print(text if text.startswith("jaxcc stubs") else f"jaxcc stubs: {text}", file=sys.stderr)
        return 1
    return 0

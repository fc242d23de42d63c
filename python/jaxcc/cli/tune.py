"""`jaxcc tune`: tune ahead of time, so that no user's first call pays for timing.

    jaxcc tune mypkg.ops --shapes "matmul=float32[256,256],float32[256,256]->float32[256,256]"
    jaxcc tune mypkg.ops --shapes "scale=float32[4096]" --attrs "scale:factor=2.0,n=3"

imports the module, which loads its kernels with `tune=`, then decides
each named function for each operand signature given, printing one line per decision; the
decisions land in the cache directory like any other (decision 156c), where later processes
read them."""

from __future__ import annotations

import argparse
import importlib
import re
import sys

_OPERAND = re.compile(r"\s*([A-Za-z0-9_]+)\[([0-9,\s]*)\]\s*")


def add_tune_command(commands) -> None:
    tune = commands.add_parser(
        "tune",
        help="decide tuned kernels' variants ahead of time (cached for later processes)",
        description="Imports MODULE (a module name, on sys.path) and tunes each function named "
        "by --shapes for those operands; the decisions are stored in the cache directory.",
    )
    tune.add_argument("module", help="module to import, e.g. mypkg.ops")
    tune.add_argument(
        "--shapes",
        action="append",
        default=[],
        metavar="FN=OPERANDS[->OUTPUTS]",
        help='repeatable, e.g. "matmul=float32[64,48],float32[48,32]->float32[64,32]"; the '
        "outputs may be left out when there is one, shaped like the first operand",
    )
    tune.add_argument(
        "--attrs",
        action="append",
        default=[],
        metavar="FN:NAME=VALUE[,NAME=VALUE...]",
        help='repeatable; the attributes every --shapes of FN is called with, e.g. "scale:factor='
        '2.0,n=3" (Python literals: 2, 2.0, True; true/false too)',
    )


def _structs(text: str, where: str):
    import jax
    import jax.numpy as jnp

    if not re.fullmatch(rf"{_OPERAND.pattern}(,{_OPERAND.pattern})*", text):
        raise ValueError(
            f"{where}: {text.strip()!r} is not DTYPE[D0,D1,...] separated by commas, e.g. "
            "float32[64,48],float32[48,32]"
        )
    structs = []
    for match in _OPERAND.finditer(text):
        dims = tuple(int(d) for d in match.group(2).split(",") if d.strip())
        try:
            dtype = jnp.dtype(match.group(1))
        except TypeError:
            raise ValueError(f"{where}: unknown dtype {match.group(1)!r}") from None
        structs.append(jax.ShapeDtypeStruct(dims, dtype))
    return structs


def parse_shapes(spec: str):
    """'fn=OPERANDS[->OUTPUTS]' -> (fn, [ShapeDtypeStruct], outs or None)."""
    fn, sep, rest = spec.partition("=")
    if not sep or not fn.strip():
        raise ValueError(f"--shapes {spec!r}: write FN=OPERANDS, e.g. matmul=float32[64,48],...")
    operands, arrow, outputs = rest.partition("->")
    ins = _structs(operands, f"--shapes {spec!r}")
    outs = None
    if arrow:
        outs = _structs(outputs, f"--shapes {spec!r}")
        outs = outs[0] if len(outs) == 1 else outs
    return fn.strip(), ins, outs


def _literal(text: str, where: str):
    import ast

    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, (bool, int, float, complex)):
        raise ValueError(f"{where}: {text.strip()!r} is not a number or true/false")
    return value


def parse_attrs(specs: list[str]) -> dict[str, dict]:
    """['fn:a=1,b=2.0', ...] -> {fn: {a: 1, b: 2.0}} (ValueError naming the bad part)."""
    out: dict[str, dict] = {}
    for spec in specs:
        fn, sep, rest = spec.partition(":")
        if not sep or not fn.strip() or not rest.strip():
            raise ValueError(f"--attrs {spec!r}: write FN:NAME=VALUE[,NAME=VALUE...], e.g. "
                             "scale:factor=2.0")  # fmt: skip
        values = out.setdefault(fn.strip(), {})
        for item in rest.split(","):
            name, eq, text = item.partition("=")
            if not eq or not name.strip().isidentifier():
                raise ValueError(f"--attrs {spec!r}: {item.strip()!r} is not NAME=VALUE")
            values[name.strip()] = _literal(text, f"--attrs {spec!r}: {name.strip()}")
    return out


def _attributes_for(function, given: dict) -> dict | None:
    """The attributes a function is tuned with; None (and a message) when it has attributes
    and --attrs names none of them."""
    wanted = function.attribute_types
    if wanted and not given:
        print(
            f"jaxcc tune: {function.__qualname__} takes attributes "
            f"{', '.join(f'{n}: {t}' for n, t in wanted.items())}; give them with --attrs "
            f"{function.name}:{','.join(f'{n}=...' for n in wanted)}",
            file=sys.stderr,
        )
        return None
    return given


def run_tune_command(args: argparse.Namespace) -> int:
    import os

    from jaxcc.errors import AutotuneError, CallError
    from jaxcc.tune.variants import tuned_functions

    os.environ.setdefault("JAXCC_PRINT_AUTOTUNING", "1")
    try:
        requests = [parse_shapes(s) for s in args.shapes]
        attrs = parse_attrs(args.attrs)
    except ValueError as e:
        print(f"jaxcc tune: {e}", file=sys.stderr)
        return 2
    try:
        importlib.import_module(args.module)
    except ImportError as exc:
        print(f"jaxcc tune: cannot import {args.module!r}: {exc}", file=sys.stderr)
        return 2
    unused = sorted(set(attrs) - {fn for fn, _, _ in requests})
    if unused:
        print(f"jaxcc tune: --attrs for {', '.join(unused)}, which no --shapes names",
              file=sys.stderr)  # fmt: skip
        return 2
    found = tuned_functions()
    if not found:
        print(f"jaxcc tune: {args.module} loads no function with tune=", file=sys.stderr)
        return 1
    if not requests:
        print("jaxcc tune: tuned functions: " + ", ".join(sorted(found)), file=sys.stderr)
        print("give --shapes FN=OPERANDS for each shape to tune", file=sys.stderr)
        return 1
    for fn, ins, outs in requests:
        matches = [f for name, f in found.items() if name == fn or name.endswith("." + fn)]
        if not matches:
            print(
                f"jaxcc tune: no tuned function {fn!r}; there are: {', '.join(sorted(found))}",
                file=sys.stderr,
            )
            return 1
        for function in matches:
            attributes = _attributes_for(function, attrs.get(fn, {}))
            if attributes is None:
                return 2
            try:
                function.chosen_config(*ins, outs=outs, **attributes)
            except CallError as e:
                print(f"jaxcc tune: {e}", file=sys.stderr)
                return 2
            except AutotuneError as e:  # the reference cannot run at this key: nothing stored
                print(f"jaxcc tune: AutotuneError: {e}", file=sys.stderr)
                return 1
    return 0

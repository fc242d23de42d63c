"""Reads the signatures of every CUDA source brainevent ships, without a compiler.

For each .cu under brainevent's installed package: the specs jaxcc's signature reader resolves
(jaxcc._core.resolve_specs: lexer, annotations, macro expansion, inference; no toolchain), and
how long the reading took. Prints one line per file that fails and a summary line
`N of M files, F functions, T s`. With --compare, each file's specs are also compared with
those brainevent's own loader reads from the same file (its private
`brainevent._op.kernix_codegen.parse_annotations`, brainevent 0.3.0): names in order, kinds,
attribute names and types. Run with the interpreter that has brainevent installed:

    build/venv312/bin/python scripts/brainevent_signatures.py [--verbose] [--compare]
    build/venv/bin/python scripts/brainevent_signatures.py --root <brainevent package dir>
"""

import argparse
import os
import pathlib
import sys
import time

import jaxcc
from jaxcc import _core
from jaxcc.build import options
from jaxcc.errors import JaxccError


def package_dir() -> pathlib.Path:
    import importlib.util

    spec = importlib.util.find_spec("brainevent")
    if spec is None or spec.origin is None:
        sys.exit("brainevent is not installed in this interpreter")
    return pathlib.Path(spec.origin).parent


def tokens_of(spec) -> list[str]:
    """The spec's tokens in brainevent's spelling (`attr.<name>:<type>` always typed)."""
    tokens = []
    for p in spec.params:
        kind = str(p.kind).split(".")[-1].lower()
        attr_type = str(p.attr_type).split(".")[-1].lower()
        tokens.append(f"attr.{p.name}:{attr_type}" if kind == "attr" else kind)
    return tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every file's functions")
    parser.add_argument("--root", help="brainevent's package directory (default: installed one)")
    parser.add_argument("--compare", action="store_true", help="compare with brainevent's specs")
    args = parser.parse_args()
    root = pathlib.Path(args.root) if args.root else package_dir()
    reference = None
    if args.compare:
        from brainevent._op.kernix_codegen import parse_annotations as reference
    mismatches = 0
    files = sorted(root.rglob("*.cu"))
    ok = functions = 0
    seconds = 0.0
    for path in files:
        request = options.make_request(
            "brainevent_signatures",
            name="m",
            platform="cuda",
            sources=[(str(path), path.read_text())],
            functions=None,
            source_dirs=(str(path.parent),),
        )
        start = time.perf_counter()
        try:
            specs = _core.resolve_specs(request)
        except JaxccError as e:
            seconds += time.perf_counter() - start
            first = str(e).splitlines()[0]
            print(f"FAIL {path.relative_to(root)}: {type(e).__name__}: {first}")
            continue
        seconds += time.perf_counter() - start
        ok += 1
        functions += len(specs)
        if reference is not None:
            theirs = reference(path.read_text())
            ours = {s.name: tokens_of(s) for s in specs}
            if list(theirs) != list(ours) or theirs != ours:
                mismatches += 1
                print(f"DIFF {path.relative_to(root)}: jaxcc {ours} brainevent {theirs}")
        if args.verbose:
            print(f"ok   {path.relative_to(root)}: {len(specs)} functions")
    print(
        f"{ok} of {len(files)} files, {functions} functions, {seconds:.3f} s "
        f"(jaxcc {jaxcc.__version__}, {os.path.basename(sys.executable)})"
    )
    if reference is not None:
        print(f"{ok - mismatches} of {ok} files read as brainevent reads them")
    return 0 if ok == len(files) and mismatches == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""`jaxcc build`: write prebuilt bundles (src/bundle/) that `jaxcc.load_library` loads on machines
without a compiler. From source files or a directory (one bundle), or from a Python module that
calls load_* (`--module pkg.kernels`: one bundle per module it loads, in OUT/<name>)."""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys

_CUDA_SUFFIXES = (".cu", ".cuh")
_CPP_PATTERNS = ["*.cc", "*.cpp", "*.cxx"]
_DEFAULT_OPTIMIZATION_LEVEL = 3
_DEFAULT_VMAP_METHOD = "sequential"

# The flags that describe the one module built from SRC... (argparse dest -> flag). With --module
# the module's own load_* calls set all of these, so such a flag would be silently ignored; it is
# refused instead. Their defaults are None or empty so that "given" can be told from "not given".
_SOURCES_ONLY_FLAGS = {
    "name": "--name",
    "functions": "--functions",
    "platform": "--platform",
    "cuda_arch": "--cuda-arch",
    "optimization_level": "-O",
    "include": "-I",
    "cflags": "--cflags",
    "ldflags": "--ldflags",
    "target_prefix": "--target-prefix",
    "vmap_method": "--vmap-method",
}

# Options whose value is itself a list of compiler or linker flags, so it starts with '-'.
_FLAG_LIST_OPTIONS = ("--cflags", "--ldflags")


def join_flag_list_values(argv: list[str]) -> list[str]:
    """`--cflags "-O2 -DX"` as `--cflags=-O2 -DX`: argparse takes a separate value that starts
    with '-' for an option of its own and fails with "expected one argument", though that is the
    form the docs (and every shell user) write."""
    joined: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in _FLAG_LIST_OPTIONS and index + 1 < len(argv):
            joined.append(f"{arg}={argv[index + 1]}")
            index += 2
            continue
        joined.append(arg)
        index += 1
    return joined


def _flag_list(values: list[str]) -> list[str]:
    """Every --cflags/--ldflags value split as a shell would ("-DNAME='a b'" stays one flag)."""
    return [flag for value in values for flag in shlex.split(value)]


def add_build_command(commands) -> None:
    build = commands.add_parser(
        "build",
        help="build kernels into a bundle that load_library loads without a compiler",
        description=__doc__,
    )
    build.add_argument("sources", nargs="*", metavar="SRC", help="source files or one directory")
    build.add_argument(
        "--module",
        action="append",
        default=[],
        metavar="PKG.MOD",
        help="import this module and bundle every module it loads (repeatable); its load_* "
        "calls decide each bundle's name, functions, flags and GPU architectures",
    )
    build.add_argument("--name", help="module name (default: the file's stem or directory name)")
    build.add_argument(
        "--functions", help="comma-separated function names (default: every // @BE annotation)"
    )
    build.add_argument(
        "--platform", choices=["cpu", "cuda"], help="default: cuda when a source is .cu, else cpu"
    )
    build.add_argument(
        "--cuda-arch",
        help="GPU architectures, e.g. 8.0,9.0 (SASS for each, "
        "PTX of the highest); default: $JAXCC_CUDA_ARCH, else the GPUs here",
    )
    build.add_argument(
        "-O",
        dest="optimization_level",
        type=int,
        choices=range(4),
        help=f"optimization level (default: {_DEFAULT_OPTIMIZATION_LEVEL})",
    )
    build.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    build.add_argument(
        "--cflags",
        action="append",
        default=[],
        metavar="FLAGS",
        help='extra compiler flags, e.g. --cflags "-DN=4 -fopenmp" (repeatable)',
    )
    build.add_argument(
        "--ldflags",
        action="append",
        default=[],
        metavar="FLAGS",
        help='extra linker flags, e.g. --ldflags "-lopenblas -fopenmp" (repeatable)',
    )
    build.add_argument("--target-prefix", help="prefix of the FFI target names (default: NAME)")
    build.add_argument(
        "--compile-commands",
        metavar="DIR",
        help="also write DIR/compile_commands.json: how each source file is compiled, for "
        "editors such as clangd (with --module: every module's files in one database)",
    )
    build.add_argument("--vmap-method", help=f"default: {_DEFAULT_VMAP_METHOD}")
    build.add_argument(
        "--tune-shapes",
        action="append",
        default=[],
        metavar="FN=OPERANDS[->OUTPUTS]",
        help="tuned modules: decide FN for these operands before bundling (as `jaxcc tune "
        "--shapes`; repeatable); the cache's decisions are shipped too",
    )
    build.add_argument(
        "--tune-attrs", action="append", default=[], metavar="FN:NAME=VALUE[,...]",
        help="attributes for --tune-shapes, as `jaxcc tune --attrs`",
    )  # fmt: skip
    build.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="bundle directory (with --module: one subdirectory per module)",
    )


def _request_from_sources(args):
    from jaxcc import _core
    from jaxcc.build import argument_checks, options
    from jaxcc.errors import SpecError

    paths = [argument_checks.abspath(p, "jaxcc build: SRC") for p in args.sources]
    platform = args.platform or (
        "cuda" if any(p.endswith(_CUDA_SUFFIXES) for p in paths) else "cpu"
    )
    if len(paths) == 1 and os.path.isdir(paths[0]):
        patterns = ["*.cu", "*.cc"] if platform == "cuda" else _CPP_PATTERNS
        root, sources = argument_checks.collect_dir(paths[0], patterns, patterns, "jaxcc build")
        name, dirs = args.name or _core.module_name_from_path(root), [root]
    else:
        for path in paths:
            if not os.path.isfile(path):
                raise SpecError(
                    f"jaxcc build: {path} is not a file; give source files or one directory"
                )
        sources = [argument_checks.read_source(p) for p in paths]
        name = args.name or _core.module_name_from_path(paths[0])
        dirs = sorted({os.path.dirname(p) for p in paths})
    functions = [f for f in (args.functions or "").replace(",", " ").split() if f] or None
    cuda = {}
    if platform == "cuda":
        cuda["compute_capability"] = args.cuda_arch
    elif args.cuda_arch:
        raise SpecError("jaxcc build: --cuda-arch is for CUDA sources (.cu or --platform cuda)")
    arguments = dict(
        name=name,
        platform=platform,
        sources=sources,
        functions=functions,
        extra_cflags=_flag_list(args.cflags),
        extra_ldflags=_flag_list(args.ldflags),
        extra_include_paths=args.include,
        source_dirs=dirs,
        target_prefix=args.target_prefix,
        optimization_level=(
            _DEFAULT_OPTIMIZATION_LEVEL
            if args.optimization_level is None
            else args.optimization_level
        ),
        vmap_method=args.vmap_method or _DEFAULT_VMAP_METHOD,
        **cuda,
    )
    return options.make_request("jaxcc build", **arguments), arguments


def _write_sources(args):
    """SRC...: one bundle, or a tuned one when the sources' annotations declare tune="..."."""
    from jaxcc import _core
    from jaxcc.load import loaders

    request, arguments = _request_from_sources(args)
    if not _core.tune_declarations(request):
        return _write(request, args.out)
    module = loaders._load_request("jaxcc build", **arguments)
    _write_tuned(module, args.out, args)
    return None


def _flags_ignored_by_module(args: argparse.Namespace) -> list[str]:
    """The SRC-only flags given on this command line (empty values count as not given)."""
    return [
        flag
        for dest, flag in _SOURCES_ONLY_FLAGS.items()
        if getattr(args, dest) not in (None, "", [])
    ]


def _ignored_flags_message(flags: list[str]) -> str:
    verb = "has" if len(flags) == 1 else "have"
    return (
        f"jaxcc build: {', '.join(flags)} {verb} no effect with --module: each bundle is built "
        "with the arguments of the module's own load_* call (name, functions, "
        "compute_capability, optimization_level, extra_cflags, ...). Set them there, or give "
        "SRC... instead of --module; for the GPU architectures, a load_cuda_* call without "
        "compute_capability follows $JAXCC_CUDA_ARCH"
    )


def _requests_from_modules(modules: list[str]):
    """The distinct requests of the load_* calls the modules make when imported."""
    from jaxcc.build import load_request
    from jaxcc.errors import SpecError
    from jaxcc.tune.variants import tuned_module_names

    with load_request.recording_loads() as recorded:
        for module in modules:
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise SpecError(f"jaxcc build: cannot import {module!r}: {exc}") from None
    requests = list(dict.fromkeys(recorded))
    if not requests:
        raise SpecError(
            f"jaxcc build: importing {', '.join(modules)} loaded no jaxcc module; "
            "--module needs a module that calls jaxcc.load_* at import"
        )
    # A tuned module's variants (and its tune= declaration's probe) are recorded under one name:
    # it is bundled whole from its TunedFunctions (decision 159b).
    tuned = tuned_module_names()
    requests = [r for r in requests if r.name not in tuned]
    names = [r.name for r in requests]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SpecError(
            f"jaxcc build: module name(s) {', '.join(twice)} loaded with different "
            "code; give each load its own name"
        )
    return requests


def _tune_ahead(module, args) -> None:
    """`--tune-shapes`/`--tune-attrs`: decide the module's functions for these operands before
    its decisions are shipped (the syntax of `jaxcc tune --shapes/--attrs`)."""
    from jaxcc.errors import SpecError

    from .tune import parse_attrs, parse_shapes

    try:
        requests = [parse_shapes(s) for s in args.tune_shapes]
        attrs = parse_attrs(args.tune_attrs)
    except ValueError as e:
        raise SpecError(f"jaxcc build: {e}") from None
    for fn, ins, outs in requests:
        function = module.functions.get(fn)
        if function is not None and hasattr(function, "chosen_config"):
            function.chosen_config(*ins, outs=outs, **attrs.get(fn, {}))


def _write_tuned(module, out_dir: str, args):
    from jaxcc.tune.bundle import write

    _tune_ahead(module, args)
    shipped = write(module, out_dir, lambda request, folder: _write(request, folder, quiet=True))
    print(
        f"jaxcc build: {module.name} (tuned: {', '.join(shipped['functions'])}; "
        f"{shipped['builds']} builds, {shipped['decisions']} decisions) -> "
        f"{os.path.abspath(out_dir)}"
    )


def _write(request, out_dir: str, quiet: bool = False):
    from jaxcc import _core
    from jaxcc.environment import discovery
    from jaxcc.environment.progress import BuildProgress

    environment = discovery.build_environment(
        request, verbose=False, force_rebuild=False, ninja_workers=0
    )
    with BuildProgress(request.name) as progress:
        manifest = _core.write_bundle(request, environment, out_dir, progress.start)
    archs = (
        f" sm_{', sm_'.join(manifest.cuda_archs)} + PTX {manifest.ptx_arch}"
        if (manifest.platform == "cuda")
        else ""
    )
    functions = ", ".join(spec.name for spec in manifest.functions)
    _write_stub(request, manifest, out_dir)
    if quiet:
        return manifest
    print(
        f"jaxcc build: {manifest.module_name} ({manifest.platform}{archs}; {functions}) "
        f"-> {os.path.abspath(out_dir)}"
    )
    return manifest


def _write_compile_commands(manifests, out_dir: str) -> None:
    """The compile databases the builds left in their cache entries, joined into one
    `out_dir/compile_commands.json` (inline sources have no entry: nothing to edit)."""
    import json

    from jaxcc import _core
    from jaxcc.environment.cache_dir import get_cache_dir
    from jaxcc.errors import SpecError

    entries = {(e.name, e.key): e.dir for e in _core.cache_list(str(get_cache_dir()))}
    database = []
    for manifest in manifests:
        entry_dir = entries.get((manifest.module_name, manifest.key))
        path = os.path.join(entry_dir, "compile_commands.json") if entry_dir else ""
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                database.extend(json.load(f))
    if not database:
        raise SpecError(
            "jaxcc build: --compile-commands: no source file to describe (inline sources have "
            "none); give source files or a directory"
        )
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, "compile_commands.json")
    with open(target + ".tmp", "w", encoding="utf-8") as f:
        json.dump(database, f, indent=2)
    os.replace(target + ".tmp", target)
    print(f"jaxcc build: compile database for {len(database)} file(s) -> {target}")


def _write_stub(request, manifest, out_dir: str) -> None:
    """`<name>.pyi` beside the bundle: its functions for editors and type checkers, with the
    comments above the C++ functions (read from the sources now; the bundle has none)."""
    from jaxcc.call.stubs import functions_of, write_stub

    name = manifest.module_name
    write_stub(os.path.join(out_dir, f"{name}.pyi"), name,
               functions_of(name, manifest.functions, request))  # fmt: skip


def run_build_command(args: argparse.Namespace) -> int:
    from jaxcc.errors import JaxccError

    try:
        if args.module and args.sources:
            print("jaxcc build: give SRC... or --module, not both", file=sys.stderr)
            return 2
        if args.module:
            ignored = _flags_ignored_by_module(args)
            if ignored:
                print(_ignored_flags_message(ignored), file=sys.stderr)
                return 2
            from jaxcc.tune.variants import tuned_modules

            manifests = [
                _write(request, os.path.join(args.out, request.name))
                for request in _requests_from_modules(args.module)
            ]
            for name, module in tuned_modules().items():
                _write_tuned(module, os.path.join(args.out, name), args)
        elif args.sources:
            manifests = [_write_sources(args)]
        else:
            print("jaxcc build: give source files, a directory or --module", file=sys.stderr)
            return 2
        if args.compile_commands:
            _write_compile_commands([m for m in manifests if m], args.compile_commands)
    except JaxccError as error:
        text = str(error)
        print(text if text.startswith("jaxcc build") else f"jaxcc build: {text}", file=sys.stderr)
        return 1
    return 0

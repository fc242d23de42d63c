"""brainevent 0.3.0's CUDA operator sources built with jaxcc.load_cuda_file, unchanged.

The corpus is every .cu file of the installed brainevent package. Each file is loaded as
brainevent's own Python loads it: the same module `name=`, the same extra nvcc flags (the hybrid
CSR scheduler's -DBE_HYBRID_* for its default configuration) and cuBLAS linked where brainevent
links it. brainevent's include directory (which holds its private `cuda_common.h`) goes on
`extra_include_paths`; `brainevent/*.h` still resolve to jaxcc's headers (decision 89). A load
passes when the module's FFI target names are exactly `<name>.<function>` for the functions
brainevent's own annotation parser (`brainevent._op.kernix_codegen.parse_annotations`) finds.

    python scripts/brainevent_corpus.py [--subset] [--arch 8.0 --arch 9.0] [--jobs N]
                                        [--cache-dir DIR] [--json FILE]

prints one line per file and then `N of 60 files, F functions, T s`; exits 1 when a buildable
file failed or a file expected to be unbuildable built. Used by scripts/brainevent-corpus.sh
(all files), tests/test_brainevent_corpus.py (the subset) and
benchmarks/bench_brainevent_corpus.py.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import importlib.util
import json
import os
import pathlib
import sys
import time

# brainevent's Python passes these module names (grep its package for `load_cuda_file(`); the
# hybrid CSR sources add `module_suffix_for_config(config)` and `compile_flags_for_config(config)`
# of the scheduler's configuration, filled in by hybrid_options() below.
MODULE_NAMES = {
    "_csr/binary_csrmm.cu": "csr_binary_csrmm",
    "_csr/binary_csrmm_hybrid.cu": "csr_binary_csrmm_hybrid+",
    "_csr/binary_csrmv.cu": "csr_binary_csrmv",
    "_csr/binary_csrmv_hybrid.cu": "csr_binary_csrmv_hybrid+",
    "_csr/binary_indexed_csrmm.cu": "csr_binary_indexed_csrmm",
    "_csr/binary_indexed_csrmm_hybrid.cu": "csr_binary_indexed_csrmm_hybrid+",
    "_csr/binary_indexed_csrmv.cu": "csr_binary_indexed_csrmv",
    "_csr/binary_indexed_csrmv_hybrid.cu": "csr_binary_indexed_csrmv_hybrid+",
    "_csr/csr_delay_deliver.cu": "csr_delay_deliver",
    "_csr/csr_delay_deliver_layout.cu": "csr_delay_deliver_layout",
    "_csr/csr_to_csc.cu": "csr_to_csc",
    "_csr/dt2t.cu": "csrmv_dt2t",
    "_csr/float_csrmm.cu": "csr_float_csrmm",
    "_csr/float_csrmv.cu": "csr_float_csrmv",
    "_csr/plasticity_binary_on_post.cu": "csr_plasticity_binary_post",
    "_csr/plasticity_binary_on_pre.cu": "csr_plasticity_binary_pre",
    "_csr/slice_csr_slice_rows.cu": "csr_slice_rows",
    "_dense/binary_dense_cublas.cu": "dense_binary_cublas",
    "_dense/binary_densemm.cu": "dense_binary_mm",
    "_dense/binary_densemv.cu": "dense_binary_mv",
    "_dense/plasticity_binary_on_post.cu": "dense_plasticity_on_post",
    "_dense/plasticity_binary_on_pre.cu": "dense_plasticity_on_pre",
    "_event/compact.cu": "compact",
    "_fcn/binary_fcnmm.cu": "fcn_binary_mm",
    "_fcn/binary_fcnmv.cu": "fcn_binary_mv",
    "_fcn/plasticity_row_driven.cu": "fcn_plasticity_row_driven",
    "_jit_normal/binary_jitnmm.cu": "jit_normal_binary_jitnmm",
    "_jit_normal/binary_jitnmv.cu": "jit_normal_binary_jitnmv",
    "_jit_normal/csr.cu": "jit_normal_csr",
    "_jit_normal/dt2t.cu": "jit_normal_dt2t",
    "_jit_normal/float_jitn.cu": "jit_normal_jitn",
    "_jit_normal/float_jitnmm.cu": "jit_normal_jitnmm",
    "_jit_normal/float_jitnmv.cu": "jit_normal_jitnmv",
    "_jit_scalar/binary_jitsmm.cu": "jit_scalar_binary_jitsmm",
    "_jit_scalar/binary_jitsmv.cu": "jit_scalar_binary_jitsmv",
    "_jit_scalar/csr.cu": "jit_scalar_csr",
    "_jit_scalar/dt2t.cu": "jit_scalar_dt2t",
    "_jit_scalar/float_jits.cu": "jit_scalar_jits",
    "_jit_scalar/float_jitsmm.cu": "jit_scalar_jitsmm",
    "_jit_scalar/float_jitsmv.cu": "jit_scalar_jitsmv",
    "_jit_uniform/binary_jitumm.cu": "jit_uniform_binary_jitumm",
    "_jit_uniform/binary_jitumv.cu": "jit_uniform_binary_jitumv",
    "_jit_uniform/csr.cu": "jit_uniform_csr",
    "_jit_uniform/dt2t.cu": "jit_uniform_dt2t",
    "_jit_uniform/float_jitu.cu": "jit_uniform_jitu",
    "_jit_uniform/float_jitumm.cu": "jit_uniform_jitumm",
    "_jit_uniform/float_jitumv.cu": "jit_uniform_jitumv",
    "_tcsr/binary_csrmv_hybrid.cu": "tcsr_binary_csrmv_hybrid+",
    "_tcsr/binary_indexed_csrmm_hybrid.cu": "tcsr_binary_indexed_csrmm_hybrid+",
    "_tcsr/binary_indexed_csrmv_hybrid.cu": "tcsr_binary_indexed_csrmv_hybrid+",
    "_tcsr/bpsa/bpsa_mm.cu": "tcsr_bpsa",
    "_tcsr/bpsa/bpsa_mv.cu": "tcsr_bpsa_single",
    # No brainevent code loads this copy; named with the tcsr_ prefix its siblings use, so it
    # cannot collide with _csr/csr_to_csc.cu's targets in one process.
    "_tcsr/csr_to_csc.cu": "tcsr_csr_to_csc",
    "_tcsr/dt2t.cu": "tcsr_dt2t",
    "_tcsr/float_csrmm.cu": "tcsr_float_csrmm",
    "_tcsr/float_csrmv.cu": "tcsr_float_csrmv",
    "_tcsr/sddmm/sddmm_binary.cu": "tcsr_sddmm_binary",
    "_tcsr/sddmm/sddmm_float.cu": "tcsr_sddmm_float",
    "_tcsr/sddmm/sddmv_binary.cu": "tcsr_sddmv_binary",
    "_tcsr/sddmm/sddmv_float.cu": "tcsr_sddmv_float",
    "_tcsr/tile_mm/binary_csrmm_tile.cu": "tcsr_binary_csrmm_tile",
}

# Includes a header ("bn_tile.cuh") that brainevent 0.3.0's wheel does not ship: it cannot build
# under brainevent either. jaxcc must refuse it with a CompileError naming that header.
UNBUILDABLE = {"_tcsr/tile_mm/binary_csrmm_tile.cu": "bn_tile.cuh"}

# The CI subset (tests/test_brainevent_corpus.py): one file of each directory, plus the
# unbuildable file, between them plain and macro-stamped entry points, cuBLAS and the 0.3 index
# dispatch. _jit_normal and _jit_scalar are generated like _jit_uniform (one file stands for the
# three), and the hybrid CSR sources (own xla::ffi code, -DBE_HYBRID_*) take about two minutes
# each under nvcc: those are left to the full script.
SUBSET = (
    "_csr/csr_to_csc.cu",  # plain functions; BE_DISPATCH_CSR_INDPTR, BE_CHECK_CSR_INDICES_INT32
    "_dense/binary_dense_cublas.cu",  # plain functions, cuBLAS linked
    "_event/compact.cu",  # plain functions
    "_fcn/plasticity_row_driven.cu",  # macro-stamped: FFI_FCN_ROW(_f32_bool, float, int8_t)
    "_jit_uniform/float_jitu.cu",  # macro-stamped, name pasted too: FFI_JITU(jitu_notrans, _f32,..)
    "_tcsr/bpsa/bpsa_mm.cu",  # plain functions, in a subdirectory
    "_tcsr/tile_mm/binary_csrmm_tile.cu",  # unbuildable: bn_tile.cuh is not in the wheel
)


@dataclasses.dataclass
class Outcome:
    path: str
    name: str
    ok: bool
    functions: int = 0
    seconds: float = 0.0
    detail: str = ""


def brainevent_dir() -> pathlib.Path | None:
    """The installed brainevent package ($JAXCC_BRAINEVENT_DIR overrides), or None."""
    override = os.environ.get("JAXCC_BRAINEVENT_DIR")
    if override:
        return pathlib.Path(override)
    spec = importlib.util.find_spec("brainevent")
    if spec is None or not spec.submodule_search_locations:
        return None
    return pathlib.Path(next(iter(spec.submodule_search_locations)))


def corpus_files(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.cu"))


def hybrid_options() -> tuple[str, list[str]]:
    """brainevent's module suffix and nvcc flags for the hybrid scheduler's default config."""
    from brainevent._tcsr import preprocess_config as pc

    config = pc.DEFAULT_HYBRID_CONFIG
    return pc.module_suffix_for_config(config), pc.compile_flags_for_config(config)


def expected_functions(source: str) -> list[str]:
    """The functions brainevent 0.3's own annotation parser exports from `source`."""
    from brainevent._op.kernix_codegen import parse_annotations

    return sorted(parse_annotations(source))


CUBLAS_FILES = ("_dense/binary_dense_cublas.cu",)


def links_cublas(rel: str) -> bool:
    return rel in CUBLAS_FILES


def _cublas_dir() -> pathlib.Path | None:
    import jaxcc

    nvcc = jaxcc._core.find_nvcc([])  # noqa: SLF001 - the same search a build uses
    home = pathlib.Path(nvcc.path).resolve().parent.parent
    for sub in ("lib64", "lib", "targets/x86_64-linux/lib"):
        if any((home / sub).glob("libcublas.so*")):
            return home / sub
    return None


def cublas_ldflags() -> list[str]:
    """Link cuBLAS as brainevent does: the shared library by path, found again through an rpath
    (the CUDA toolkit's copy here; brainevent takes the nvidia-cublas wheel's)."""
    home = _cublas_dir()
    if home is None:
        return ["-lcublas"]
    lib = sorted(home.glob("libcublas.so*"))[0]
    return [str(lib), f"-Wl,-rpath,{lib.parent}"]


def cublas_libraries() -> list[str]:
    """The cuBLAS a JAX GPU process has mapped before any kernel module loads: the
    nvidia-cublas wheel's (jaxlib's CUDA plugin loads it) when installed, else the toolkit's."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cu13/lib", "cublas/lib"):
            lt = pathlib.Path(base, sub, "libcublasLt.so.13")
            if lt.exists():
                return [str(lt), str(lt.with_name("libcublas.so.13"))]
    home = _cublas_dir()
    return [str(home / "libcublasLt.so.13"), str(home / "libcublas.so.13")] if home else []


def load_options(rel: str, archs: list[str], include_dir: str) -> tuple[str, dict]:
    name = MODULE_NAMES[rel]
    kwargs: dict = {"compute_capability": archs, "extra_include_paths": [include_dir]}
    if name.endswith("+"):
        suffix, flags = hybrid_options()
        name = name[:-1] + suffix
        kwargs["extra_cuda_cflags"] = flags
    if links_cublas(rel):
        kwargs["extra_ldflags"] = cublas_ldflags()
    if rel.startswith("_tcsr/tile_mm/"):
        # brainevent's caller adds the file's own directory, which jaxcc adds for every file.
        tile_dir = pathlib.Path(include_dir).parent / "_tcsr" / "tile_mm"
        kwargs["extra_include_paths"].append(str(tile_dir))
    return name, kwargs


def load_one(root: pathlib.Path, rel: str, archs: list[str]) -> Outcome:
    import jaxcc

    path = root / rel
    name, kwargs = load_options(rel, archs, str(root / "include"))
    start = time.perf_counter()
    try:
        module = jaxcc.load_cuda_file(path, name=name, **kwargs)
    except jaxcc.errors.JaxccError as exc:
        seconds = time.perf_counter() - start
        missing = UNBUILDABLE.get(rel)
        if missing and isinstance(exc, jaxcc.errors.CompileError) and missing in str(exc):
            return Outcome(rel, name, True, 0, seconds, f"unbuildable as expected: {missing}")
        first = str(exc).strip().splitlines()
        return Outcome(rel, name, False, 0, seconds, f"{type(exc).__name__}: {first[:12]}")
    seconds = time.perf_counter() - start
    if rel in UNBUILDABLE:
        return Outcome(rel, name, False, 0, seconds, "built, but it was expected to be unbuildable")
    want = {f"{name}.{f}" for f in expected_functions(path.read_text(encoding="utf-8"))}
    got = set(module.targets.values())
    if got != want:
        return Outcome(
            rel,
            name,
            False,
            len(got),
            seconds,
            f"targets differ: missing {sorted(want - got)[:5]}, extra {sorted(got - want)[:5]}",
        )
    return Outcome(rel, name, True, len(got), seconds)


def run(files: list[str], root: pathlib.Path, archs: list[str], jobs: int, echo=print):
    """Loads `files` `jobs` at a time (threads: a load releases the GIL while it builds)."""
    outcomes = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(load_one, root, rel, archs): rel for rel in files}
        for future in concurrent.futures.as_completed(futures):
            outcome = future.result()
            outcomes.append(outcome)
            status = "ok  " if outcome.ok else "FAIL"
            echo(
                f"{status} {outcome.path} ({outcome.name}): {outcome.functions} functions, "
                f"{outcome.seconds:.1f} s {outcome.detail}"
            )
    return sorted(outcomes, key=lambda o: o.path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subset", action="store_true", help="only the CI subset")
    parser.add_argument("--arch", action="append", help="compute capability (repeatable)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--cache-dir", help="jaxcc cache directory (default: jaxcc's)")
    parser.add_argument("--json", help="write the outcomes here")
    parser.add_argument("files", nargs="*", help="corpus paths (default: all)")
    args = parser.parse_args(argv)
    root = brainevent_dir()
    if root is None:
        print("brainevent is not installed (pip install brainevent==0.3.0)", file=sys.stderr)
        return 2
    import jaxcc

    if args.cache_dir:
        jaxcc.set_cache_dir(args.cache_dir)
    every = corpus_files(root)
    unknown = sorted(set(every) - set(MODULE_NAMES))
    if unknown:
        print(f"corpus files with no module name in this table: {unknown}", file=sys.stderr)
        return 2
    files = args.files or (list(SUBSET) if args.subset else every)
    archs = args.arch or ["8.0", "9.0"]
    start = time.perf_counter()
    outcomes = run(files, root, archs, args.jobs)
    elapsed = time.perf_counter() - start
    built = [o for o in outcomes if o.ok and o.path not in UNBUILDABLE]
    refused = [o for o in outcomes if o.ok and o.path in UNBUILDABLE]
    note = f"; {len(refused)} unbuildable file refused as expected" if refused else ""
    print(
        f"{len(built)} of {len(every) - len(UNBUILDABLE)} files, "
        f"{sum(o.functions for o in built)} functions, {elapsed:.0f} s "
        f"(sm {', '.join(archs)}; {len(files)} loaded, {args.jobs} at a time{note})"
    )
    if args.json:
        pathlib.Path(args.json).write_text(
            json.dumps([dataclasses.asdict(o) for o in outcomes], indent=1)
        )
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())

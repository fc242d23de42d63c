"""brainevent 0.3.0's CUDA sources built and loaded by jaxcc and by brainevent's own loader.

Run (a Python >= 3.12 with jaxcc and brainevent==0.3.0, e.g. build/venv312/bin/python):
    python benchmarks/bench_brainevent_corpus.py [--files subset|all|PATH...] [--arch 8.0]
                                                 [--jobs 2] [--rounds 5] [--cold-rounds 3]
                                                 [--warm-all CACHE [--warm-all-only]]

cold   every file of the set built from an empty cache, `--jobs` loads at a time (threads: both
       loaders release the GIL while their compilers run; `--brainevent-jobs` sets brainevent's
       side apart, e.g. 1, as its lazily built operators load), for the same architecture, each file
       with the module name, -D flags and cuBLAS link brainevent's own Python uses
       (scripts/brainevent_corpus.py). jaxcc: load_cuda_file; brainevent: its load_cuda_file.
       Both build SASS for the architecture plus its PTX at -O3 (the same -gencode pairs).
       Each side in a fresh process, after `import jax` and its own import; `--cold-rounds`
       repeats the pair into new empty caches with the order alternating, median ratio. Each
       cold row also gives the compilers' CPU seconds (user + sys of every process the loader
       ran), which a loaded machine disturbs far less than wall time.
warm   loading every module of the set again in ONE fresh process, sequentially, after
       `import jax` and the tool's import (all cache hits): the total, medians over `--rounds`
       processes with the two sides interleaved. `--warm-all CACHE` also times jaxcc loading all
       60 buildable files from a cache the full corpus script filled
       (scripts/brainevent-corpus.sh, both architectures), with where the time goes: the Python
       stages and the core's (jaxcc._core.last_load_trace()), summed over the modules; dlopen
       against jaxcc's own work; the total without the cuBLAS-linked module; and all of it again
       in processes that loaded cuBLAS first, as JAX's CUDA plugin has in a GPU process (the
       module's NEEDED libcublas.so.13 then resolves by SONAME to the loaded one; decision 106).
       A warm load maps each library at its first call (decision 137; JAXCC_LAZY_LOAD=0 maps it
       at the load): the probe then maps all of them with load_library(), timed apart.

Without a GPU nothing is called; the targets register for platform CUDA all the same.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Loads `files` (corpus paths) with one tool; prints a JSON object.
PROBE = textwrap.dedent(
    """
    import json, resource, sys, time, pathlib, concurrent.futures
    import jax
    sys.path.insert(0, sys.argv[1])
    import brainevent_corpus as corpus
    side, cache, archs, jobs, files = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), \\
        int(sys.argv[5]), json.loads(sys.argv[6])
    breakdown = len(sys.argv) > 7 and sys.argv[7] == "1"
    preload = len(sys.argv) > 8 and sys.argv[8] == "1"
    root = corpus.brainevent_dir()
    include = str(root / "include")
    if side.startswith("jaxcc"):
        import jaxcc
        jaxcc.set_cache_dir(cache)
        load = jaxcc.load_cuda_file
    else:
        import brainevent
        brainevent.set_cache_dir(cache)
        load = brainevent.load_cuda_file
    jobs_args = []
    for rel in files:
        name, kwargs = corpus.load_options(rel, archs, include)
        if side == "brainevent":
            # brainevent's loader takes one architecture string and finds its own headers; the
            # hybrid flags and cuBLAS link are the same.
            kwargs["compute_capability"] = archs[0]
            kwargs["extra_include_paths"] = kwargs["extra_include_paths"][1:]
            if "extra_ldflags" in kwargs:
                lib, rpath = kwargs["extra_ldflags"]
                kwargs["extra_ldflags"] = [lib, "-rpath=" + rpath.split(",")[-1]]
        jobs_args.append((root / rel, name, kwargs))
    stages = {}
    if breakdown and side == "jaxcc":
        import load_stages  # scripts/load_stages.py
        from jaxcc import _core
        def core_trace(label):
            if label == "core (total)" and hasattr(_core, "last_load_trace"):
                for key, value in _core.last_load_trace():
                    stages["core: " + key] = stages.get("core: " + key, 0.0) + value
        load_stages.time_stages(
            stages, ("py: build environment", "core (total)", "py: register with jax"), core_trace
        )
    preload_s = 0.0
    if preload:
        # What a JAX GPU process has already mapped (jaxlib's CUDA plugin loads cuBLAS): the
        # loader then resolves a module's NEEDED libcublas.so.13 by SONAME, without a new load.
        import ctypes, glob, os
        libs = corpus.cublas_libraries()
        if os.environ.get("JAXCC_CUDA_RUNTIME") == "shared":
            # JAX's plugin loads its wheel's CUDA runtime first, the one shared modules link.
            from jaxcc.environment import discovery
            libs = [p for d in discovery.nvidia_wheel_dirs()[1]
                    for p in glob.glob(d + "/libcudart.so.*")][:1] + libs
        t = time.perf_counter()
        for lib in libs:
            ctypes.CDLL(lib)
        preload_s = time.perf_counter() - t
    per_module = {}
    modules = []
    t0 = time.perf_counter()
    if jobs > 1:
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            list(pool.map(lambda a: load(a[0], name=a[1], **a[2]), jobs_args))
    else:
        for rel, (path, name, kwargs) in zip(files, jobs_args):
            t = time.perf_counter()
            modules.append(load(path, name=name, **kwargs))
            per_module[rel] = time.perf_counter() - t
    total = time.perf_counter() - t0
    # A warm jaxcc load maps each library at its first call (decision 137): what mapping all of
    # them costs when they are used, timed here without a GPU by asking for it.
    t = time.perf_counter()
    for module in modules:
        if hasattr(module, "load_library"):
            module.load_library()
    deferred_map_s = time.perf_counter() - t
    cublas = [rel for rel in files if corpus.links_cublas(rel)]
    # The compilers' CPU time: ninja waits for them and this process for ninja.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"seconds": total, "compiler_cpu_s": usage.ru_utime + usage.ru_stime,
                      "stages": stages, "per_module": per_module, "cublas": cublas,
                      "preload_s": preload_s, "deferred_map_s": deferred_map_s}))
    """
)


def nvcc_alone(root, files, arch, jobs, corpus) -> dict:
    """The floor of any loader: nvcc on each corpus file itself, with brainevent's own headers,
    the file's -D flags and the kernel units' -gencode pairs and levels, no FFI bindings, no
    wrapper, no link; `jobs` at a time. Wall seconds and the compilers' CPU seconds."""
    import concurrent.futures
    import resource
    import shutil

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    sm = arch.replace(".", "")
    out_dir = tempfile.mkdtemp(prefix="bench_nvcc_alone_")

    def compile_one(rel):
        name, kwargs = corpus.load_options(rel, [arch], str(root / "include"))
        path = root / rel
        command = [nvcc, "-std=c++17", "-O3", "-Xptxas=-O3", "-Xcompiler=-fPIC,-fvisibility=hidden"]
        command += [f"-gencode=arch=compute_{sm},code=sm_{sm}"]
        command += [f"-gencode=arch=compute_{sm},code=compute_{sm}", "-I", str(path.parent)]
        for directory in kwargs["extra_include_paths"]:
            command += ["-I", directory]
        command += kwargs.get("extra_cuda_cflags", [])
        command += ["-isystem", jax_ffi_include(), "-c", str(path), "-o", f"{out_dir}/{name}.o"]
        subprocess.run(command, capture_output=True, check=True)

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(compile_one, files))
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(out_dir, ignore_errors=True)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"seconds": seconds, "compiler_cpu_s": cpu}


def jax_ffi_include() -> str:
    import jax.ffi

    return jax.ffi.include_dir()


def probe(python, side, cache, archs, jobs, files, breakdown=False, preload=False):
    out = subprocess.run(
        [
            python,
            "-c",
            PROBE,
            str(ROOT / "scripts"),
            side,
            cache,
            json.dumps(archs),
            str(jobs),
            json.dumps(files),
            "1" if breakdown else "0",
            "1" if preload else "0",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{side} probe failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--files", nargs="+", default=["subset"])
    parser.add_argument("--arch", default="8.0")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--nvcc-alone",
        action="store_true",
        help="cold rounds also time nvcc on the files themselves, the floor of any loader",
    )
    parser.add_argument(
        "--brainevent-jobs",
        type=int,
        help="loads at a time on brainevent's side (default: --jobs); 1 is how its operators "
        "build when a program first calls them",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cold-rounds", type=int, default=1, help="cold builds, sides alternating")
    parser.add_argument("--skip-cold", action="store_true", help="reuse --cache-root's caches")
    parser.add_argument("--cache-root", help="where the two sides' caches live (default: temp)")
    parser.add_argument("--warm-all", help="jaxcc cache filled by scripts/brainevent-corpus.sh")
    parser.add_argument("--warm-all-only", action="store_true", help="only the --warm-all rows")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "scripts"))
    import brainevent_corpus as corpus

    root = corpus.brainevent_dir()
    buildable = [f for f in corpus.corpus_files(root) if f not in corpus.UNBUILDABLE]
    if args.files == ["subset"]:
        files = [f for f in corpus.SUBSET if f not in corpus.UNBUILDABLE]
    elif args.files == ["all"]:
        files = buildable
    else:
        files = args.files
    archs = [args.arch]
    cache_root = pathlib.Path(args.cache_root or tempfile.mkdtemp(prefix="bench_corpus_"))
    caches = {side: str(cache_root / side) for side in ("jaxcc", "brainevent")}
    print(f"{len(files)} files, sm {args.arch}, {args.jobs} loads at a time: {', '.join(files)}")

    result = {"files": files, "arch": args.arch, "jobs": args.jobs}
    if args.warm_all_only:
        result["warm_all"] = warm_all(args, buildable)
        print(json.dumps(result))
        return
    if not args.skip_cold:
        # Round r builds into empty caches of its own, the sides in alternating order (a load
        # change during a round weighs on both sides alike over the rounds); the last round's
        # caches are the warm rows'.
        sides = ["jaxcc", "brainevent"] + (["nvcc alone"] if args.nvcc_alone else [])
        cold = {side: [] for side in sides}
        cpu = {side: [] for side in sides}
        ratios = []
        for r in range(args.cold_rounds):
            order = sides[r % len(sides) :] + sides[: r % len(sides)]
            seconds = {}
            for side in order:
                where = str(cache_root / f"cold{r}" / side)
                if side in caches:
                    caches[side] = where
                jobs = args.jobs if side != "brainevent" else (args.brainevent_jobs or args.jobs)
                if side == "nvcc alone":
                    out = nvcc_alone(root, files, args.arch, jobs, corpus)
                else:
                    out = probe(args.python, side, where, archs, jobs, files)
                seconds[side] = out["seconds"]
                cold[side].append(seconds[side])
                cpu[side].append(out["compiler_cpu_s"])
            ratios.append(seconds["jaxcc"] / seconds["brainevent"])
            print(
                f"cold round {r + 1} (load {os.getloadavg()[0]:.1f}): "
                + ", ".join(
                    f"{side} {seconds[side]:.1f} s ({cpu[side][-1]:.1f} s compiler CPU)"
                    for side in sides
                )
                + f", ratio {ratios[-1]:.2f}",
                flush=True,
            )
        result["cold_s"] = {side: statistics.median(v) for side, v in cold.items()}
        result["cold_compiler_cpu_s"] = {side: statistics.median(v) for side, v in cpu.items()}
        result["cold_ratios"] = ratios
        print(f"cold jaxcc / brainevent: {statistics.median(ratios):.2f} (median of rounds)")
        if args.nvcc_alone:
            floor = statistics.median(cold["nvcc alone"])
            print(
                f"nvcc alone / brainevent: {floor / statistics.median(cold['brainevent']):.2f}, "
                f"jaxcc / nvcc alone: {statistics.median(cold['jaxcc']) / floor:.2f}"
            )
        for side, v in cpu.items():
            print(f"compiler CPU, {side}: {statistics.median(v):.1f} s (median of rounds)")

    warm = {"jaxcc": [], "brainevent": []}
    for _ in range(args.rounds):
        for side in warm:
            warm[side].append(probe(args.python, side, caches[side], archs, 1, files)["seconds"])
    result["warm_ms"] = {s: statistics.median(v) * 1e3 for s, v in warm.items()}
    for side, ms in result["warm_ms"].items():
        print(f"warm {side}, {len(files)} modules in one process: {ms:.2f} ms (median)")
    ratio = result["warm_ms"]["jaxcc"] / result["warm_ms"]["brainevent"]
    print(f"warm jaxcc / brainevent: {ratio:.2f}")

    if args.warm_all:
        result["warm_all"] = warm_all(args, buildable)
    print(json.dumps(result))


def warm_all(args, buildable) -> dict:
    """All buildable modules warm in one fresh process, three ways, interleaved round by round:
    as is, with cuBLAS already mapped (a JAX GPU process), and with the stage split."""
    runs = {"as is": [], "cuBLAS preloaded": []}
    for _ in range(args.rounds):
        for label, preload in (("as is", False), ("cuBLAS preloaded", True)):
            runs[label].append(
                probe(
                    args.python, "jaxcc", args.warm_all, ["8.0", "9.0"], 1, buildable, True, preload
                )
            )
    out = {}
    n = len(buildable)
    for label, rs in runs.items():
        totals = sorted(r["seconds"] * 1e3 for r in rs)
        # The whole process's total less the cuBLAS modules' own loads.
        without = [(r["seconds"] - sum(r["per_module"][k] for k in r["cublas"])) * 1e3 for r in rs]
        cublas_ms = [
            sum(v for k, v in r["per_module"].items() if k in r["cublas"]) * 1e3 for r in rs
        ]
        dlopen = [r["stages"].get("core: dlopen + dlsym", 0.0) * 1e3 for r in rs]
        own = [r["seconds"] * 1e3 - d for r, d in zip(rs, dlopen, strict=True)]
        entry = {
            "total_ms": statistics.median(totals),
            "runs_ms": totals,
            "without_cublas_modules_ms": statistics.median(without),
            "cublas_modules_ms": statistics.median(cublas_ms),
            "dlopen_ms": statistics.median(dlopen),
            "jaxcc_own_ms": statistics.median(own),
            "preload_ms": statistics.median(r["preload_s"] * 1e3 for r in rs),
            "deferred_map_ms": statistics.median(r["deferred_map_s"] * 1e3 for r in rs),
            "stages_ms": {
                k: statistics.median(r["stages"].get(k, 0.0) * 1e3 for r in rs)
                for k in sorted({k for r in rs for k in r["stages"]})
            },
        }
        out[label] = entry
        ncu = len(rs[0]["cublas"])
        print(
            f"warm jaxcc, all {n} modules in one process, {label}: {entry['total_ms']:.1f} ms "
            f"(median; runs {', '.join(f'{t:.1f}' for t in totals)})\n"
            f"  without the {ncu} cuBLAS-linked modules: {entry['without_cublas_modules_ms']:.1f} "
            f"ms; those {ncu}: {entry['cublas_modules_ms']:.1f} ms"
            + (f"; the preload itself {entry['preload_ms']:.1f} ms" if label != "as is" else "")
            + f"\n  dlopen + dlsym {entry['dlopen_ms']:.1f} ms, jaxcc's own work "
            f"{entry['jaxcc_own_ms']:.1f} ms ({entry['jaxcc_own_ms'] * 1e3 / n:.0f} us a module)"
            f"\n  mapping the libraries a lazy load deferred (load_library() on all {n}): "
            f"{entry['deferred_map_ms']:.1f} ms"
        )
        for key, ms in entry["stages_ms"].items():
            print(f"    {key}: {ms:.3f} ms (summed over modules)")
    return out


if __name__ == "__main__":
    main()

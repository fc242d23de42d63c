"""dlopen cost of CUDA modules under different link options (issue 21 item 5, decision 121).

Relinks real modules from an object cache (a filled brainevent corpus cache by default): every
wrapper object is linked with the kernel object that defines the bridges it calls and the frame
runtime object that defines its decoder, once per variant, as jaxcc links a CUDA module (static
cudart) plus the variant's options. Then fresh Python processes (JAX imported, as in a user's
process) dlopen every module of one variant with RTLD_NOW | RTLD_LOCAL (as jaxcc's loader does)
and dlsym its ``jaxcc_ffi_*`` handlers; the row "as is, RTLD_LAZY" opens the unchanged modules
with lazy binding. Variants alternate process by process, so a loaded machine hits them alike.

    python benchmarks/bench_cuda_dlopen.py --objects build/brainevent-corpus-cache/.objects
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CUDA_LIB = "/usr/local/cuda/lib64"
BASE = ["-shared", "-fPIC", "-Wl,-z,defs"]
RUNTIME = [f"-L{CUDA_LIB}", "-lcudart_static", "-ldl", "-lrt", "-lpthread"]
VARIANTS = {
    "as is": [],
    "exclude-libs": ["-Wl,--exclude-libs,ALL"],
    "relr": ["-Wl,-z,pack-relative-relocs"],
    "O1+gc-sections": ["-Wl,-O1", "-Wl,--gc-sections"],
    # Fewer segments to map and no RELRO mprotect (decision 135).
    "noseparate-code+norelro": ["-Wl,-z,noseparate-code", "-Wl,-z,norelro"],
    "all four": [
        "-Wl,--exclude-libs,ALL",
        "-Wl,-z,pack-relative-relocs",
        "-Wl,-O1",
        "-Wl,--gc-sections",
    ],
}

CHILD = r"""
import ctypes, os, sys, time
import jax  # noqa: F401  (a user's process has JAX loaded)
mode = os.RTLD_LAZY if sys.argv[1] == "lazy" else os.RTLD_NOW
paths = sys.argv[2:]
names = [open(p + ".syms").read().split() for p in paths]
t, c = time.perf_counter(), time.thread_time()
for p, ns in zip(paths, names):
    lib = ctypes.CDLL(p, mode=mode | os.RTLD_LOCAL)
    for n in ns:
        getattr(lib, n)
print((time.perf_counter() - t) * 1e3, (time.thread_time() - c) * 1e3)
"""


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    return [line.split() for line in out.splitlines()]


def pairs(objects):
    defined, wrappers = {}, {}
    for name in sorted(os.listdir(objects)):
        if not name.endswith(".o"):
            continue
        path = os.path.join(objects, name)
        rows = symbols(path)
        needs = [r[-1] for r in rows if r[-2] == "U" and "jaxcc" in r[-1]]
        if any("jaxcc_bridge_" in n for n in needs):
            handlers = [r[-1] for r in rows if r[-2] == "T" and r[-1].startswith("jaxcc_ffi_")]
            wrappers[path] = (needs, handlers)
        for r in rows:
            if len(r) == 3 and r[1] in "TW" and "jaxcc" in r[2]:
                defined.setdefault(r[2], set()).add(path)
    # A wrapper links with the one kernel object that defines its bridges and with the runtime
    # object that defines jaxcc::detail's frame decoder (any one copy: they are the same code).
    for wrapper, (needs, handlers) in wrappers.items():
        kernels = {frozenset(defined.get(n, ())) for n in needs if "jaxcc_bridge_" in n}
        if len(kernels) != 1 or len(next(iter(kernels))) != 1:
            continue
        runtime = {min(defined[n]) for n in needs if "jaxcc_bridge_" not in n and n in defined}
        yield wrapper, [next(iter(next(iter(kernels)))), *sorted(runtime)], handlers


def link(out_dir, modules, flags):
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for i, (wrapper, others, handlers) in enumerate(modules):
        path = os.path.join(out_dir, f"m{i}.so")
        cmd = ["g++", *BASE, "-o", path, *others, wrapper, *flags, *RUNTIME]
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            continue  # a module that needs more (cuBLAS) is left out of every variant alike
        with open(path + ".syms", "w") as f:
            f.write(" ".join(handlers))
        paths.append(path)
    return paths


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--objects", default="build/brainevent-corpus-cache/.objects")
    ap.add_argument("--modules", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    modules = list(pairs(args.objects))[: args.modules]
    work = tempfile.mkdtemp(prefix="jaxcc-dlopen-")
    try:
        sets = {}
        for name, flags in VARIANTS.items():
            folder = os.path.join(work, name.replace(" ", "_").replace("+", "_"))
            sets[name] = link(folder, modules, flags)
        common = min(len(p) for p in sets.values())
        sets["as is, RTLD_LAZY"] = sets["as is"]
        times = {name: [] for name in sets}
        for _ in range(args.rounds):
            for name, paths in sets.items():
                mode = "lazy" if "LAZY" in name else "now"
                child = [sys.executable, "-c", CHILD, mode, *paths[:common]]
                out = subprocess.run(child, capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"{name}: {out.stderr[-2000:]}")
                wall, cpu = out.stdout.strip().splitlines()[-1].split()
                times[name].append((float(wall), float(cpu)))
        load = os.getloadavg()[0]
        print(f"{common} modules (of {len(modules)} paired), {args.rounds} processes a variant, ")
        print(f"interleaved; load {load:.1f}; ms for all modules (CPU = the thread's user+sys)")
        base = statistics.median(c for _, c in times["as is"])
        for name, ts in times.items():
            size = sum(os.path.getsize(p) for p in sets[name][:common]) / common / 1e6
            wall = statistics.median(w for w, _ in ts)
            cpu = statistics.median(c for _, c in ts)
            print(
                f"{name:17s} CPU median {cpu:6.2f} (min {min(c for _, c in ts):6.2f})  "
                f"wall median {wall:6.2f} (min {min(w for w, _ in ts):6.2f})  "
                f"CPU {cpu / base:4.2f}x  {size:.2f} MB a module"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

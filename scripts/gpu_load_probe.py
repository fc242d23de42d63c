"""Warm CUDA loads in a real JAX GPU process (docs/gpu.md, "Warm CUDA loads"; issue 21 item 5).

    python scripts/gpu_load_probe.py CACHE [--json OUT]

CACHE is a jaxcc cache that scripts/brainevent_corpus.py filled (sm_80 + sm_90). Every row is a
fresh process that starts JAX's GPU backend (`jax.devices("gpu")`) before it loads anything, as a
JAX program does, then:
  one      loads `_csr/binary_csrmv.cu`'s module warm: load time, the core's stages
           (`jaxcc._core.last_load_trace()`) and the Python side's (the core call as
           Python sees it, the environment, registration with JAX), three processes in a row,
           then three with CUDA_MODULE_LOADING=EAGER (the load should not change; the first
           call may)
  all      loads all buildable modules warm, one after another: total, dlopen + dlsym, the rest;
           every other process loads them in reverse, so a slow module is told from a slow
           position, and the slowest warm index stages are printed with their parts (reading
           the record, decoding it, stat'ing what it watches) and the load's page faults and
           context switches (getrusage of the thread); two more processes wait 1 s
           after JAX's backend started before loading (`settled`): a stall that JAX's backend
           causes in its first moments (another thread holding the process's memory map, say)
           lands on whichever load runs then, and is gone after the wait
  maps     which CUDA runtime and cuBLAS the process has mapped after JAX's backend started, and
           after the cuBLAS-linked module loaded (one libcublas.so.13 expected)
  order    the cuBLAS-linked module loaded BEFORE JAX's backend starts, then a cuBLAS-using JAX op
           (jnp.dot on the GPU): which cuBLAS copies are mapped, and whether the op still works
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent

PROBE = textwrap.dedent(
    """
    import json, sys, time, pathlib
    mode, cache, scripts, order = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    sys.path.insert(0, scripts)
    import brainevent_corpus as corpus
    import jax
    import jaxcc
    jaxcc.set_cache_dir(cache)
    root = corpus.brainevent_dir()
    include = str(root / "include")

    def options(rel):
        # Outside the timed loads: the hybrid files' options import brainevent (seconds).
        return (rel, *corpus.load_options(rel, ["8.0", "9.0"], include))

    # The Python side of a load, split as the core's trace splits its own part: what the rest of
    # a GPU load is (registration through JAX's CUDA plugin, the environment, the loader).
    import load_stages
    py = {}
    load_stages.time_stages(py)  # every stage: the request, environment, core, registration, module

    def load(opts):
        rel, name, kwargs = opts
        py.clear()
        t = time.perf_counter()
        module = jaxcc.load_cuda_file(root / rel, name=name, **kwargs)
        return module, time.perf_counter() - t, {**dict(jaxcc._core.last_load_trace()), **py}

    def mapped(*needles):
        found = set()
        for line in open("/proc/self/maps"):
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if any(n in path for n in needles):
                found.add(path)
        return sorted(found)

    out = {}
    if mode == "order":
        module, s, _ = load(options(next(iter(corpus.CUBLAS_FILES))))
        out["before_backend"] = mapped("libcublas")
        jax.devices("gpu")
        import jax.numpy as jnp
        a = jnp.ones((256, 256), jnp.float32)
        out["dot_ok"] = bool(float(jnp.dot(a, a)[0, 0]) == 256.0)
        out["after_backend"] = mapped("libcublas")
        print("RESULT " + json.dumps(out)); sys.exit(0)
    jax.devices("gpu")
    out["runtime_after_backend"] = mapped("libcudart", "libcublas", "libcuda.so")
    if mode == "one":
        _, s, trace = load(options("_csr/binary_csrmv.cu"))
        out.update(seconds=s, trace=trace)
    elif mode == "all":
        files = [options(f) for f in corpus.corpus_files(root) if f not in corpus.UNBUILDABLE]
        if order == "reverse":
            files.reverse()
        if order == "settled":
            time.sleep(1.0)
        parts = ("warm index: read record", "warm index: decode", "warm index")
        t = time.perf_counter()
        dlopen = 0.0
        split = {}
        per_module = []
        import resource

        def usage():
            # This thread's page faults and context switches: a load that blocked (a voluntary
            # switch), was preempted (an involuntary one) or faulted memory in says so.
            u = resource.getrusage(resource.RUSAGE_THREAD)
            return (u.ru_minflt, u.ru_majflt, u.ru_nvcsw, u.ru_nivcsw)

        for opts in files:
            before = usage()
            _, s, trace = load(opts)
            faults = [b - a for a, b in zip(before, usage())]
            parts_ms = [round(trace.get(k, 0.0) * 1e3, 3) for k in parts] + [faults]
            warm_index = sum(trace.get(k, 0.0) for k in parts)
            per_module.append((warm_index, s, opts[1], len(per_module), parts_ms))
            dlopen += trace.get("dlopen + dlsym", 0.0)
            # Every stage of the core's trace and of the Python side, summed over the modules:
            # where the GPU machine's warm total goes (the fifteenth session's 23 ms of core).
            for key, value in trace.items():
                split[key] = split.get(key, 0.0) + value
        # The loop's wall time holds this probe's own bookkeeping (the trace copied into a dict,
        # the sums, getrusage twice a module); the figure is the loads' own time, the loop's
        # beside it.
        out.update(
            seconds=sum(total for _, total, _, _, _ in per_module),
            loop_seconds=time.perf_counter() - t,
            dlopen=dlopen,
            modules=len(files),
            split=split,
        )
        out["order"] = order
        thp = pathlib.Path("/sys/kernel/mm/transparent_hugepage")
        out["thp"] = {
            f: (thp / f).read_text().strip() for f in ("enabled", "defrag") if (thp / f).exists()
        }
        # The eighteenth GPU run: one module, the 20th loaded, spent 13 ms in the warm index
        # stage where the others spent 0.2: which module, where in the loop, and in which part.
        out["slowest_warm_index"] = [
            (name, i, round(w * 1e3, 3), round(total * 1e3, 3), parts_ms)
            for w, total, name, i, parts_ms in sorted(per_module, reverse=True)[:8]
        ]
        out["after_cublas_module"] = mapped("libcublas")
    print("RESULT " + json.dumps(out))
    """
)


def run(mode: str, cache: str, env: dict | None = None, order: str = "forward") -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, mode, cache, str(ROOT / "scripts"), order],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false", **(env or {})},
    )
    line = next((s for s in proc.stdout.splitlines() if s.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        return {"error": proc.stderr[-3000:]}
    return json.loads(line[len("RESULT ") :])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cache")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    result: dict = {}
    for label, env in (("lazy", {}), ("EAGER", {"CUDA_MODULE_LOADING": "EAGER"})):
        rows = [run("one", args.cache, env) for _ in range(3)]
        result["one " + label] = rows
        for i, r in enumerate(rows):
            if "error" in r:
                print(f"one ({label}) process {i + 1}: ERROR {r['error']}")
                continue
            stages = ", ".join(f"{k} {v * 1e3:.3f}" for k, v in r["trace"].items())
            print(
                f"one warm CUDA load ({label}), process {i + 1}: {r['seconds'] * 1e3:.3f} ms"
                f" [{stages}]"
            )
    print("mapped after jax.devices('gpu'):", result["one lazy"][0].get("runtime_after_backend"))
    alls = [
        run("all", args.cache, order="reverse" if i % 2 else "forward") for i in range(args.rounds)
    ]
    settled = [run("all", args.cache, order="settled") for _ in range(2)]
    ok = [a for a in alls if "error" not in a]
    if ok:
        total = statistics.median(a["seconds"] * 1e3 for a in ok)
        dlopen = statistics.median(a["dlopen"] * 1e3 for a in ok)
        runs = ", ".join(f"{a['seconds'] * 1e3:.1f}" for a in ok)
        loop = statistics.median(a["loop_seconds"] * 1e3 for a in ok)
        print(
            f"all {ok[0]['modules']} modules warm after JAX's GPU backend: {total:.1f} ms "
            f"(runs {runs}), dlopen + dlsym {dlopen:.1f} ms, the rest {total - dlopen:.1f} ms;"
            f" the loop with the probe's bookkeeping {loop:.1f} ms"
        )
        for key in sorted(ok[0].get("split", {})):
            median = statistics.median(a["split"].get(key, 0.0) * 1e3 for a in ok)
            print(f"  {key}: {median:.2f} ms (summed over modules, median)")
        print("libcublas mapped after the cuBLAS module:", ok[0]["after_cublas_module"])
        print("transparent huge pages:", ok[0].get("thp"))
        print(
            "slowest warm index stages (module, position, ms, whole load ms,"
            " [read record, decode, watched stats ms, [minor faults, major faults, voluntary"
            " and involuntary switches]]), each process:"
        )
        for a in ok:
            print(f"  {a['order']}:")
            for row in a.get("slowest_warm_index", [])[:4]:
                print("    ", row)
    else:
        print("all: ERROR", alls[0]["error"])
    for a in settled:
        if "error" in a:
            print("settled: ERROR", a["error"])
            continue
        slowest = a.get("slowest_warm_index", [])[:2]
        total = a["seconds"] * 1e3
        print(f"all, 1 s after JAX's backend started: {total:.1f} ms; slowest {slowest}")
    result["all"] = alls
    result["settled"] = settled
    result["order"] = run("order", args.cache)
    print("cuBLAS module before JAX's backend:", json.dumps(result["order"]))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

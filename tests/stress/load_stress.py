"""Load stress for jaxcc's build cache, with figures.

    python tests/stress/load_stress.py same-module [--processes 16] [--threads 16]
    python tests/stress/load_stress.py many-modules [--modules 200] [--workers N]
    python tests/stress/load_stress.py many-entries [--entries 1000]

Each scenario runs real interpreters, real g++ and a real cache directory (a fresh temporary one
unless --cache is given), checks every result, prints a human summary and, as its last line,
`RESULT <json>` for tests/test_load_stress.py to assert on. Exit status 0 means every check held.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

SCALE_SOURCE = (
    "void scale(const jaxcc::Tensor x, jaxcc::Tensor out) {\n"
    "  const float* in = x.data_ptr<float>(); float* o = out.data_ptr<float>();\n"
    "  for (int64_t i = 0; i < x.numel(); ++i) o[i] = FACTOR * in[i];\n"
    "}\n"
)


def scale_source(factor: int, salt: str) -> str:
    return f"// {salt}\n#define FACTOR {factor}.0f\n" + SCALE_SOURCE


# --- same-module: P processes x T threads load one module that is not in the cache yet ---------

SAME_MODULE_CHILD = textwrap.dedent(
    """
    import json, os, sys, threading, time
    import jax, jax.numpy as jnp
    import jaxcc
    name, source, threads, ready, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    x = jnp.arange(8, dtype=jnp.float32)
    jax.block_until_ready(x * 2)  # backend up before the race starts
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.005)
    barrier = threading.Barrier(threads)
    report = {"loads": 0, "built": 0, "correct": 0, "errors": [], "seconds": []}
    lock = threading.Lock()

    def load():
        try:
            barrier.wait()
            begin = time.perf_counter()
            module = jaxcc.load_cpp_inline(name, source, ["scale"])
            y = jax.jit(module.scale)(x)
            elapsed = time.perf_counter() - begin
            ok = [float(v) for v in y] == [7.0 * i for i in range(8)]
            with lock:
                report["loads"] += 1
                report["built"] += 0 if module.cache_hit else 1
                report["correct"] += 1 if ok else 0
                report["seconds"].append(elapsed)
        except Exception as e:  # reported, not lost with the thread
            with lock:
                report["errors"].append(f"{type(e).__name__}: {e}")

    pool = [threading.Thread(target=load) for _ in range(threads)]
    for t in pool: t.start()
    for t in pool: t.join()
    print("CHILD " + json.dumps(report))
    """
)


def compiler_counter(directory: str) -> tuple[str, str]:
    """A g++ wrapper that logs every compile and link, so 'compiled exactly once' is counted at
    the compiler, not inferred from jaxcc's own report."""
    log = os.path.join(directory, "compiler-calls.log")
    wrapper = os.path.join(directory, "counting-g++")
    real = shutil.which(os.environ.get("CXX", "g++")) or "g++"
    with open(wrapper, "w") as f:
        f.write(
            "#!/bin/sh\n"
            'case " $* " in *" -c "*|*" -shared "*) '
            f'echo "$$ $*" >> "{log}";; esac\n'
            f'exec "{real}" "$@"\n'
        )
    os.chmod(wrapper, 0o755)
    return wrapper, log


def same_module(args, cache: str, scratch: str) -> dict:
    name = f"stress_same_{uuid.uuid4().hex[:8]}"
    source = scale_source(7, name)
    wrapper, log = compiler_counter(scratch)
    env = dict(os.environ, JAXCC_CACHE_DIR=cache, CXX=wrapper)
    go = os.path.join(scratch, "go")
    readies = [os.path.join(scratch, f"ready-{i}") for i in range(args.processes)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SAME_MODULE_CHILD, name, source, str(args.threads), r, go],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for r in readies
    ]
    deadline = time.time() + 600
    while not all(os.path.exists(r) for r in readies):
        if any(p.poll() not in (None, 0) for p in procs) or time.time() > deadline:
            for p in procs:
                p.kill()
            raise SystemExit("a loader process died before the race: " + procs[0].communicate()[1])
        time.sleep(0.05)
    begin = time.perf_counter()
    open(go, "w").close()
    children = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        line = next((ln for ln in out.splitlines() if ln.startswith("CHILD ")), None)
        if p.returncode != 0 or line is None:
            children.append({"loads": 0, "built": 0, "correct": 0, "errors": [err[-2000:]]})
        else:
            children.append(json.loads(line[len("CHILD ") :]))
    wall = time.perf_counter() - begin
    with open(log) if os.path.exists(log) else open(os.devnull) as f:
        calls = [ln for ln in f if ln.strip()]
    seconds = sorted(s for c in children for s in c.get("seconds", []))
    return {
        "scenario": "same-module",
        "processes": args.processes,
        "threads": args.threads,
        "loads": sum(c["loads"] for c in children),
        "correct": sum(c["correct"] for c in children),
        "reported_builds": sum(c["built"] for c in children),
        "compiler_compiles": sum(" -c " in f" {c} " for c in calls),
        # The linker's probe (decision 164) links a library of its own, once per process while
        # the toolchain memo has no outcome for this new compiler: not a build of the module.
        "compiler_links": sum(
            " -shared " in f" {c} " and "jaxcc-link-probe" not in c for c in calls
        ),
        "probe_links": sum("jaxcc-link-probe" in c for c in calls),
        "errors": [e for c in children for e in c["errors"]],
        "wall_seconds": round(wall, 2),
        "slowest_load_seconds": round(seconds[-1], 2) if seconds else None,
        "median_load_seconds": round(seconds[len(seconds) // 2], 2) if seconds else None,
    }


# --- many-modules: N distinct modules built, registered and called in one process ---------------


def many_modules(args, cache: str, scratch: str) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import jax
    import jax.numpy as jnp

    import jaxcc

    jaxcc.set_cache_dir(cache)
    salt = uuid.uuid4().hex[:8]
    names = [f"stress_many_{salt}_{i}" for i in range(args.modules)]

    def load(i: int):
        return jaxcc.load_cpp_inline(names[i], scale_source(i + 1, salt), ["scale"])

    begin = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        modules = list(pool.map(load, range(args.modules)))
    build_seconds = time.perf_counter() - begin

    x = jnp.arange(4, dtype=jnp.float32)
    begin = time.perf_counter()

    @jax.jit
    def all_of_them(v):  # one jitted program calling every target
        return [m.scale(v) for m in modules]

    outputs = all_of_them(x)
    call_seconds = time.perf_counter() - begin
    correct = sum(
        [float(v) for v in y] == [(i + 1.0) * k for k in range(4)] for i, y in enumerate(outputs)
    )
    targets = {m.target_name("scale") for m in modules}

    # The same 200 again in a fresh interpreter: all cache hits.
    reload = textwrap.dedent(
        f"""
        import time, jax, jaxcc
        jax.devices()  # backend start-up is not part of a load
        t = time.perf_counter()
        hits = 0
        for i, n in enumerate({names!r}):
            hits += jaxcc.load_cpp_inline(n, "// {salt}\\n#define FACTOR %d.0f\\n" % (i + 1)
                                          + {SCALE_SOURCE!r}, ["scale"]).cache_hit
        print("RELOAD", hits, time.perf_counter() - t)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", reload],
        capture_output=True,
        text=True,
        env=dict(os.environ, JAXCC_CACHE_DIR=cache),
        timeout=600,
    )
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RELOAD")), "RELOAD 0 0")
    _, hits, reload_seconds = line.split()
    return {
        "scenario": "many-modules",
        "modules": args.modules,
        "workers": args.workers,
        "distinct_targets": len(targets),
        "correct": int(correct),
        "build_seconds": round(build_seconds, 1),
        "build_seconds_per_module": round(build_seconds / args.modules, 3),
        "jit_all_seconds": round(call_seconds, 2),
        "warm_reload_hits": int(hits),
        "warm_reload_seconds": round(float(reload_seconds), 3),
        "warm_reload_ms_per_module": round(1000 * float(reload_seconds) / args.modules, 2),
        "reload_stderr": out.stderr[-2000:] if out.returncode else "",
    }


# --- many-entries: the cache with 1,000 entries in it ------------------------------------------

TIMED_LOAD = textwrap.dedent(
    """
    import sys, time, jaxcc, jax.numpy as jnp
    t = time.perf_counter()
    m = jaxcc.load_cpp_inline(sys.argv[1], sys.argv[2], ["scale"])
    load = time.perf_counter() - t
    ok = [float(v) for v in m.scale(jnp.ones(2, jnp.float32))] == [float(sys.argv[3])] * 2
    print("LOAD", int(m.cache_hit), int(ok), load)
    """
)


def timed_load(cache: str, name: str, factor: int, salt: str) -> tuple[bool, bool, float]:
    out = subprocess.run(
        [sys.executable, "-c", TIMED_LOAD, name, scale_source(factor, salt), str(factor)],
        capture_output=True,
        text=True,
        env=dict(os.environ, JAXCC_CACHE_DIR=cache),
        timeout=600,
    )
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("LOAD")), None)
    if line is None:
        raise SystemExit("timed load failed:\n" + out.stderr[-3000:])
    _, hit, ok, seconds = line.split()
    return hit == "1", ok == "1", float(seconds)


def many_entries(args, cache: str, scratch: str) -> dict:
    from jaxcc import _core

    salt = uuid.uuid4().hex[:8]
    # Two real entries; the rest are copies of the first under their own entry names (distinct
    # keys), which is what the directory scan, ls and prune see of real entries.
    first_hit, first_ok, first_build = timed_load(cache, f"stress_entries_{salt}", 3, salt)
    real = [d for d in os.listdir(cache) if d.startswith(f"stress_entries_{salt}-")]
    template = os.path.join(cache, real[0])
    for i in range(args.entries - 1):
        copy = os.path.join(cache, f"stress_filler_{i}-{uuid.uuid4().hex[:24]}")
        shutil.copytree(template, copy, symlinks=True)
        old = time.time() - 86400 * (1 + i % 30)  # spread over a month for LRU
        os.utime(copy, (old, old))

    begin = time.perf_counter()
    listed = _core.cache_list(cache)
    list_seconds = time.perf_counter() - begin

    hit, hit_ok, warm_seconds = timed_load(cache, f"stress_entries_{salt}", 3, salt)
    new_hit, new_ok, cold_seconds = timed_load(cache, f"stress_entries_new_{salt}", 5, salt)
    entries_after_build = len(_core.cache_list(cache))

    # LRU prune down to half the bytes: the entries just used must survive.
    total = sum(row.bytes for row in _core.cache_list(cache))
    begin = time.perf_counter()
    report = _core.cache_prune(cache, total // 2, None)
    prune_seconds = time.perf_counter() - begin
    survivors = {os.path.basename(row.dir) for row in _core.cache_list(cache)}
    recent = {d for d in os.listdir(cache) if d.startswith("stress_entries_")}
    hit_again, hit_again_ok, _ = timed_load(cache, f"stress_entries_new_{salt}", 5, salt)
    return {
        "scenario": "many-entries",
        "requested_entries": args.entries,
        "entries": len(listed),
        "first_build_ok": first_ok and not first_hit,
        "list_seconds": round(list_seconds, 3),
        "warm_load_hit": hit and hit_ok,
        "warm_load_seconds": round(warm_seconds, 4),
        "cold_build_ok": new_ok and not new_hit,
        "cold_build_seconds": round(cold_seconds, 2),
        "entries_after_build": entries_after_build,
        "prune_removed": report.entries_removed,
        "prune_seconds": round(prune_seconds, 3),
        "recent_entries_survived_prune": len(recent) == 2 and recent <= survivors,
        "hit_after_prune": hit_again and hit_again_ok,
    }


def check(result: dict) -> list[str]:
    """The conditions each scenario must meet; an empty list means it held."""
    problems = []
    scenario = result["scenario"]
    if scenario == "same-module":
        expected = result["processes"] * result["threads"]
        if result["errors"]:
            problems.append(f"{len(result['errors'])} loads failed: {result['errors'][:3]}")
        if result["loads"] != expected or result["correct"] != expected:
            problems.append(f"{result['correct']}/{expected} loads computed the right result")
        if result["reported_builds"] != 1:
            problems.append(f"{result['reported_builds']} loads reported a build, expected 1")
        # One build: the kernel unit, the wrapper and the frame runtime (decision 128), one link.
        if result["compiler_compiles"] != 3 or result["compiler_links"] != 1:
            problems.append(
                f"compiler ran {result['compiler_compiles']} compiles and "
                f"{result['compiler_links']} links, expected 3 and 1 (one build)"
            )
    elif scenario == "many-modules":
        n = result["modules"]
        if result["correct"] != n or result["distinct_targets"] != n:
            problems.append(
                f"{result['correct']}/{n} modules correct, {result['distinct_targets']}"
            )
        if result["warm_reload_hits"] != n:
            problems.append(f"warm reload hit {result['warm_reload_hits']}/{n}")
    else:
        for flag in (
            "first_build_ok",
            "warm_load_hit",
            "cold_build_ok",
            "recent_entries_survived_prune",
            "hit_after_prune",
        ):
            if not result[flag]:
                problems.append(f"{flag} is false")
        if result["entries"] != result["requested_entries"]:
            problems.append(
                f"cache listed {result['entries']} entries, expected {result['requested_entries']}"
            )
        if result["prune_removed"] <= 0:
            problems.append("prune removed nothing")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="scenario", required=True)
    same = sub.add_parser("same-module")
    same.add_argument("--processes", type=int, default=16)
    same.add_argument("--threads", type=int, default=16)
    many = sub.add_parser("many-modules")
    many.add_argument("--modules", type=int, default=200)
    many.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    entries = sub.add_parser("many-entries")
    entries.add_argument("--entries", type=int, default=1000)
    for p in (same, many, entries):
        p.add_argument("--cache", help="cache directory (default: a fresh temporary one)")
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="jaxcc-stress-")
    cache = args.cache or os.path.join(scratch, "cache")
    try:
        run = {"same-module": same_module, "many-modules": many_modules}.get(
            args.scenario, many_entries
        )
        result = run(args, cache, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result["problems"] = check(result)
    for key, value in result.items():
        print(f"  {key:32} {value}")
    print("RESULT " + json.dumps(result))
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())

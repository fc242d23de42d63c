"""A long notebook stays bounded (issue 49): N edit-and-reload cycles of one module in one
process, each followed by a jitted call of a function that reaches the module through a global,
and the process's resident memory after the first cycle and after the last.

Run:  python benchmarks/bench_reload_memory.py [--cycles 200] [--keep-caches]
`--keep-caches` makes jaxcc's reload leave JAX's caches alone (what jaxcc did before decision
190) and jits a new function each cycle (the only way to new code then), for the side-by-side
figure. Prints one JSON line: the RSS after cycle 1 and after the
last, their difference, and the seconds per cycle. Each cycle builds a new library (g++), so 200
cycles take a few minutes on 2 cores; the cache is a private temporary directory, removed."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
import warnings


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


SOURCE = r"""
#define OFFSET {offset}
void add(const jaxcc::Tensor x, jaxcc::Tensor out) {{
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + OFFSET;
}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--keep-caches", action="store_true")
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxcc
    from jaxcc.call import ffi_targets

    if args.keep_caches:
        ffi_targets._forget_old_traces = lambda: None
    cache = tempfile.mkdtemp(prefix="jaxcc-bench-reload-")
    jaxcc.set_cache_dir(cache)
    warnings.simplefilter("ignore", jaxcc.ReloadWarning)
    state = {}

    def model(x):
        return state["mod"].add(x) * 2.0

    jitted = jax.jit(model)
    x = jnp.ones(1024, jnp.float32)
    first = None
    started = time.perf_counter()
    try:
        for cycle in range(1, args.cycles + 1):
            state["mod"] = jaxcc.load_cpp_inline(
                "bench_reload", SOURCE.format(offset=cycle), ["add"]
            )
            if args.keep_caches:  # the old way to new code: a new function to jit, each edit
                jitted = jax.jit(lambda x, mod=state["mod"]: mod.add(x) * 2.0)
            got = float(jitted(x)[0])
            if got != (1.0 + cycle) * 2.0:
                raise SystemExit(f"cycle {cycle}: the jitted call ran old code ({got})")
            if cycle == 1:
                first = rss_mib()
            if cycle % 25 == 0:  # progress, so a run cut off keeps its figures
                print(f"cycle {cycle}: {rss_mib():.1f} MiB", flush=True)
        last = rss_mib()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    seconds = (time.perf_counter() - started) / args.cycles
    print(
        json.dumps(
            {
                "cycles": args.cycles,
                "clears_jax_caches": not args.keep_caches,
                "rss_after_first_mib": round(first, 1),
                "rss_after_last_mib": round(last, 1),
                "growth_mib": round(last - first, 1),
                "seconds_per_cycle": round(seconds, 3),
                "jax": jax.__version__,
                "numpy": np.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()

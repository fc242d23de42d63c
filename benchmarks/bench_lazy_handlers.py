"""What lazy handlers (decision 137) cost and save, on one warm CPU module: the load, the first
call (XLA compiles, and the lazy side also maps the library there), and the per-call time of a
16-float add_one in a jitted fori_loop of 2000 calls, where every call goes through the stub.
Fresh processes, JAXCC_LAZY_LOAD=1 (the stub) and =0 (XLA holds the real handler) interleaved,
medians over --rounds processes each.

Run:  python benchmarks/bench_lazy_handlers.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

PROBE = textwrap.dedent(
    """
    import json, time
    import jax, jax.numpy as jnp, numpy as np
    import jaxcc
    SOURCE = r'''
    #include "jaxcc/jaxcc.h"
    void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
      const float* in = x.data_ptr<float>();
      float* o = out.data_ptr<float>();
      for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
    }
    '''
    x = jnp.zeros(16, jnp.float32)
    t0 = time.perf_counter()
    mod = jaxcc.load_cpp_inline("lazy_bench_add_one", SOURCE, ["add_one"])
    t1 = time.perf_counter()
    calls = 2000
    loop = jax.jit(lambda x: jax.lax.fori_loop(0, calls, lambda i, y: mod.add_one(y), x))
    loop(x).block_until_ready()
    t2 = time.perf_counter()
    runs = []
    for _ in range(15):
        t = time.perf_counter()
        loop(x).block_until_ready()
        runs.append((time.perf_counter() - t) / calls)
    print(json.dumps({"load_ms": (t1 - t0) * 1e3, "first_call_ms": (t2 - t1) * 1e3,
                      "per_call_ns": min(runs) * 1e9, "hit": mod.cache_hit}))
    """
)


def run(cache: str, lazy: str) -> dict:
    env = dict(os.environ, JAXCC_CACHE_DIR=cache, JAXCC_LAZY_LOAD=lazy)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        run(cache, "0")  # builds the entry and writes the warm record
        rows = {"1": [], "0": []}
        for _ in range(args.rounds):
            for lazy in ("1", "0"):
                report = run(cache, lazy)
                assert report["hit"], report
                rows[lazy].append(report)
    result = {}
    for lazy, label in (("1", "lazy (stub)"), ("0", "eager (JAXCC_LAZY_LOAD=0)")):
        result[label] = {
            key: statistics.median(r[key] for r in rows[lazy])
            for key in ("load_ms", "first_call_ms", "per_call_ns")
        }
    lazy, eager = result["lazy (stub)"], result["eager (JAXCC_LAZY_LOAD=0)"]
    for label, row in result.items():
        print(
            f"{label:28s} load {row['load_ms']:.3f} ms, first call {row['first_call_ms']:.2f} ms, "
            f"per call {row['per_call_ns']:.0f} ns"
        )
    print(
        f"lazy / eager: load {lazy['load_ms'] / eager['load_ms']:.2f}x, first call "
        f"{lazy['first_call_ms'] / eager['first_call_ms']:.2f}x, per call "
        f"{lazy['per_call_ns'] / eager['per_call_ns']:.3f}x"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()

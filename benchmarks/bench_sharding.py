"""A row kernel on 8 forced CPU devices, an (8·R × C) float32 array sharded over rows: per-call
time of `jax.jit(kernel)` with a sharding rule (each device normalises its own rows) against the
same kernel without one (XLA all-gathers the input and every device normalises every row), and the
bytes the compiled programs move through collectives, read from the compiled HLO.

Run:  python benchmarks/bench_sharding.py [--rounds N] [--sizes R:C,R:C]
Prints one row per size; figures go to benchmarks/RESULTS.md by hand. Sets XLA_FLAGS itself, so
run it in a fresh process.
"""

from __future__ import annotations

import os

DEVICES = 8
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES}"

import argparse  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "sharding"))
import kernels  # noqa: E402  (the row_norm kernels of the sharding tests)

import jaxcc  # noqa: E402
from jaxcc.sharding import rule  # noqa: E402

COLLECTIVE = re.compile(
    r"=\s*(\w+)\[([\d,]*)\][^=]*?\b(all-gather|all-to-all|all-reduce|collective-permute|"
    r"reduce-scatter)(?:-start)?\("
)
DTYPE_BYTES = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2, "s32": 4, "u32": 4, "s64": 8, "pred": 1}


def collective_bytes(hlo: str) -> tuple[int, int]:
    """(number of collectives, bytes they write per device) in a compiled HLO module."""
    count = total = 0
    for dtype, dims, _ in COLLECTIVE.findall(hlo):
        count += 1
        total += int(np.prod([int(d) for d in dims.split(",") if d] or [1])) * DTYPE_BYTES.get(
            dtype, 4
        )
    return count, total


def time_calls(f, x, calls: int) -> float:
    # Each call waits for the previous one: queuing many calls that all-gather on 8 CPU devices
    # sharing 2 cores can starve XLA:CPU's collective rendezvous (it aborts after 40 s).
    f(x).block_until_ready()
    start = time.perf_counter()
    for _ in range(calls):
        f(x).block_until_ready()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", default="64:256,2048:256")
    args = parser.parse_args()
    assert len(jax.devices()) == DEVICES
    mod = jaxcc.load_cpp_inline("bench_sharding", kernels.SOURCE, ["row_norm", "row_norm_plain"])
    jaxcc.set_sharding_check("off")
    warnings.simplefilter("ignore", jaxcc.ShardingWarning)
    mesh = jax.make_mesh((DEVICES,), ("x",))
    # custom_partitioning is the lowering on Auto axes; on Explicit ones (above) a rule beyond
    # leading dimensions runs under shard_map while tracing (decision 82).
    auto = jax.make_mesh((DEVICES,), ("x",), axis_types=(AxisType.Auto,))
    print(f"jax {jax.__version__}, jaxcc {jaxcc.__version__}, {DEVICES} CPU devices")
    print(
        "rows x cols | rule, batch partitioner | rule, custom_partitioning | without rule | "
        "ratio batch | ratio cp | collectives batch / cp / without (count, bytes written per "
        "device)"
    )
    for size in args.sizes.split(","):
        r, c = (int(v) for v in size.split(":"))
        host = np.random.default_rng(0).uniform(1, 2, (DEVICES * r, c)).astype(np.float32)
        x = jax.device_put(host, NamedSharding(mesh, P("x", None)))
        x_auto = jax.device_put(host, NamedSharding(auto, P("x", None)))
        ruled, plain = jax.jit(mod.row_norm), jax.jit(mod.row_norm_plain)
        # The same rule through custom_partitioning instead of XLA's batch partitioner: traced
        # (on its first call) with the batch path switched off.
        ruled_cp = jax.jit(lambda a: mod.row_norm(a))
        rule.BATCH_PATH[0] = False
        ruled_cp(x_auto).block_until_ready()
        assert "CustomSPMDPartitioning" in ruled_cp.lower(x_auto).as_text()
        hlo_cp_text = ruled_cp.lower(x_auto).compile().as_text()
        rule.BATCH_PATH[0] = True
        for f, arg in ((ruled, x), (ruled_cp, x_auto)):
            np.testing.assert_allclose(np.asarray(f(arg)), np.asarray(plain(x)), rtol=1e-6)
        calls = max(5, int(4e6 // host.size))
        times = {"batch": [], "cp": [], "plain": []}
        for _ in range(args.rounds):  # interleaved, so every side sees the same machine load
            times["batch"].append(time_calls(ruled, x, calls))
            times["cp"].append(time_calls(ruled_cp, x_auto, calls))
            times["plain"].append(time_calls(plain, x, calls))
        a, a2, b = (statistics.median(times[k]) for k in ("batch", "cp", "plain"))
        hlo_rule = collective_bytes(ruled.lower(x).compile().as_text())
        hlo_cp = collective_bytes(hlo_cp_text)
        hlo_plain = collective_bytes(plain.lower(x).compile().as_text())
        print(f"{DEVICES * r} x {c} | {a * 1e6:.1f} µs | {a2 * 1e6:.1f} µs | {b * 1e6:.1f} µs | "
              f"{b / a:.2f}x | {b / a2:.2f}x | {hlo_rule} / {hlo_cp} / {hlo_plain}")  # fmt: skip


if __name__ == "__main__":
    main()

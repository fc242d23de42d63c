"""What tuning measures, wherever it runs (the tuning child, runner.py, or this process for a
variant that cannot be isolated): a variant's plain call, its outputs against the reference's,
interleaved timing rounds, and the decision from the timings with noise measured, not decided on
(decisions 156b, 193)."""

from __future__ import annotations

import math
import statistics
import time

# Timing: calls before measuring (the first compiles), then at least MIN_RUNS and at most
# MAX_RUNS measured calls, stopping once a variant has had TARGET_S of measured time.
WARMUP = 2
MIN_RUNS = 5
MAX_RUNS = 50
TARGET_S = 0.2
# A decision whose fastest variant spreads (IQR / median of its calls) more than this was made
# under load: it is marked `noisy` and retimed by the next process (decision 193).
NOISY_SPREAD = 0.25
# Breaking a tie for the reference (or the first configuration) may cost at most this fraction
# over the fastest median: wider notches on a busy machine must not buy a slower kernel.
TIE_COST = 0.02


def timed_call(fn, outs, attributes):
    """The variant's plain FFI call: no sharding rule (timing runs on one device, and may run
    inside a shard's partitioning, where a nested custom_partitioning would not do)."""
    import jax

    if fn.has_scratch:
        return lambda *a: fn(*a, outs=outs, **attributes)
    converted = fn._convert_attributes(attributes)

    def call(*a):
        types, _ = fn._output_types(a, outs)
        return jax.ffi.ffi_call(fn.target, types, vmap_method=fn.vmap_method)(*a, **converted)

    return call


def run_once(run, xs):
    import jax
    import numpy as np

    out = jax.block_until_ready(run(*xs))
    leaves = out if isinstance(out, (list, tuple)) else [out]
    return [np.asarray(leaf) for leaf in leaves]


def compare(expected, result, rtol: float, atol: float) -> str:
    """'' when `result` matches the reference's outputs: integers and bools exactly, floats
    within atol + rtol * (the largest magnitude of that reference output). Relative to the
    output's scale, not each element's: a blocked sum reorders the additions, and an element
    that cancels to near zero carries the rounding of the large terms it summed."""
    import numpy as np

    for i, (want, got) in enumerate(zip(expected, result, strict=True)):
        if want.shape != got.shape:
            return f"output {i + 1} has shape {got.shape}, the reference {want.shape}"
        if want.dtype.kind in "biu":
            if not np.array_equal(want, got):
                return f"output {i + 1} differs from the reference's (integers: exactly)"
            continue
        want64 = want.astype(np.complex128)
        diff = np.abs(got.astype(np.complex128) - want64)
        finite = np.isfinite(want64)
        if not np.array_equal(finite, np.isfinite(got.astype(np.complex128))):
            return f"output {i + 1} has non-finite values where the reference has none"
        scale = float(np.max(np.abs(want64[finite]), initial=0.0))
        worst = float(np.max(diff[finite], initial=0.0))
        if worst > atol + rtol * scale:
            return (
                f"output {i + 1} differs from the reference by up to {worst:.3g} "
                f"(largest reference magnitude {scale:.3g})"
            )
    return ""


def time_rounds(runs: dict, xs, deadline: float | None, at=None) -> tuple[dict, bool]:
    """Seconds per call of each run, every sample. Interleaved rounds (one call of each variant
    per round) so that a burst of load from other processes falls on every variant alike; at
    least MIN_RUNS rounds, then rounds until each has about TARGET_S of samples or MAX_RUNS.
    Past `deadline` (time.time()) the rounds done so far count. `at(tag)` is told which variant
    is about to run (the tuning child's watchdog names a hang by it)."""
    import jax

    for tag, run in runs.items():
        for _ in range(WARMUP):
            if at is not None:
                at(tag)
            jax.block_until_ready(run(*xs))
    samples: dict = {tag: [] for tag in runs}
    cut = False
    for rounds in range(MAX_RUNS):
        for tag, run in runs.items():
            if at is not None:
                at(tag)
            t0 = time.perf_counter()
            jax.block_until_ready(run(*xs))
            samples[tag].append(time.perf_counter() - t0)
        if rounds + 1 >= MIN_RUNS and min(sum(v) for v in samples.values()) >= TARGET_S:
            break
        if deadline is not None and time.time() > deadline:
            cut = len(runs) > 1 and rounds + 1 < MIN_RUNS
            break
    return samples, cut


def summary(values: list[float]) -> dict:
    """Median, interquartile range and their ratio (`spread`) of one variant's call times."""
    median = statistics.median(values)
    if len(values) >= 4:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    else:
        q1 = q3 = median
    iqr = max(q3 - q1, 0.0)
    return {"median": median, "iqr": iqr, "spread": iqr / median if median > 0 else 0.0,
            "n": len(values)}  # fmt: skip


def ties_with(best: dict, other: dict) -> bool:
    """Whether two variants' medians are within noise of each other: their box-plot notches
    (median +- 1.58 IQR / sqrt(n), McGill, Tukey and Larsen 1978) overlap."""
    reach = 1.58 * (best["iqr"] / math.sqrt(best["n"]) + other["iqr"] / math.sqrt(other["n"]))
    return other["median"] - best["median"] <= reach


def decide(stats: dict, order: list[str], reference: str) -> tuple[str, list[str]]:
    """(chosen tag, the tags tied with the fastest). The fastest median wins unless others are
    within its noise (a tie); a tie goes to the reference, else to the first tag in candidate
    order (`order`), among the tied ones whose median is within TIE_COST of the fastest's, so
    that breaking a tie never costs more than that (decision 193)."""
    fastest = min(stats, key=lambda t: stats[t]["median"])
    tied = [t for t in order if t in stats and ties_with(stats[fastest], stats[t])]
    if len(tied) <= 1:
        return fastest, []
    limit = stats[fastest]["median"] * (1 + TIE_COST)
    close = [t for t in tied if stats[t]["median"] <= limit]
    return (reference if reference in close else close[0]), tied

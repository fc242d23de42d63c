"""What tuning measures, wherever it runs (the tuning child, runner.py, or this process for a
variant that cannot be isolated): a variant's plain call, its outputs against the reference's,
interleaved timing rounds, and the decision from the timings with noise measured, not decided on:
each variant compared with the fastest round by round (decisions 156b, 193, 233)."""

from __future__ import annotations

import math
import statistics
import time

# Timing: calls before measuring (the first compiles), then at least MIN_RUNS and at most
# MAX_RUNS measured calls, stopping once a variant has had TARGET_S of measured time. Rounds so
# short that MAX_RUNS of them take under SHORT_S go on until they have taken SHORT_S (at most
# MAX_ROUNDS): fifty rounds of a 40 us kernel are 20 ms, too few to tell 3 % apart on a shared
# machine, and cheap to multiply (decision 258).
WARMUP = 2
MIN_RUNS = 5
MAX_RUNS = 50
TARGET_S = 0.2
SHORT_S = 0.15
MAX_ROUNDS = 2000
# A decision whose fastest variant spreads (IQR / median of its calls) more than this was made
# under load: it is marked `noisy` and retimed by the next process (decision 193).
NOISY_SPREAD = 0.25
# Breaking a tie for the reference may cost at most this fraction over the fastest median:
# wider notches on a busy machine must not buy a slower kernel, and the goal is 3 % of the best
# (decision 259: at 2 %, with the first tied configuration in candidate order next, the CSR
# benchmark's smallest key chose variants 3-5 % slower in 15 of 16 decisions).
TIE_COST = 0.01
# Variants tied with the fastest and at most this much slower (paired ratio) get more rounds,
# for at most EXTRA times the time the rounds before took (the cost of isolation and timing
# together stays within issue 51's 1.5x).
CLOSE = 0.10
EXTRA = 0.25


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


def _round(runs: dict, order: list, xs, samples: dict, at) -> None:
    """One call of each of `order`'s variants, timed."""
    import jax

    for tag in order:
        if at is not None:
            at(tag)
        t0 = time.perf_counter()
        jax.block_until_ready(runs[tag](*xs))
        samples[tag].append(time.perf_counter() - t0)


def time_rounds(runs: dict, xs, deadline: float | None, at=None) -> tuple[dict, bool]:
    """Seconds per call of each run, every sample; sample i of every variant comes from round i.
    Interleaved rounds (one call of each variant per round, the order rotating from round to
    round) so that a burst of load from other processes falls on every variant alike and no
    variant always runs first: at least MIN_RUNS rounds, then rounds until each has about
    TARGET_S of samples or MAX_RUNS, and past MAX_RUNS until the rounds have taken SHORT_S (or
    MAX_ROUNDS). Then the variants still tied with the fastest (paired ratios, decision 233) get
    more rounds among themselves, for at most EXTRA of the time spent so far, until the tie is
    resolved or as many rounds again (at least MAX_RUNS). Past `deadline` (time.time()) the
    rounds done so far count. `at(tag)` is told which variant is about to run (the tuning
    child's slot and watchdog name a crash or hang by it)."""
    import jax

    for tag, run in runs.items():
        for _ in range(WARMUP):
            if at is not None:
                at(tag)
            jax.block_until_ready(run(*xs))
    tags = list(runs)
    samples: dict = {tag: [] for tag in runs}
    cut = False
    start = time.perf_counter()
    for rounds in range(MAX_ROUNDS):
        turn = rounds % len(tags)
        _round(runs, tags[turn:] + tags[:turn], xs, samples, at)
        if rounds + 1 >= MIN_RUNS and min(sum(v) for v in samples.values()) >= TARGET_S:
            break
        if rounds + 1 >= MAX_RUNS and time.perf_counter() - start >= SHORT_S:
            break
        if deadline is not None and time.time() > deadline:
            return samples, len(runs) > 1 and rounds + 1 < MIN_RUNS
    first = len(samples[tags[0]])
    extra_until = time.perf_counter() + EXTRA * (time.perf_counter() - start)
    contenders = _contenders(samples)
    # Looking again costs sorting every variant's ratios: every MIN_RUNS rounds, or every tenth
    # of the rounds so far where there were many.
    every = max(MIN_RUNS, first // 10)
    for rounds in range(max(MAX_RUNS, first)):
        if len(contenders) < 2 or time.perf_counter() > extra_until:
            break
        if deadline is not None and time.time() > deadline:
            cut = True
            break
        turn = rounds % len(contenders)
        _round(runs, contenders[turn:] + contenders[:turn], xs, samples, at)
        if rounds % every == every - 1:  # only ever fewer: sample i stays round i's
            contenders = [t for t in _contenders(samples) if t in contenders]
    return samples, cut


def _contenders(samples: dict) -> list[str]:
    """The fastest variant and those whose paired ratio to it is within noise of 1 and within
    CLOSE of it: where more rounds may change the decision. Empty when nothing is tied."""
    stats = paired(samples)
    fastest = min(stats, key=lambda t: stats[t]["ratio"])
    tied = [t for t in stats if t != fastest and stats[t]["ratio"] <= 1 + CLOSE
            and ties_with(_ratio_view(stats[fastest]), _ratio_view(stats[t]))]  # fmt: skip
    return [fastest, *tied] if tied else []


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


def paired(samples: dict) -> dict:
    """Each variant's summary with its call time relative to the fastest, round by round: the
    median and IQR of t_variant / t_fastest over the rounds both ran, `pairs` of them. A burst of
    load that slows one round slows both calls of a pair, so the ratios spread far less than
    the times do. The fastest is the variant whose median ratio to the fastest by median time
    is lowest."""
    stats = {tag: summary(v) for tag, v in samples.items()}
    by_time = min(stats, key=lambda t: stats[t]["median"])
    pivot = min(samples, key=lambda t: _ratios(samples[t], samples[by_time])[0])
    for tag, values in samples.items():
        ratio, iqr, n = _ratios(values, samples[pivot])
        stats[tag].update(ratio=ratio, ratio_iqr=iqr, pairs=n)
    return stats


def _ratios(values: list[float], base: list[float]) -> tuple[float, float, int]:
    n = min(len(values), len(base))
    if values is base:
        return 1.0, 0.0, n
    ratios = [v / b for v, b in zip(values[:n], base[:n], strict=True) if b > 0]
    if not ratios:
        return 1.0, 0.0, 0
    median = statistics.median(ratios)
    if len(ratios) >= 4:
        q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    else:
        q1 = q3 = median
    return median, max(q3 - q1, 0.0), len(ratios)


def _ratio_view(stat: dict) -> dict:
    return {"median": stat["ratio"], "iqr": stat["ratio_iqr"], "n": max(stat["pairs"], 1)}


def ties_with(best: dict, other: dict) -> bool:
    """Whether two variants' medians are within noise of each other: their box-plot notches
    (median +- 1.58 IQR / sqrt(n), McGill, Tukey and Larsen 1978) overlap."""
    reach = 1.58 * (best["iqr"] / math.sqrt(best["n"]) + other["iqr"] / math.sqrt(other["n"]))
    return other["median"] - best["median"] <= reach


def decide(stats: dict, order: list[str], reference: str) -> tuple[str, list[str]]:
    """(chosen tag, the tags tied with the fastest, in candidate order `order`). The fastest
    wins unless others are within its noise (a tie); a tie goes to the reference when it is
    tied and within TIE_COST of the fastest, else to the fastest (decisions 193, 259: the first
    tied configuration in candidate order was next, and chose variants the tuner measured a
    little slower, as a rule, over the fastest). With paired ratios (`paired`, decision 233)
    the fastest and the ties are judged on each variant's ratio to the fastest (whose own is
    exactly 1), else on the medians."""
    if all("ratio" in s for s in stats.values()):
        stats = {t: _ratio_view(s) for t, s in stats.items()}
    fastest = min(stats, key=lambda t: stats[t]["median"])
    tied = [t for t in order if t in stats and ties_with(stats[fastest], stats[t])]
    if len(tied) <= 1:
        return fastest, []
    close = reference in tied and stats[reference]["median"] <= stats[fastest]["median"] * (
        1 + TIE_COST
    )
    return (reference if close else fastest), tied

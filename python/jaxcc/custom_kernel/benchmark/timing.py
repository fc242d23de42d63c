"""Timing one jitted function: warm-up, then n_runs samples of n_batch_per_run calls each."""

from __future__ import annotations

import dataclasses
import statistics
import time


@dataclasses.dataclass
class Timing:
    """Per-call times in milliseconds over the timed runs, and the function's first output."""

    median_ms: float
    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    output: object = None


def benchmark_function(fn, n_warmup: int, n_runs: int, n_batch_per_run: int = 1, data=()):
    """Times `fn(*data)`. Every timed run issues `n_batch_per_run` calls back to back (each with
    its own output, so none can be merged away), then waits for all of them; the per-call time is
    the run's time divided by the calls. The first call (compilation) is never timed."""
    import jax

    output = jax.block_until_ready(fn(*data))
    for _ in range(n_warmup):
        jax.block_until_ready(fn(*data))
    samples = []
    for _ in range(n_runs):
        start = time.perf_counter()
        results = [fn(*data) for _ in range(n_batch_per_run)]
        jax.block_until_ready(results)
        samples.append((time.perf_counter() - start) * 1e3 / n_batch_per_run)
    return Timing(
        median_ms=statistics.median(samples),
        mean_ms=statistics.fmean(samples),
        std_ms=statistics.pstdev(samples) if len(samples) > 1 else 0.0,
        min_ms=min(samples),
        max_ms=max(samples),
        output=output,
    )

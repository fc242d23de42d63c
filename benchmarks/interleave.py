"""Per-call times of several jitted cases measured in turns, round by round, so that clock,
thermal and load drift reach every case alike. Callers reduce each case's rounds as their
figure needs: the fastest round for a bandwidth, the median for a per-call cost."""

from __future__ import annotations

import time

import jax


def per_call_samples(cases, repeats: int, rounds: int) -> list[list[float]]:
    """For each (fn, args) case, the seconds per call of each round (`repeats` calls, then one
    wait for the last result). Every case runs once first: compile, instantiate, build state."""
    for fn, args in cases:
        jax.block_until_ready(fn(*args))
    samples: list[list[float]] = [[] for _ in cases]
    for _ in range(rounds):
        for i, (fn, args) in enumerate(cases):
            start = time.perf_counter()
            for _ in range(repeats):
                out = fn(*args)
            jax.block_until_ready(out)
            samples[i].append((time.perf_counter() - start) / repeats)
    return samples

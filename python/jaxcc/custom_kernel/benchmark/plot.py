"""Plotting a BenchmarkResult with matplotlib (no display needed)."""

from __future__ import annotations

import os

from jaxcc.errors import SpecError


def plot_result(result, path=None, *, title=None):
    try:
        # A bare Figure (no pyplot) renders with Agg and never opens a window.
        from matplotlib.figure import Figure
    except ImportError:
        raise SpecError("BenchmarkResult.plot needs matplotlib: pip install matplotlib") from None

    records = [r for r in result.records if r.success and r.median_ms is not None]
    groups = list(dict.fromkeys(f"{r.primitive}\n{r.label}" for r in records))
    backends = list(dict.fromkeys(r.backend for r in records))
    figure = Figure(figsize=(max(4.0, 1.6 * len(groups) + 2), 3.6), layout="constrained")
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(backends))
    for b_index, backend in enumerate(backends):
        xs, heights, low, high = [], [], [], []
        for g_index, group in enumerate(groups):
            match = [r for r in records if f"{r.primitive}\n{r.label}" == group]
            match = [r for r in match if r.backend == backend]
            if not match:
                continue
            r = match[0]
            xs.append(g_index + (b_index - (len(backends) - 1) / 2) * width)
            heights.append(r.median_ms)
            low.append(r.median_ms - r.min_ms)
            high.append(r.max_ms - r.median_ms)
        axes.bar(xs, heights, width, yerr=[low, high], capsize=3, label=backend)
    axes.set_xticks(range(len(groups)), groups, fontsize=8)
    axes.set_ylabel("median time per call (ms)")
    axes.set_title(title or f"{result.primitive_name or 'benchmark'} ({len(records)} timings)")
    if backends:
        axes.legend(fontsize=8)
    if path is not None:
        path = os.fspath(path)
        figure.savefig(path, format="png", dpi=100)
    return figure

"""Where a load's Python time goes, for the probes that measure it (benchmarks/bench_warm_load.py,
benchmarks/bench_brainevent_corpus.py, scripts/gpu_load_probe.py): wraps jaxcc's own stage
functions in the probe's process and sums each one's seconds under one label. A function an
older jaxcc lacks (bench_warm_load compares versions) is left out."""

from __future__ import annotations

import importlib
import time

# (jaxcc module, attribute, label): the stages of one load, in the order a load runs them. Each
# stage under its module since the Python layer's stages (decision 169) and under the flat name
# an older jaxcc has; whichever the installed jaxcc lacks is left out.
STAGES = (
    ("build.options", "make_request", "py: request build"),
    ("_options", "make_request", "py: request build"),
    ("environment.discovery", "build_environment", "py: build environment"),
    ("_discovery", "build_environment", "py: build environment"),
    ("_core", "load_module", "core (total)"),
    ("call.ffi_targets", "register_module", "py: register with jax"),
    ("_registry", "register_module", "py: register with jax"),
    ("build.load_request", "CompiledModule", "py: CompiledModule"),
    ("_load", "CompiledModule", "py: CompiledModule"),
)


def time_stages(stages: dict, labels=None, after=None) -> None:
    """From now on adds each stage's seconds to `stages[label]`; `labels` limits the stages;
    `after(label)` runs when a stage returns (e.g. to collect the core's own trace)."""
    for module_name, attr, label in STAGES:
        if labels is not None and label not in labels:
            continue
        try:
            owner = importlib.import_module("jaxcc." + module_name)
        except ImportError:
            continue
        inner = getattr(owner, attr, None)
        if inner is not None:
            setattr(owner, attr, _timed(inner, label, stages, after))


def _timed(inner, label, stages, after):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            stages[label] = stages.get(label, 0.0) + time.perf_counter() - t
            if after is not None:
                after(label)

    return wrapper

"""XLACustomKernel.benchmark(): every backend of a platform on every benchmark config."""

from __future__ import annotations

from jaxcc.errors import BackendError, BenchmarkDataFnNotProvidedError, SpecError

from ..kernel_entry import PLATFORMS
from .config import BenchmarkConfig, BenchmarkRecord
from .result import BenchmarkResult
from .timing import benchmark_function


def _check_counts(name: str, n_warmup, n_runs, n_batch_per_run) -> None:
    for what, value, least in (
        ("n_warmup", n_warmup, 0),
        ("n_runs", n_runs, 1),
        ("n_batch_per_run", n_batch_per_run, 1),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise SpecError(
                f"{name}.benchmark: {what} must be an integer >= {least}, got {value!r}"
            )


def _device(name: str, platform: str):
    import jax

    try:
        return jax.devices(platform)[0]
    except RuntimeError:
        raise BackendError(
            f"{name}.benchmark: this process has no {platform!r} device "
            f"(available: {sorted({d.platform for d in jax.devices()})})"
        ) from None


def _compare(reference, output, rtol: float, atol: float) -> tuple[bool, float]:
    import jax
    import numpy as np

    ref_leaves = jax.tree.leaves(reference)
    out_leaves = jax.tree.leaves(output)
    if len(ref_leaves) != len(out_leaves):
        return False, float("inf")
    correct, worst = True, 0.0
    for r, o in zip(ref_leaves, out_leaves, strict=True):
        r, o = np.asarray(r), np.asarray(o)
        if r.shape != o.shape:
            return False, float("inf")
        if r.size:
            diff = np.abs(r.astype(np.float64) - o.astype(np.float64))
            worst = max(worst, float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0)
        correct = correct and bool(np.allclose(o, r, rtol=rtol, atol=atol, equal_nan=True))
    return correct, worst


def _configs(kernel, platform: str) -> list[BenchmarkConfig]:
    configs = kernel._benchmark_data_fn(platform=platform)
    configs = list(configs) if configs is not None else []
    for c in configs:
        if not isinstance(c, BenchmarkConfig):
            raise SpecError(
                f"{kernel.name}: the benchmark data function must return BenchmarkConfig "
                f"objects, got {type(c).__name__}"
            )
    return configs


def run_benchmark(
    kernel,
    *,
    platform,
    n_warmup,
    n_runs,
    n_batch_per_run,
    compare_results,
    rtol,
    atol,
    verbose,
    catch_errors,
    backends,
) -> BenchmarkResult:
    import jax

    name = kernel.name
    if kernel._benchmark_data_fn is None:
        raise BenchmarkDataFnNotProvidedError(
            f"{name}: no benchmark data; register fn(*, platform) -> [BenchmarkConfig, ...] "
            "with def_benchmark_data(fn) first"
        )
    if kernel._call_fn is None:
        raise SpecError(f"{name}: no call function to benchmark; register one with def_call(fn)")
    available = kernel.available_backends(platform)
    if not available:
        having = [p for p in PLATFORMS if kernel.available_backends(p)]
        raise BackendError(
            f"{name}.benchmark: no backends are registered for platform {platform!r}; benchmark "
            f"a platform that has kernels ({', '.join(having) or 'none: use def_kernel first'})"
        )
    chosen = list(available if backends is None else backends)
    unknown = [b for b in chosen if b not in available]
    if unknown or not chosen:
        raise BackendError(
            f"{name}.benchmark: backends {unknown or chosen} are not registered for {platform}; "
            f"registered: {', '.join(available)}"
        )
    _check_counts(name, n_warmup, n_runs, n_batch_per_run)
    device = _device(name, platform)
    default = kernel.get_default(platform)
    preferred_reference = default if default in chosen else chosen[0]

    records: list[BenchmarkRecord] = []
    for config in _configs(kernel, platform):
        args = config.put_args(device)
        outputs: dict[str, object] = {}
        group: list[BenchmarkRecord] = []
        for backend in chosen:
            record = BenchmarkRecord(
                primitive=name,
                platform=platform,
                backend=backend,
                label=config.name,
                n_runs=n_runs,
                n_batch_per_run=n_batch_per_run,
                kernel_kwargs=config.kernel_kwargs,
                data_kwargs=config.data_kwargs,
            )

            def call(*a, _backend=backend, _kw=config.kernel_kwargs):
                return kernel._call_fn(*a, backend=_backend, **_kw)

            try:
                timing = benchmark_function(jax.jit(call), n_warmup, n_runs, n_batch_per_run, args)
            except Exception as exc:
                if not catch_errors:
                    raise
                record.success = False
                record.error = f"{type(exc).__name__}: {exc}"
            else:
                record.median_ms, record.mean_ms = timing.median_ms, timing.mean_ms
                record.std_ms, record.min_ms, record.max_ms = (
                    timing.std_ms,
                    timing.min_ms,
                    timing.max_ms,
                )
                outputs[backend] = timing.output
            if verbose:
                state = f"{record.median_ms:.4f} ms median" if record.success else record.error
                print(f"[{name}] {config.name} / {backend}: {state}")
            group.append(record)
        if compare_results and outputs:
            reference = (
                preferred_reference if preferred_reference in outputs else next(iter(outputs))
            )
            for record in group:
                record.reference_backend = reference
                if record.backend in outputs and len(outputs) > 1:
                    record.correct, record.max_abs_diff = _compare(
                        outputs[reference], outputs[record.backend], rtol, atol
                    )
                    if not record.correct:
                        print(
                            f"[{name}] {config.name}: '{record.backend}' differs from "
                            f"'{reference}' (max abs diff {record.max_abs_diff:.3g})"
                        )
        records.extend(group)
    return BenchmarkResult(records, primitive_name=name)

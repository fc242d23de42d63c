"""The call function, tags and benchmark data of an XLACustomKernel, and its benchmark()."""

from __future__ import annotations

from jaxcc.errors import SpecError, SpecTypeError

from ..kernel_table import UsesKernelTable


class BenchmarkingMixin(UsesKernelTable):
    """def_call / call, def_tags, def_benchmark_data, benchmark.

    Its own state starts at these class-level values; `benchmark` reads the kernel table through
    the public `available_backends` / `get_default`."""

    _call_fn = None
    _tags: tuple[str, ...] = ()
    _benchmark_data_fn = None

    def def_call(self, fn) -> None:
        """Stores the user-facing call function, used by `call()` and `benchmark()`."""
        if not callable(fn):
            raise SpecTypeError(f"{self.name}: def_call needs a callable, got {type(fn).__name__}")
        self._call_fn = fn

    def call(self, *args, **kwargs):
        """Invokes the function given to `def_call`."""
        if self._call_fn is None:
            raise SpecError(f"{self.name}: no call function; register one with def_call(fn)")
        return self._call_fn(*args, **kwargs)

    def def_tags(self, *tags: str) -> None:
        """Replaces the primitive's tags (used by the registry and `jaxcc benchmark --tags`)."""
        if not all(isinstance(t, str) for t in tags):
            raise SpecTypeError(f"{self.name}: tags must be non-empty strings, got {tags!r}")
        if not all(tags):
            raise SpecError(f"{self.name}: tags must be non-empty strings, got {tags!r}")
        self._tags = tuple(dict.fromkeys(tags))

    @property
    def tags(self) -> tuple[str, ...]:
        return self._tags

    def def_benchmark_data(self, fn) -> None:
        """Stores `fn(*, platform) -> list[BenchmarkConfig]` for `benchmark()`."""
        if not callable(fn):
            raise SpecTypeError(
                f"{self.name}: def_benchmark_data needs a callable, got {type(fn).__name__}"
            )
        self._benchmark_data_fn = fn

    def benchmark(
        self,
        *,
        platform: str,
        n_warmup: int = 5,
        n_runs: int = 20,
        n_batch_per_run: int = 1,
        compare_results: bool = True,
        rtol: float = 1e-3,
        atol: float = 1e-3,
        verbose: bool = False,
        catch_errors: bool = True,
        backends=None,
    ):
        """Times every backend of `platform` on every benchmark config; returns a BenchmarkResult
        whose records carry median/mean/std/min times and a correctness verdict."""
        from .run import run_benchmark

        return run_benchmark(
            self,
            platform=platform,
            n_warmup=n_warmup,
            n_runs=n_runs,
            n_batch_per_run=n_batch_per_run,
            compare_results=compare_results,
            rtol=rtol,
            atol=atol,
            verbose=verbose,
            catch_errors=catch_errors,
            backends=backends,
        )

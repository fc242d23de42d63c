"""BenchmarkConfig (one input case) and BenchmarkRecord (one timed backend on one case)."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class BenchmarkConfig:
    """One benchmark case: `args` go to the call function positionally, `kernel_kwargs` as
    keywords; `data_kwargs` only describe the data (sizes, densities) for the result table."""

    name: str
    args: tuple = ()
    kernel_kwargs: dict = dataclasses.field(default_factory=dict)
    data_kwargs: dict = dataclasses.field(default_factory=dict)

    def put_args(self, device=None) -> tuple:
        """The args with every array placed on `device` (others unchanged)."""
        import jax

        def place(value):
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                return jax.device_put(value, device)
            return value

        return tuple(place(a) for a in self.args)


def _plain(value):
    """A JSON/CSV-friendly form of a parameter value (its text when it has no plain form)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


@dataclasses.dataclass
class BenchmarkRecord:
    """Timing of one backend on one config. Times are per call, in milliseconds.

    `correct` is the stored verdict of comparing this backend's outputs with the reference
    backend's (None when not compared or when there is nothing to compare with)."""

    primitive: str
    platform: str
    backend: str
    label: str
    median_ms: float | None = None
    mean_ms: float | None = None
    std_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    n_runs: int = 0
    n_batch_per_run: int = 1
    success: bool = True
    error: str | None = None
    reference_backend: str | None = None
    correct: bool | None = None
    max_abs_diff: float | None = None
    kernel_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    data_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.kernel_kwargs = _plain(dict(self.kernel_kwargs))
        self.data_kwargs = _plain(dict(self.data_kwargs))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


RECORD_FIELDS = [f.name for f in dataclasses.fields(BenchmarkRecord)]

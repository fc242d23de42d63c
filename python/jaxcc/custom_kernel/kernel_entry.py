"""KernelEntry: one registered (backend, platform) implementation of an XLACustomKernel."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

PLATFORMS = ("cpu", "gpu", "tpu")


@dataclasses.dataclass(frozen=True)
class KernelEntry:
    """A kernel generator registered for one backend on one platform.

    `kernel_generator(**params)` returns the function traced into the program: it receives the
    primitive's input arrays and returns its outputs. `vectorized=True` declares that the kernel
    accepts one extra leading batch axis on every input and output, so `jax.vmap` calls it once for
    the whole batch instead of once per element.
    """

    backend: str
    platform: str
    kernel_generator: Callable[..., Callable]
    vectorized: bool = False

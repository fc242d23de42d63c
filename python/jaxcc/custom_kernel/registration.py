"""Registering kernels and choosing each platform's default backend."""

from __future__ import annotations

import numpy as np

from jaxcc.errors import SpecError, SpecTypeError

from .kernel_entry import PLATFORMS, KernelEntry
from .kernel_table import UsesKernelTable


class RegistrationMixin(UsesKernelTable):
    """def_kernel, its per-backend shorthands, and the per-platform defaults (all kept in
    `self.kernel_table`)."""

    def def_kernel(
        self,
        backend: str,
        platform: str,
        kg,
        asdefault: bool = False,
        *,
        vectorized=False,
        sharding=None,
    ) -> None:
        """Registers `kg` as the `backend` implementation on `platform`.

        `kg(**params)` (params: the call's keyword parameters plus `outs`) returns the function
        traced into the program. The first kernel of a platform becomes its default;
        `asdefault=True` makes this one the default. Registering a backend again replaces it.
        `vectorized=True` declares that the kernel handles one extra leading batch axis on every
        input and output, so `jax.vmap` calls it once for the whole batch. `sharding=RULE` sets
        the primitive's sharding rule (as `XLACustomKernel(..., sharding=RULE)`; it holds for every
        backend, so a second, different rule is a SpecError).

        An argument of the wrong type raises `SpecTypeError` (a `TypeError`), a wrong value
        `SpecError` (a `ValueError`).
        """
        if not isinstance(backend, str):
            raise SpecTypeError(
                f"{self.name}: backend must be a non-empty string such as 'numba', got "
                f"{type(backend).__name__} {backend!r}"
            )
        if not backend:
            raise SpecError(f"{self.name}: backend must be a non-empty string, got {backend!r}")
        if not isinstance(platform, str):
            raise SpecTypeError(
                f"{self.name}: platform must be a string, one of {', '.join(PLATFORMS)}; got "
                f"{type(platform).__name__} {platform!r}"
            )
        if platform not in PLATFORMS:
            raise SpecError(
                f"{self.name}: platform must be one of {', '.join(PLATFORMS)}, got {platform!r}"
            )
        if not callable(kg):
            raise SpecTypeError(
                f"{self.name}: the kernel generator for {backend}/{platform} must be callable "
                f"(a function of the call's parameters returning the kernel), got "
                f"{type(kg).__name__}"
            )
        for flag, value in (("asdefault", asdefault), ("vectorized", vectorized)):
            if not isinstance(value, (bool, np.bool_)):
                raise SpecTypeError(
                    f"{self.name}: {flag} must be True or False, got {type(value).__name__} "
                    f"{value!r}"
                )
        if sharding is not None:
            self.set_sharding(sharding)
        entry = KernelEntry(backend, platform, kg, bool(vectorized))
        self.kernel_table.add(entry, bool(asdefault))
        # Eager calls run through jitted binds kept per parameter set; a generator registered
        # again (after a module reload) must reach them too, not only new traces (issue 49).
        forget_eager = getattr(self, "_forget_eager", None)
        if forget_eager is not None:
            forget_eager()

    def def_numba_kernel(self, kg, asdefault: bool = False, *, vectorized=False) -> None:
        """A Numba kernel on the CPU (see `jaxcc.numba_kernel` for the native bridge)."""
        self.def_kernel("numba", "cpu", kg, asdefault, vectorized=vectorized)

    def def_cpp_kernel(self, kg, asdefault: bool = False, *, vectorized=False) -> None:
        """A jaxcc C++ kernel on the CPU: `kg` may return a `load_cpp_inline` module's function,
        whose attributes are then taken from the call's parameters of the same names."""
        self.def_kernel("cpp", "cpu", kg, asdefault, vectorized=vectorized)

    def def_pallas_kernel(self, platform: str, kg, asdefault: bool = False, *, vectorized=False):
        """A Pallas kernel on 'gpu' or 'tpu' (for CPU interpret mode use
        `def_kernel('pallas', 'cpu', kg)` with `interpret=True` in the pallas_call)."""
        if not isinstance(platform, str):
            raise SpecTypeError(
                f"{self.name}: def_pallas_kernel's platform must be 'gpu' or 'tpu', got "
                f"{type(platform).__name__} (the signature is def_pallas_kernel(platform, kg))"
            )
        if platform not in ("gpu", "tpu"):
            raise SpecError(
                f"{self.name}: def_pallas_kernel targets 'gpu' or 'tpu', got {platform!r}; for "
                "Pallas's interpret mode on the CPU use def_kernel('pallas', 'cpu', kg)"
            )
        self.def_kernel("pallas", platform, kg, asdefault, vectorized=vectorized)

    def def_warp_kernel(
        self, kg, asdefault: bool = False, *, platform: str = "gpu", vectorized=False
    ) -> None:
        """A Warp kernel, on the GPU by default (`platform='cpu'` for Warp's CPU backend)."""
        self.def_kernel("warp", platform, kg, asdefault, vectorized=vectorized)

    def def_triton_kernel(self, kg, asdefault: bool = False, *, vectorized=False) -> None:
        """A Triton kernel on the GPU."""
        self.def_kernel("triton", "gpu", kg, asdefault, vectorized=vectorized)

    def def_numba_cuda_kernel(self, kg, asdefault: bool = False, *, vectorized=False) -> None:
        """A Numba-CUDA kernel on the GPU."""
        self.def_kernel("numba_cuda", "gpu", kg, asdefault, vectorized=vectorized)

    def def_cuda_raw_kernel(self, *args, asdefault: bool = False, platform=None, vectorized=False):
        """A jaxcc-compiled (nvcc or g++) kernel: `def_cuda_raw_kernel(kg)` for the GPU, or
        `def_cuda_raw_kernel('cpu', kg)` / `platform='cpu'` for the CPU."""
        if args and isinstance(args[0], str):
            platform, args = args[0], args[1:]
        if len(args) == 2:
            args, asdefault = args[:1], args[1]
        if len(args) != 1:
            raise SpecTypeError(
                f"{self.name}: def_cuda_raw_kernel takes (kg) or (platform, kg), got "
                f"{len(args)} positional arguments"
            )
        platform = platform or "gpu"
        if not isinstance(platform, str):
            raise SpecTypeError(
                f"{self.name}: def_cuda_raw_kernel's platform must be 'cpu' or 'gpu', got "
                f"{type(platform).__name__}"
            )
        if platform not in ("cpu", "gpu"):
            raise SpecError(
                f"{self.name}: def_cuda_raw_kernel targets 'cpu' or 'gpu', got {platform!r}"
            )
        self.def_kernel("cuda_raw", platform, args[0], asdefault, vectorized=vectorized)

    # -- defaults ------------------------------------------------------------------------

    def set_default(self, platform: str, backend: str) -> None:
        """Makes `backend` (already registered for `platform`) the platform's default.

        Takes effect at the next call, including calls of functions `jax.jit` compiled before
        (they trace again once; choosing the earlier default again reuses what was compiled)."""
        self.kernel_table.set_default(platform, backend)

    def get_default(self, platform: str) -> str | None:
        """The default backend of `platform`, or None."""
        return self.kernel_table.default(platform)

    @property
    def defaults(self) -> dict[str, str]:
        """A copy of platform -> default backend."""
        return self.kernel_table.defaults()

    @property
    def _kernels(self) -> dict[str, dict[str, KernelEntry]]:
        """A copy of platform -> backend -> KernelEntry. Private, but brainevent's tutorials read
        it, so code written against brainevent keeps working; use `kernel_table` instead."""
        return self.kernel_table.entries()

    def available_backends(self, platform: str) -> list[str]:
        """Backends registered for `platform`, in registration order ([] if none)."""
        return self.kernel_table.backends(platform)

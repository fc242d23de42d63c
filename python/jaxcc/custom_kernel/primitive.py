"""XLACustomKernel: one JAX primitive whose implementation is chosen per platform and backend."""

from __future__ import annotations

import functools
import threading

import numpy as np

from ..errors import BackendError, CallError, SpecError
from . import lowering, registry
from .benchmark.mixin import BenchmarkingMixin
from .kernel_entry import KernelEntry
from .registration import RegistrationMixin
from .selection import global_backends
from .transforms import TransformsMixin

# Platforms whose lowering is registered up front (a stub until a kernel targets them), so that
# running on a platform without kernels is a typed error that names the platforms with kernels.
_LOWERING_PLATFORMS = {"cpu": ("cpu",), "gpu": ("cuda", "rocm"), "tpu": ("tpu",)}


def _shaped_array(item, where: str):
    from .._jax_compat import ShapedArray

    if not hasattr(item, "shape") or not hasattr(item, "dtype"):
        raise CallError(
            f"{where}: every leaf of outs needs .shape and .dtype (e.g. "
            f"jax.ShapeDtypeStruct((10,), jnp.float32)); got {type(item).__name__}"
        )
    try:
        return ShapedArray(tuple(int(d) for d in item.shape), np.dtype(item.dtype))
    except TypeError as exc:
        raise CallError(f"{where}: cannot read the shape/dtype of an outs entry: {exc}") from None


def _as_array(x, index: int, where: str):
    import jax
    import jax.numpy as jnp

    from .._jax_compat import Tracer

    if isinstance(x, (jax.Array, Tracer)):
        return x
    try:
        return jnp.asarray(x)
    except (TypeError, ValueError) as exc:
        raise CallError(
            f"{where}: input {index + 1} is not an array JAX can use ({type(x).__name__}: {exc}); "
            "pass a jax.Array or a numeric numpy array"
        ) from None


class XLACustomKernel(RegistrationMixin, TransformsMixin, BenchmarkingMixin):
    """A JAX primitive with per-platform, per-backend kernel implementations.

    Register kernels with `def_kernel` (or `def_numba_kernel`, `def_cpp_kernel`,
    `def_pallas_kernel`, `def_warp_kernel`, `def_triton_kernel`, `def_numba_cuda_kernel`,
    `def_cuda_raw_kernel`), then call the instance: `kernel(*ins, outs=..., backend=None,
    **params)`. The first kernel registered for a platform is its default. Backends are chosen per
    call (`backend=`), per primitive (`set_default`) or for every primitive
    (`jaxcc.set_backend`); the choice is a parameter of the bound primitive, so it takes effect at
    the next trace without clearing any compiled code.

    Attributes: `primitive` (the JAX primitive), `name`.
    """

    def __init__(self, name: str, doc: str | None = None):
        from .._jax_compat import Primitive, mlir

        if not isinstance(name, str) or not name:
            raise SpecError(f"XLACustomKernel: name must be a non-empty string, got {name!r}")
        self.name = name
        self.doc = doc
        if doc is not None:
            self.__doc__ = doc
        self.primitive = Primitive(name)
        self.primitive.multiple_results = True
        self.primitive.def_impl(self._eager_impl)
        self.primitive.def_abstract_eval(self._abstract_eval)
        self._kernels: dict[str, dict[str, KernelEntry]] = {}
        self._defaults: dict[str, str] = {}
        self._eager_lock = threading.Lock()
        self._eager_cache: dict[tuple, object] = {}
        self._call_fn = None
        self._tags: tuple[str, ...] = ()
        self._benchmark_data_fn = None
        for platform, jax_platforms in _LOWERING_PLATFORMS.items():
            stub = mlir.lower_fun(functools.partial(self._lower_on, platform), True)
            for jax_platform in jax_platforms:
                try:
                    mlir.register_lowering(self.primitive, stub, platform=jax_platform)
                except NotImplementedError:  # a platform this jaxlib does not know
                    pass
        self.register_general_batching()
        registry.register_primitive(self)

    # -- abstract evaluation and eager execution ------------------------------------------

    @staticmethod
    def _abstract_eval(*args, outs, **params):
        return list(outs)

    def _eager_impl(self, *args, **params):
        # Eager calls run through one jitted bind per distinct parameter set, so switching
        # backends back and forth reuses the executables compiled for each.
        import jax

        key = tuple(sorted(params.items(), key=lambda item: item[0]))
        with self._eager_lock:
            fn = self._eager_cache.get(key)
            if fn is None:
                fn = jax.jit(functools.partial(self.primitive.bind, **params))
                self._eager_cache[key] = fn
        # Under jax.disable_jit() the jit above would call bind again, which lands here again:
        # JAX's own primitives compile their eager call with jit re-enabled, and so does this.
        with jax.disable_jit(False):
            return fn(*args)

    # -- lowering ------------------------------------------------------------------------

    def _lower_on(self, platform: str, *args, outs, **params):
        explicit = params.pop(lowering.BACKEND_PARAM, None)
        selection = params.pop(lowering.SELECTION_PARAM, ())
        params.pop(lowering.BATCH_PARAM, None)
        entry = lowering.select_entry(self.name, self._kernels, platform, explicit, selection)
        others = [b for b in self._kernels.get(platform, {}) if b != entry.backend]
        return lowering.run_kernel(self.name, entry, args, outs, params, others)

    # -- calling -------------------------------------------------------------------------

    def _selection(self) -> tuple[tuple[str, str], ...]:
        """(platform, backend) chosen now for every platform with kernels: global, else default."""
        preferred = global_backends()
        chosen = {}
        for platform, kernels in self._kernels.items():
            if not kernels:
                continue
            backend = preferred.get(platform)
            if backend not in kernels:
                backend = self._defaults.get(platform, next(iter(kernels)))
            chosen[platform] = backend
        return tuple(sorted(chosen.items()))

    def _check_backend(self, backend):
        if backend is None:
            return
        if not isinstance(backend, str) or not backend:
            raise BackendError(f"{self.name}: backend must be a non-empty string or None")
        if not any(backend in kernels for kernels in self._kernels.values()):
            registered = {p: list(k) for p, k in self._kernels.items() if k}
            raise BackendError(
                f"{self.name}: unknown backend {backend!r}; registered: "
                f"{registered or 'none (use def_kernel first)'}"
            )

    def _check_params(self, params: dict):
        for key, value in params.items():
            if key in lowering.INTERNAL_PARAMS or key == "outs":
                raise CallError(
                    f"{self.name}: the parameter name {key!r} is reserved by jaxcc; rename the "
                    "parameter"
                )
            try:
                hash(value)
            except TypeError:
                raise CallError(
                    f"{self.name}: parameter {key}={value!r} is unhashable "
                    f"({type(value).__name__}); parameters are part of the compiled program's "
                    "key, pass a tuple instead of a list (or a frozenset / tuple of pairs "
                    "instead of a dict)"
                ) from None

    def __call__(self, *ins, outs, backend: str | None = None, **params):
        """Binds the primitive: `outs` (a pytree of objects with .shape and .dtype) describes the
        outputs; the result has the same structure. `params` reach the kernel generators."""
        import jax

        leaves, tree = jax.tree.flatten(outs)
        if not leaves:
            raise CallError(
                f"{self.name}: outs must describe at least one output, e.g. "
                "outs=jax.ShapeDtypeStruct(x.shape, x.dtype)"
            )
        avals = tuple(_shaped_array(item, self.name) for item in leaves)
        self._check_backend(backend)
        self._check_params(params)
        if not self._kernels:
            raise BackendError(
                f"{self.name}: no kernel is registered on any platform; use def_kernel(backend, "
                "platform, kernel_generator) (or def_numba_kernel, def_cpp_kernel, ...) first"
            )
        arrays = [_as_array(x, i, self.name) for i, x in enumerate(ins)]
        results = self.primitive.bind(
            *arrays,
            outs=avals,
            **{
                lowering.BACKEND_PARAM: backend,
                lowering.SELECTION_PARAM: self._selection(),
                lowering.BATCH_PARAM: 0,
            },
            **params,
        )
        return jax.tree.unflatten(tree, list(results))

    def __repr__(self) -> str:
        backends = {p: list(k) for p, k in self._kernels.items() if k}
        return f"<jaxcc.XLACustomKernel {self.name!r} backends={backends}>"

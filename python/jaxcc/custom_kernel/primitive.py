"""XLACustomKernel: one JAX primitive whose implementation is chosen per platform and backend."""

from __future__ import annotations

import functools
import threading

import numpy as np

from jaxcc.errors import BackendError, CallError, SpecError, SpecTypeError
from jaxcc.sharding.rule import ShardingRule, partitioned

from . import function_rules, lowering, registry, selection
from .benchmark.mixin import BenchmarkingMixin
from .call_keys import all_concrete_arrays, canonical_dtype, outs_key, params_key
from .kernel_table import KernelTable, UsesKernelTable
from .registration import RegistrationMixin
from .transforms import TransformsMixin

# Platforms whose lowering is registered up front (a stub until a kernel targets them), so that
# running on a platform without kernels is a typed error that names the platforms with kernels.
_LOWERING_PLATFORMS = {"cpu": ("cpu",), "gpu": ("cuda", "rocm"), "tpu": ("tpu",)}


def _shaped_array(item, where: str):
    from jaxcc._jax_compat import ShapedArray

    if not hasattr(item, "shape") or not hasattr(item, "dtype"):
        raise CallError(
            f"{where}: every leaf of outs needs .shape and .dtype (e.g. "
            f"jax.ShapeDtypeStruct((10,), jnp.float32)); got {type(item).__name__}"
        )
    try:
        # Canonical as JAX makes the inputs: with x64 off a float64 output is float32, as a
        # float64 input is (a kernel would otherwise write float32 into a float64 buffer).
        dtype = canonical_dtype(np.dtype(item.dtype))
        return ShapedArray(tuple(_dimension(d) for d in item.shape), dtype)
    except TypeError as exc:
        raise CallError(f"{where}: cannot read the shape/dtype of an outs entry: {exc}") from None


def _dimension(d):
    """An outs dimension as the aval keeps it: an int, or a symbolic dimension of jax.export
    (`b` from `symbolic_shape("b, 4")`) kept symbolic, since int() of one raises JAX's untyped
    InconclusiveDimensionOperation (issue 50)."""
    if hasattr(d, "dimension_as_value"):  # a jax.export symbolic dimension (_DimExpr)
        return d
    return int(d)


def _at_top_level() -> bool:
    """Whether a bind now would call the primitive's impl directly: no jit, vmap, grad or other
    trace is active and JAX's key-reuse checker (which wraps impls) is off. False where this JAX
    version does not say; then every call binds."""
    is_top_level, key_reuse = _trace_probes()
    return is_top_level is not None and is_top_level() and not key_reuse.value


def _trace_probes() -> tuple:
    """JAX's is-top-level test of the current trace and its debug_key_reuse flag (private JAX
    state, through _jax_compat; None, None where a JAX lacks them)."""
    from jaxcc._jax_compat import trace_probes

    return trace_probes[0], trace_probes[1]


@functools.cache
def _jit_disabled_flag():
    """JAX's disable_jit flag (answers `.value` for the calling thread), or None."""
    from jaxcc._jax_compat import trace_probes

    return trace_probes[2]


# The XLACustomKernels whose kernels this thread is lowering, innermost last.
_lowering = threading.local()


def _as_array(x, index: int, where: str):
    import jax
    import jax.numpy as jnp

    from jaxcc._jax_compat import Tracer

    if isinstance(x, (jax.Array, Tracer)):
        return x
    try:
        if isinstance(x, (str, bytes)):  # JAX reads a string as a dtype name, or fails to parse it
            raise TypeError("text is not an array")
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
    (`jaxcc.set_backend`). The choice is a parameter of the bound primitive, and the per-primitive
    and global choices are part of JAX's jit cache key: a change takes effect at the next call,
    also of functions compiled before, without clearing any compiled code.

    Attributes: `primitive` (the JAX primitive), `name`, `kernel_table` (its `KernelTable`).
    """

    def __init__(self, name: str, doc: str | None = None, *, sharding: str | None = None):
        from jaxcc._jax_compat import Primitive, devices_during_lowering, mlir

        if not isinstance(name, str):
            raise SpecTypeError(
                f"XLACustomKernel: name must be a non-empty string, got {type(name).__name__} "
                f"{name!r}"
            )
        if not name:
            raise SpecError("XLACustomKernel: name must be a non-empty string, got ''")
        UsesKernelTable.__init__(self, name, KernelTable(name))
        selection.install()
        self.doc = doc
        if doc is not None:
            self.__doc__ = doc
        self.primitive = Primitive(name)
        self.primitive.multiple_results = True
        self.primitive.def_impl(self._eager_impl)
        self.primitive.def_abstract_eval(self._abstract_eval)
        self._eager_lock = threading.Lock()
        self._eager_cache: dict[tuple, object] = {}
        # The eager fast path (see __call__): (outs key, backend, parameters) of a call that
        # passed every check -> (outs treedef, {backend selection: jitted bind}).
        self._fast_calls: dict[tuple, tuple] = {}
        # Whether a kernel of this primitive called another XLACustomKernel while lowering:
        # then the backend choices stay in the key of its eager executables (_run_eager).
        self._nests = False
        # Its lowering may emit custom_partitioning, which needs the device assignment: from
        # the primitive's own rule, or from a kernel that is a jaxcc function with a rule, which
        # is only known once the lowering runs the generator (decision 162).
        devices_during_lowering.add(self.primitive)
        for platform, jax_platforms in _LOWERING_PLATFORMS.items():
            stub = mlir.lower_fun(functools.partial(self._lower_on, platform), True)
            for jax_platform in jax_platforms:
                try:
                    mlir.register_lowering(self.primitive, stub, platform=jax_platform)
                except NotImplementedError:  # a platform this jaxlib does not know
                    pass
        self.sharding = None
        if sharding is not None:
            self.set_sharding(sharding)
        self.register_general_batching()
        registry.register_primitive(self)

    def set_sharding(self, rule: str) -> None:
        """The sharding rule of every call, whatever the backend (docs/sharding.md)."""
        parsed = ShardingRule(rule, function=self.name)
        if self.sharding is not None and parsed != self.sharding:
            raise SpecError(
                f'{self.name}: sharding rule "{parsed.text}" differs from the primitive\'s rule '
                f'"{self.sharding.text}"; a primitive has one rule for all backends'
            )
        self.sharding = parsed

    # -- abstract evaluation and eager execution ------------------------------------------

    @staticmethod
    def _abstract_eval(*args, outs, **params):
        # Inside jax.shard_map the inputs vary over manual mesh axes (`vma`); the outputs vary
        # over all of them, or JAX's type checks reject the cotangents of a grad there.
        from jaxcc._jax_compat import varying_like

        return varying_like(outs, args)

    def _eager_impl(self, *args, **params):
        return self._run_eager(self._eager_function(params), args)

    def _eager_function(self, params: dict):
        """The jitted bind for one distinct parameter set. Eager calls run through it, so
        switching backends back and forth reuses the executables compiled for each."""
        import jax

        key = params_key(dict(sorted(params.items(), key=lambda item: item[0])))
        with self._eager_lock:
            fn = self._eager_cache.get(key)
            if fn is None:
                fn = jax.jit(functools.partial(self.primitive.bind, **params))
                self._eager_cache[key] = fn
        return fn

    def _run_eager(self, fn, args):
        import jax

        # Under jax.disable_jit() the jit would call bind again, which lands in _eager_impl
        # again: JAX's own primitives compile their eager call with jit re-enabled, and so does
        # this. The parameters already name the backend, so the backend choices (part of every
        # jit key) are held fixed: a switch elsewhere does not recompile this call. Not for a
        # primitive whose kernels call other primitives: their backends are the choices'
        # (issue 38), so the choices stay in the key. Entering the two contexts costs more
        # than the call itself, so skip them where they would set what is already set (jit
        # enabled, the choices' key at its empty default).
        jit_disabled = _jit_disabled_flag()
        fast = jit_disabled is not None and not jit_disabled.value
        if self._nests:
            if fast:
                return fn(*args)
            with jax.disable_jit(False):
                return fn(*args)
        jit_key = selection._context
        if fast and (jit_key is None or jit_key.value == ()):
            results = fn(*args)
        else:
            with jax.disable_jit(False), selection.fixed_jit_key():
                results = fn(*args)
        if self._nests:  # found out while compiling this call: its executable holds the
            self._forget_eager()  # nested choices under the fixed key, so it is not reused
        return results

    def _forget_eager(self) -> None:
        with self._eager_lock:
            self._eager_cache = {}
            self._fast_calls = {}

    # -- lowering ------------------------------------------------------------------------

    def _lower_on(self, platform: str, *args, outs, **params):
        # Kernels of other primitives bound while this one lowers mark it as nesting them.
        owners = _lowering.__dict__.setdefault("owners", [])
        owners.append(self)
        try:
            return self._lower_kernel(platform, *args, outs=outs, **params)
        finally:
            owners.pop()

    def _lower_kernel(self, platform: str, *args, outs, **params):
        explicit = params.pop(lowering.BACKEND_PARAM, None)
        chosen = params.pop(lowering.SELECTION_PARAM, ())
        batch = params.pop(lowering.BATCH_PARAM, None)
        per_element = params.pop(lowering.PER_ELEMENT_PARAM, False)
        entry = self.kernel_table.select(platform, explicit, chosen)
        others = self.kernel_table.others(platform, entry.backend)
        if self.sharding is None:
            # A jaxcc function with a rule of its own partitions itself here (decision 162).
            def gathered(kernel, xs, _):
                function_rules.check_gathered(self, kernel, xs)

            return lowering.run_kernel(self.name, entry, args, outs, params, others, gathered)
        # A vmap gave every operand one leading batch axis: it is one more factor of the rule.
        shapes = [a.shape for a in args] + [o.shape for o in outs]
        rule = self.sharding.batched(shapes) if batch else self.sharding

        # The rule the kernel's own operands are cut by: per element, the unbatched one.
        kernel_rule = self.sharding if per_element else rule

        def composes(kernel, xs, types):
            # A jaxcc function with its own rule runs on the pieces this rule cuts.
            shapes = ([x.shape for x in xs], [t.shape for t in types])
            function_rules.check_rules_compose(self.name, kernel_rule, kernel, *shapes)

        def local(xs, types):
            import jax

            from jaxcc._jax_compat import ShapedArray

            types = tuple(ShapedArray(t.shape, t.dtype) for t in types)
            if not (batch and per_element):
                return lowering.run_kernel(self.name, entry, xs, types, params, others, composes)
            # A kernel that is not vectorised runs once per batch element of this shard.
            element_types = tuple(ShapedArray(t.shape[1:], t.dtype) for t in types)

            def one(carry, elements):
                outs = lowering.run_kernel(
                    self.name, entry, list(elements), element_types, params, others, composes
                )
                return carry, list(outs)

            return list(jax.lax.scan(one, None, list(xs))[1])

        return partitioned(rule, local, args, outs)

    # -- calling -------------------------------------------------------------------------

    def _check_backend(self, backend):
        if backend is None:
            return
        if not isinstance(backend, str) or not backend:
            raise BackendError(f"{self.name}: backend must be a non-empty string or None")
        if not self.kernel_table.has_backend(backend):
            registered = self.kernel_table.by_platform()
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

        # Eager fast path. Outside any trace, bind only calls _eager_impl with the parameters
        # built below. Once a call with the same outs, backend and parameters has passed every
        # check, a call with jax.Array inputs skips the checks (they depend only on those, and
        # on the kernel table, which only grows) and calls the same jitted bind directly.
        fast_key = None
        if _at_top_level() and all_concrete_arrays(ins):
            outs_part = outs_key(outs)
            if outs_part is not None:
                fast_key = (outs_part, backend, *params_key(params))
                try:
                    known = self._fast_calls.get(fast_key)
                except TypeError:  # an unhashable parameter: the checks below say so
                    fast_key = known = None
                if known is not None:
                    tree, functions = known
                    chosen = self.kernel_table.selection(explicit=backend)
                    fn = functions.get(chosen)
                    if fn is not None:
                        return tree.unflatten(self._run_eager(fn, ins))

        for owner in getattr(_lowering, "owners", ()):
            owner._nests = True
        leaves, tree = jax.tree.flatten(outs)
        if not leaves:
            raise CallError(
                f"{self.name}: outs must describe at least one output, e.g. "
                "outs=jax.ShapeDtypeStruct(x.shape, x.dtype)"
            )
        avals = tuple(_shaped_array(item, self.name) for item in leaves)
        self._check_backend(backend)
        self._check_params(params)
        if self.kernel_table.is_empty():
            raise BackendError(
                f"{self.name}: no kernel is registered on any platform; use def_kernel(backend, "
                "platform, kernel_generator) (or def_numba_kernel, def_cpp_kernel, ...) first"
            )
        arrays = [_as_array(x, i, self.name) for i, x in enumerate(ins)]
        # Without a rule, whether XLA gathers the inputs depends on the kernel (a jaxcc function
        # may carry its own rule): the lowering checks (function_rules.check_gathered).
        if self.sharding is not None:
            self.sharding.check_counts(len(arrays), len(avals))
            self.sharding.expand([a.shape for a in arrays], [a.shape for a in avals])
        chosen = self.kernel_table.selection(explicit=backend)
        bound = {
            "outs": avals,
            lowering.BACKEND_PARAM: backend,
            lowering.SELECTION_PARAM: chosen,
            lowering.BATCH_PARAM: 0,
            **params,
        }
        with function_rules.eager_inputs(self, arrays):
            if fast_key is None:
                results = self.primitive.bind(*arrays, **bound)
            else:
                # What bind would do here; remembered for the next call with the same key.
                fn = self._eager_function(bound)
                with self._eager_lock:
                    self._fast_calls.setdefault(fast_key, (tree, {}))[1][chosen] = fn
                results = self._run_eager(fn, arrays)
        return jax.tree.unflatten(tree, list(results))

    def __repr__(self) -> str:
        backends = self.kernel_table.by_platform()
        return f"<jaxcc.XLACustomKernel {self.name!r} backends={backends}>"

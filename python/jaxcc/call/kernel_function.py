"""The per-function callables of a loaded module, which issue `jax.ffi.ffi_call`."""

from __future__ import annotations

from typing import Any

from jaxcc import _core
from jaxcc.environment.discovery import gpu_backend_present
from jaxcc.errors import CallError, DeviceError, KernelError, NotDifferentiableError
from jaxcc.sharding.batch_partition import call as batch_call
from jaxcc.sharding.batch_partition import leading_batch_dims
from jaxcc.sharding.gather_check import check_rule_less
from jaxcc.sharding.rule import BATCH_PATH, ShardingRule, partitioned, report_forbidden_splits

from .attributes import convert_attribute
from .declared_dtypes import DeclaredDtypes
from .kernel_signature import LazyInstanceValue, kernel_doc, python_signature
from .scratch import scratch_request, scratch_type

MAX_RANK = _core.MAX_RANK  # jaxcc::kMaxDim, the rank limit of jaxcc::Tensor


class KernelFunction:
    """Calls one compiled entry point: `fn(*arrays, outs=None, **attributes)`.

    `outs` may be omitted when the function has exactly one output shaped like its first input
    (of the declared dtype when the spec says `ret:<dtype>`, else the first input's).
    Attributes are converted to the types the C++ code declares. Under `jax.vmap` the call runs
    once per batch element (`vmap_method="sequential"`) unless the module was loaded with another
    `vmap_method`, because only the kernel's author knows whether it handles a batch axis.
    """

    # Its Python face, made on first read (docs/reference.md, "A kernel function"): the spec and
    # the comment above the C++ function; the inputs by name, outs and typed attributes.
    __doc__ = LazyInstanceValue(__doc__, kernel_doc)
    __signature__ = LazyInstanceValue(None, lambda fn: python_signature(fn.spec))

    load_request = None  # the LoadRequest that built it in this process; None from a bundle
    module_key = ""  # its module's cache key

    def __init__(
        self,
        module_name: str,
        target: str,
        spec: _core.FunctionSpec,
        vmap_method: str,
        platform: str = "cpu",
    ):
        self.name = spec.name
        self.platform = platform  # "cpu" or "cuda"
        self.target = target
        self.spec = spec
        self.vmap_method = vmap_method
        # One pass over the parameters (each field read from the core makes a new object): the
        # attributes and the signature text. (An attribute named 'outs', which the outs= keyword
        # would shadow, is refused by the core at load: ValidateSpecsForCallables.)
        self.attribute_types = {}
        parts = []
        for p in spec.params:
            kind = p.kind
            if kind == "attr":
                name, attr_type = p.name, p.attr_type
                self.attribute_types[name] = attr_type
                parts.append(f"{name}: {attr_type}")
            elif kind in ("arg", "ret"):
                parts.append(f"{kind} {p.name}".strip() + (f": {p.dtype}" if p.dtype else ""))
            else:
                parts.append(kind)  # stream, pool, state, async, scratch
        self.has_scratch = "scratch" in parts
        self._signature = ", ".join(parts)
        self.dtypes = DeclaredDtypes.of(self.name, spec.params)  # None: every dtype accepted
        self.num_args = spec.num_args
        self.num_rets = spec.num_rets
        rule = spec.sharding_rule
        # Parsed and checked against the spec in the core at load already; this cannot fail.
        self.sharding = (
            ShardingRule(rule, self.num_args, self.num_rets, self.name) if rule else None
        )
        self.__name__ = self.name
        self.__qualname__ = f"{module_name}.{self.name}"

    def signature(self) -> str:
        return self._signature

    def _output_types(self, arrays, outs):
        import jax

        if outs is None:
            if self.num_rets == 1 and self.num_args >= 1:
                first, dtypes = arrays[0], self.dtypes
                dtype = first.dtype if dtypes is None else dtypes.single_output_dtype(first.dtype)
                return jax.ShapeDtypeStruct(first.shape, dtype), False
            raise CallError(
                f"{self.name}: pass outs=... (a jax.ShapeDtypeStruct, or a list of "
                f"{self.num_rets}): outputs can only be inferred for one output shaped like the "
                "first input."
            )
        as_list = isinstance(outs, (list, tuple))
        items = list(outs) if as_list else [outs]
        if len(items) != self.num_rets:
            raise CallError(
                f"{self.name}: expected {self.num_rets} output description(s) in outs, "
                f"got {len(items)}."
            )
        types = []
        for i, item in enumerate(items):
            if not hasattr(item, "shape") or not hasattr(item, "dtype"):
                raise CallError(
                    f"{self.name}: each entry of outs needs .shape and .dtype "
                    f"(e.g. jax.ShapeDtypeStruct); got {type(item).__name__}."
                )
            types.append(self._output_type(jax, item))
            self._check_rank(f"output {i + 1}", types[-1].shape)
        if self.dtypes is not None:
            self.dtypes.check_outputs(types)
        return (types if as_list else types[0]), as_list

    def _output_type(self, jax, item):
        example = "e.g. jax.ShapeDtypeStruct((4,), jnp.float32)"
        try:
            shape = tuple(item.shape)
        except TypeError:
            raise CallError(
                f"{self.name}: outs shape {item.shape!r} is not a tuple of sizes; {example}."
            ) from None
        for size in shape:
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                if hasattr(size, "dimension_as_value"):  # a symbolic size under jax.export
                    continue
                raise CallError(
                    f"{self.name}: outs shape {shape!r} must hold non-negative integer sizes; "
                    f"{example}."
                )
        try:
            return jax.ShapeDtypeStruct(shape, item.dtype)
        except (TypeError, ValueError) as e:
            raise CallError(
                f"{self.name}: outs dtype {item.dtype!r} is not a dtype JAX knows ({e}); {example}."
            ) from None

    def _check_arrays(self, arrays) -> None:
        for i, array in enumerate(arrays):
            if not hasattr(array, "shape") or not hasattr(array, "dtype"):
                raise CallError(
                    f"{self.name}: input {i + 1} must be an array (jax.Array or numpy.ndarray), "
                    f"got {type(array).__name__}; convert it with jnp.asarray(...)."
                )
            self._check_rank(f"input {i + 1}", array.shape)
        if self.dtypes is not None:  # before anything is staged (decision 158)
            self.dtypes.check_inputs(arrays)

    def _check_rank(self, what: str, shape) -> None:
        # The generated wrapper would reject it too, but as a kernel failure after dispatch.
        if len(shape) > MAX_RANK:
            raise CallError(
                f"{self.name}: {what} has rank {len(shape)}, above the jaxcc::Tensor limit of "
                f"{MAX_RANK} dimensions; reshape it to at most {MAX_RANK} dimensions (and back "
                "afterwards)."
            )

    def _convert_attributes(self, attributes: dict) -> dict:
        expected = self.attribute_types
        missing = [n for n in expected if n not in attributes]
        unexpected = [n for n in attributes if n not in expected]
        if missing or unexpected:
            detail = []
            if missing:
                detail.append(f"missing {', '.join(missing)}")
            if unexpected:
                detail.append(f"unexpected {', '.join(unexpected)}")
            wanted = ", ".join(f"{n}: {t}" for n, t in expected.items()) or "none"
            raise CallError(
                f"{self.name}: wrong attributes ({'; '.join(detail)}). It takes: {wanted}."
            )
        return {n: convert_attribute(self.name, n, expected[n], v) for n, v in attributes.items()}

    def __call__(self, *arrays: Any, outs: Any = None, **attributes: Any) -> Any:
        import jax

        if len(arrays) != self.num_args:
            raise CallError(
                f"{self.name}: expected {self.num_args} input array(s), got {len(arrays)} "
                f"(signature: {self.signature()})."
            )
        self._check_arrays(arrays)
        arrays = _as_jax_inputs(arrays)
        if self.platform == "cuda" and not gpu_backend_present():
            raise DeviceError(
                f"{self.name}: this is a CUDA kernel, but JAX has no GPU backend in this process "
                f"(devices: {', '.join(str(d) for d in jax.devices())}). Run on a machine with an "
                "NVIDIA GPU and a CUDA-enabled jaxlib (pip install 'jax[cuda13]' or "
                "'jax[cuda12]'), or load the CPU version with jaxcc.load_cpp_inline."
            )
        scratch = scratch_request(self.name, attributes) if self.has_scratch else None
        result_types, as_list = self._output_types(arrays, outs)
        converted = self._convert_attributes(attributes)
        try:
            if scratch is not None:
                return self._call_with_scratch(arrays, result_types, as_list, converted, scratch)
            call = jax.ffi.ffi_call(self.target, result_types, vmap_method=self.vmap_method)
            try:
                if self.sharding is not None:
                    return self._call_with_rule(arrays, result_types, as_list, converted, call)
                check_rule_less(self.__qualname__, self.name, arrays)
                return call(*arrays, **converted)
            except jax.errors.JaxRuntimeError as e:
                # An eager call runs the kernel here; under jit JAX raises at execution instead.
                raise KernelError(
                    f"{e}\n(raised by the C++ kernel '{self.target}' during the call: the message "
                    "above is the kernel's own; fix the inputs it rejects or the kernel)"
                ) from e
        except (ValueError, NotImplementedError) as e:
            error = NotDifferentiableError.from_jax(self.name, self.target, e)
            if error is None:
                raise
            raise error from e

    def _call_with_scratch(self, arrays, result_types, as_list, converted, scratch):
        """The call with its workspace as a hidden last result, dropped from what it returns.
        Under a sharding rule each shard's call gets its own workspace, sized from its own
        operands when `scratch` is a function of them (decision 118)."""
        import jax

        def local(xs, types):
            target = self._shard_target(xs, types, converted)
            types = [*types, scratch_type(self.name, scratch, xs)]
            shard_call = jax.ffi.ffi_call(target, types, vmap_method=self.vmap_method)
            return list(shard_call(*xs, **converted))[:-1]

        types = list(result_types) if as_list else [result_types]
        try:
            if self.sharding is None:
                check_rule_less(self.__qualname__, self.name, arrays)
                results = local(arrays, types)
            else:
                try:
                    ruled = self._ruled(self.sharding, local, types, converted, batch_path=False)
                    results = list(ruled(*arrays))
                except NotImplementedError:
                    # A transformation custom_partitioning does not support: rule-less call.
                    results = local(arrays, types)
        except jax.errors.JaxRuntimeError as e:
            raise KernelError(
                f"{e}\n(raised by the C++ kernel '{self.target}' during the call: the message "
                "above is the kernel's own; fix the inputs it rejects or the kernel)"
            ) from e
        return results if as_list else results[0]

    def _call_with_rule(self, arrays, result_types, as_list, converted, call):
        import jax

        def local(xs, types):
            target = self._shard_target(xs, types, converted)
            shard_call = jax.ffi.ffi_call(target, list(types), vmap_method=self.vmap_method)
            return list(shard_call(*xs, **converted))

        types = list(result_types) if as_list else [result_types]
        try:
            results = list(self._ruled(self.sharding, local, types, converted)(*arrays))
        except NotImplementedError:
            # A transformation custom_partitioning does not support: the call runs rule-less.
            return call(*arrays, **converted)
        return results if as_list else results[0]

    _batch_path_ok = True  # False: a shard's shapes must reach Python (TunedFunction, 159c)

    def _shard_target(self, xs, types, attributes) -> str:  # a shard's target, by its operands
        return self.target

    def _ruled(self, rule, local, types, attributes, batched: bool = False,
               batch_path: bool = True):  # fmt: skip
        """`local(xs, types) -> outputs` on every shard as `rule` says, as a function of the
        operands. Under `jax.vmap` it calls itself with the rule's batched form (a fresh leading
        factor on every operand) and `local` vmapped, so a sharded batch axis stays sharded;
        custom_partitioning alone has no batching rule (decision 82). `batch_path=False` keeps
        the call off XLA's batch partitioner, which splits every result's leading dimensions,
        a workspace's too (decision 118)."""
        import jax
        import jax.numpy as jnp

        def apply(xs):
            if not batched:
                in_factors, out_factors = rule.expand(
                    [x.shape for x in xs], [t.shape for t in types]
                )
                k = leading_batch_dims(rule, in_factors, out_factors)
                if k and BATCH_PATH[0] and batch_path and self._batch_path_ok:
                    report_forbidden_splits(rule, in_factors, xs)
                    return batch_call(self.target, xs, types, attributes, k, rule,
                                      self.vmap_method)  # fmt: skip
            return partitioned(rule, local, xs, types)

        @jax.custom_batching.custom_vmap
        def ruled(*xs):
            return tuple(apply(list(xs)))

        @ruled.def_vmap
        def ruled_vmap(axis_size, in_batched, *xs):
            xs = [x if b else jnp.broadcast_to(x, (axis_size, *x.shape))
                  for x, b in zip(xs, in_batched, strict=True)]  # fmt: skip
            batched_types = [jax.ShapeDtypeStruct((axis_size, *t.shape), t.dtype) for t in types]

            def local_batched(ys, ts):
                element_types = [jax.ShapeDtypeStruct(t.shape[1:], t.dtype) for t in ts]
                return list(jax.vmap(lambda *y: tuple(local(list(y), element_types)))(*ys))

            shapes = [x.shape for x in xs] + [t.shape for t in batched_types]
            inner = self._ruled(rule.batched(shapes), local_batched, batched_types, attributes,
                                True, batch_path)  # fmt: skip
            outs = inner(*xs)
            return tuple(outs), (True,) * len(types)

        return ruled

    def __repr__(self) -> str:
        return f"<jaxcc kernel {self.target}({self.signature()})>"


def _as_jax_inputs(arrays) -> tuple:
    """NumPy inputs as JAX takes them, so an eager call sees what a jitted one does: with 64-bit
    types off a float64 array becomes float32 before `outs` is inferred from it, as in
    `jnp.sin(np_array)` (issue 49 item 13). JAX arrays and tracers pass untouched."""
    import numpy as np

    if not any(isinstance(a, (np.ndarray, np.generic)) for a in arrays):
        return arrays
    import jax.numpy as jnp

    return tuple(jnp.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in arrays)

"""Choosing a tuned function's variant (decisions 156b, 191-194): the first call (or trace,
under jax.jit or vmap) for a new tuning key has the variants measured at the shapes the kernel
runs on (decide.py; in the tuning child, isolation.py) and calls the chosen one; the decision is
kept in memory and in the cache directory (store.py), so later traces and processes time nothing.
A decision made under load is timed once more by the next process (decision 193)."""

from __future__ import annotations

import threading
import warnings

from jaxcc.call.kernel_function import KernelFunction
from jaxcc.errors import AutotuneWarning

from . import decide, deferred, keys, store
from .decide import default_key, print_line
from .spec import TuneSpec, config_tag, config_text

_lock = threading.Lock()
_decisions: dict[str, dict] = {}  # decision id -> record, this process
_warned: set[tuple[str, str]] = set()  # (reference target, "symbolic"): warned once


def _traced(arrays) -> bool:
    from jaxcc._jax_compat import Tracer

    return any(isinstance(a, Tracer) for a in arrays)


class TunedFunction(KernelFunction):
    """A KernelFunction whose calls go to the variant chosen for the operands' tuning key.

    `variants`: {config tag: (config, that variant's KernelFunction)}, in candidate order.
    `target` stays the reference build's plain name; `chosen_target(*arrays, ...)` says which
    variant a call with such operands runs (tuning first if needed)."""

    def __init__(self, module, reference: KernelFunction, spec: TuneSpec, variants: dict):
        super().__init__(
            module.name, reference.target, reference.spec, reference.vmap_method,
            reference.platform,
        )  # fmt: skip
        self._module = module
        self.load_request, self.module_key = reference.load_request, reference.module_key
        self._tune = spec
        self._variants = variants
        self._shipped: dict[str, dict] = {}  # decision id -> record, from a bundle (159b)
        # Config tag -> how the tuning child loads that variant (runner.py); set by the loader.
        self._recipes: dict[str, tuple] = {}
        self._reference_tag = config_tag(spec.reference)
        if self._reference_tag not in variants:  # it failed to compile: the first one that built
            self._reference_tag = next(iter(variants))

    @property
    def variant_targets(self) -> dict[str, str]:
        """Config text -> FFI target of every variant that compiled."""
        return {config_text(c): fn.target for c, fn in self._variants.values()}

    # Under a sharding rule each shard chooses by its own operands (decision 159c), which only
    # custom_partitioning and shard_map show Python; XLA's batch partitioner would not.
    _batch_path_ok = False

    def __call__(self, *arrays, outs=None, **attributes):
        if len(arrays) != self.num_args or self.sharding is not None:
            return super().__call__(*arrays, outs=outs, **attributes)  # CallError, or per shard
        self._check_arrays(arrays)
        if self.vmap_method in keys.BATCHED_ONCE and _traced(arrays):
            # vmap may batch this call after it is traced (jax.vmap(jax.jit(f))): the variant
            # is chosen at lowering, at the shapes that run (decision 230).
            return deferred.call(self, arrays, outs, attributes)
        chosen = self._choose(arrays, outs, attributes)
        return self._variants[chosen][1](*arrays, outs=outs, **attributes)

    def _shard_target(self, xs, types, attributes) -> str:
        outs = types[0] if len(types) == 1 else list(types)
        return self._variants[self._choose(xs, outs, attributes)][1].target

    def chosen_config(self, *arrays, outs=None, **attributes) -> dict:
        """The configuration calls with such operands run, with its values as declared (ints
        stay ints), tuning first if needed."""
        config = self._variants[self._choose(arrays, outs, attributes)][0]
        return keys.typed_config(config, self._tune.options.params)

    def _choose(self, arrays, outs, attributes) -> str:
        import jax

        # The shapes the kernel runs on: under vmap with broadcast_all/expand_dims, the whole
        # batch's (decision 192).
        shapes, outs = keys.kernel_shapes(arrays, outs, self.vmap_method)
        if not all(isinstance(d, int) for s in shapes for d in s.shape):
            return self._untunable([jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays])
        options = self._tune.options
        key = (options.key or default_key)(shapes, attributes)
        if not isinstance(key, str):
            key = repr(key)
        device = self._device_model()
        ident = store.decision_id(
            self._module.key, self.name, list(self._variants), self._reference_tag, key, device
        )
        cache_dir = self._module._tune_cache_dir
        with _lock:
            record = _decisions.get(ident)
            if record is not None and decide.budget_raised(record):
                record = None  # cut short by a budget since raised: time the rest
            if record is None:
                record = self._shipped.get(ident) or store.read(cache_dir, ident)
                usable = record is not None and record.get("chosen") in self._variants
                if usable and not decide.retime_due(record) and not decide.budget_raised(record):
                    _decisions[ident] = record
                    self._report(record, cached=True, shipped=ident in self._shipped)
                else:
                    retimes = record.get("retimes", 0) + 1 if usable else 0
                    earlier = record.get("excluded", {}) if usable else {}
                    record = decide.tune(self, shapes, outs, attributes, key, device, retimes,
                                         earlier)  # fmt: skip
                    _decisions[ident] = record
                    store.write(cache_dir, ident, record)
                    self._report(record, cached=False)
        return record["chosen"]

    def _untunable(self, shapes) -> str:
        """Symbolic sizes (jax.export with shape polymorphism): nothing to time on, so the call
        uses the reference configuration, said once per function."""
        if (self.target, "symbolic") not in _warned:
            _warned.add((self.target, "symbolic"))
            warnings.warn(
                f"jaxcc: {self.__qualname__} is traced with symbolic sizes "
                f"({default_key(shapes, {})}), which cannot be timed; it calls the reference "
                f"configuration {config_text(self._variants[self._reference_tag][0])}. Export "
                "with concrete shapes to get the tuned variant",
                AutotuneWarning,
                stacklevel=keys.user_stacklevel(),
            )
        return self._reference_tag

    def _device_model(self) -> str:
        if self.platform == "cuda":
            import jax

            return f"gpu:{jax.devices('gpu')[0].device_kind}"
        return f"cpu:{store.cpu_model()}"

    def _report(self, record: dict, cached: bool, shipped: bool = False) -> None:
        print_line(self.__qualname__, record, cached, shipped)

"""Installing JAX transformation rules (vmap, jvp, transpose) on an XLACustomKernel."""

from __future__ import annotations

from jaxcc.errors import SpecTypeError

from .autodiff import defjvp
from .batched_rules import jvp_over_batch, per_input_jvp_over_batch, transpose_over_batch
from .batching import (
    general_batching_rule,
    per_element_sharded_batching_rule,
    vectorized_batching_rule,
)
from .kernel_table import UsesKernelTable
from .lowering import BACKEND_PARAM, SELECTION_PARAM


def _require_callable(name: str, what: str, fun) -> None:
    if not callable(fun):
        raise SpecTypeError(f"{name}: {what} must be callable, got {type(fun).__name__}")


class TransformsMixin(UsesKernelTable):
    """def_batching_rule, register_general_batching, def_jvp_rule(2), def_transpose_rule.

    Needs `self.primitive` (the JAX primitive, made by XLACustomKernel) and the kernel table."""

    primitive: object

    def def_batching_rule(self, fun) -> None:
        """Replaces the vmap rule: `fun(args, axes, **params) -> (outputs, out_axes)`."""
        from jaxcc._jax_compat import batching

        _require_callable(self.name, "the batching rule", fun)
        batching.primitive_batchers[self.primitive] = fun

    def register_general_batching(self) -> None:
        """Installs (or restores) the default vmap rule: one vectorised call when every selected
        kernel declared `vectorized=True`; with a sharding rule, one call per element of each
        shard with the batch axis split as the rule's extra factor; otherwise
        `general_batching_rule` (a `lax.scan`)."""
        from jaxcc._jax_compat import batching

        batching.primitive_batchers[self.primitive] = self._default_batching

    def _default_batching(self, args, axes, **params):
        entries = self.kernel_table.selected_entries(
            params.get(BACKEND_PARAM), params.get(SELECTION_PARAM, ())
        )
        if entries and all(e.vectorized for e in entries):
            return vectorized_batching_rule(self.primitive, args, axes, **params)
        if getattr(self, "sharding", None) is not None:
            return per_element_sharded_batching_rule(self.primitive, args, axes, **params)
        return general_batching_rule(self.primitive, args, axes, **params)

    # The rules below see the operands and parameters of one batch element also when a
    # vectorised vmap batched the bind: they run under jax.vmap then (batched_rules.py).

    def def_jvp_rule(self, fun) -> None:
        """Installs a whole JVP rule: `fun(primals, tangents, **params) -> (outs, tangents)`."""
        from jaxcc._jax_compat import ad

        _require_callable(self.name, "the JVP rule", fun)
        ad.primitive_jvps[self.primitive] = jvp_over_batch(fun)

    def def_jvp_rule2(self, *jvp_rules) -> None:
        """One JVP rule per input, `rule(tangent, *primals, **params)`, None for no contribution."""
        defjvp(self.primitive, *[per_input_jvp_over_batch(rule) for rule in jvp_rules])

    def def_transpose_rule(self, fun) -> None:
        """Installs the transpose rule: `fun(cotangents, *args, **params)` returns one cotangent
        (or None) per input; inputs being transposed are `jax.interpreters.ad.UndefinedPrimal`."""
        from jaxcc._jax_compat import ad

        _require_callable(self.name, "the transpose rule", fun)
        ad.primitive_transposes[self.primitive] = transpose_over_batch(fun)


__all__ = ["TransformsMixin"]

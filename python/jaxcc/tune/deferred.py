"""A tuned call whose variant is chosen where the shape that runs is known (decision 230).

With vmap_method="broadcast_all"/"expand_dims" the kernel runs once on the whole batch, but a
traced call cannot always see the batch: `jax.vmap(jax.jit(f))` traces `f` per element and
batches the jaxpr afterwards. So a traced call of such a tuned function binds one primitive,
`jaxcc_tuned_call`, that carries the function and the outputs' types. Its batching rule does what
`ffi_call`'s does for these methods (batch axis first, unmapped operands broadcast to the batch or
to 1) and binds it again at the batched shapes, however many vmaps and whatever jaxpr (jit, scan,
cond) lie between; the variant is chosen only when the call is lowered (from the operands'
abstract values, the shapes XLA runs) or run eagerly, and the call then lowers to that variant's
own `ffi_call`."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_primitive: list = []


class Attributes:
    """A call's attributes as one primitive parameter: compared by identity (values may be
    arrays, which neither hash nor compare to one bool)."""

    __slots__ = ("values",)

    def __init__(self, values: dict):
        self.values = dict(values)

    def __repr__(self) -> str:
        return f"Attributes({self.values!r})"


def _run_chosen(args, *, fn, outs, attributes):
    """The chosen variant's call on `args` (arrays when run eagerly, the lowering's tracers)."""
    outs = list(outs)
    chosen = fn._choose(args, outs, attributes.values)
    return list(fn._variants[chosen][1](*args, outs=outs, **attributes.values))


def _abstract_eval(*args, fn, outs, attributes):
    del args, fn, attributes
    from jaxcc._jax_compat import ShapedArray

    return [ShapedArray(tuple(o.shape), o.dtype) for o in outs]


def _lowering(ctx, *args, fn, outs, attributes):
    from jaxcc._jax_compat import mlir

    def lowered(*xs):
        return _run_chosen(xs, fn=fn, outs=outs, attributes=attributes)

    return mlir.lower_fun(lowered, multiple_results=True)(ctx, *args)


def _batching(args, dims, *, fn, outs, attributes):
    """As `ffi_call` batches these methods: the batch axis first; an unmapped operand gets the
    batch size (broadcast_all) or 1 (expand_dims); every output gets the batch size."""
    import jax
    import jax.numpy as jnp

    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    lead = size if fn.vmap_method == "broadcast_all" else 1
    xs = [
        jax.lax.broadcast(x, (lead,)) if d is None else jnp.moveaxis(x, d, 0)
        for x, d in zip(args, dims, strict=True)
    ]
    batched = tuple(jax.ShapeDtypeStruct((size, *o.shape), o.dtype) for o in outs)
    results = primitive().bind(*xs, fn=fn, outs=batched, attributes=attributes)
    return results, [0] * len(results)


def _jvp(primals, tangents, *, fn, outs, attributes):
    """A tuned call has no derivative rule, as its variants' FFI calls have none: the same
    error as theirs (NotDifferentiableError, naming the fix)."""
    del primals, tangents, outs, attributes
    from jaxcc.errors import NotDifferentiableError

    raise NotDifferentiableError.from_jax(
        fn.name, fn.target, ValueError(f"The FFI call to `{fn.target}` cannot be differentiated.")
    )


def primitive():
    """`jaxcc_tuned_call`, created on first use."""
    with _lock:
        if _primitive:
            return _primitive[0]
        from jaxcc._jax_compat import Primitive, ad, batching, mlir

        p = Primitive("jaxcc_tuned_call")
        p.multiple_results = True
        p.def_impl(lambda *args, **params: _run_chosen(args, **params))
        p.def_abstract_eval(_abstract_eval)
        mlir.register_lowering(p, _lowering)
        batching.primitive_batchers[p] = _batching
        ad.primitive_jvps[p] = _jvp
        _primitive.append(p)
        return p


def call(fn, arrays, outs, attributes: dict):
    """`fn(*arrays, outs=outs, **attributes)` for a traced call of a tuned function batched
    once (broadcast_all, expand_dims): checked now, the variant chosen at lowering."""
    import jax.numpy as jnp
    import numpy as np

    arrays = [jnp.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in arrays]
    types, as_list = fn._output_types(arrays, outs)
    # A CallError for wrong attributes at the user's call (the workspace's size is no attribute).
    fn._convert_attributes({k: v for k, v in attributes.items() if k != "scratch_bytes"})
    types = tuple(types) if as_list else (types,)
    results = primitive().bind(*arrays, fn=fn, outs=types, attributes=Attributes(attributes))
    return list(results) if as_list else results[0]

"""JVP and transpose rules applied to a bind that the vectorised vmap rule already batched.

A vectorised kernel sees exactly one leading batch axis: `vectorized_batching_rule` merges the
batch axes of nested vmaps into one and records its size in the bind (`jaxcc_batch`). A JVP or
transpose rule runs on that batched bind, and the kernel calls it makes are new binds: bound by
`__call__` they would carry no batch marker, and an outer vmap would then add a second leading
axis in front of the one the inner vmap made (NaN tangents, wrong gradients; issue 38). So a
user's rule never sees the batched bind: jaxcc runs it under `jax.vmap` over the batch axis, on
the unbatched operands and parameters it was written for. Every kernel call inside it is then
batched again by the vectorised rule, which records the marker: the marker travels with the call.
For an unbatched bind (`jaxcc_batch` 0) the rule is called as it is.
"""

from __future__ import annotations

from .lowering import BATCH_PARAM, PER_ELEMENT_PARAM


def _unbatched(params: dict) -> dict:
    """The parameters of one batch element: no marker, outs without the leading axis."""
    from jaxcc._jax_compat import ShapedArray

    inner = {**params, BATCH_PARAM: 0}
    inner.pop(PER_ELEMENT_PARAM, None)
    inner["outs"] = tuple(ShapedArray(o.shape[1:], o.dtype) for o in params["outs"])
    return inner


def _element_aval(aval):
    return aval.update(shape=aval.shape[1:])


def _is_zero(value) -> bool:
    from jaxcc._jax_compat import ad

    return type(value) is ad.Zero


def jvp_over_batch(fun):
    """`fun(primals, tangents, **params) -> (outs, tangents)`, run per batch element."""

    def jvp(primals, tangents, **params):
        if not params.get(BATCH_PARAM, 0):
            return fun(primals, tangents, **params)
        import jax

        from jaxcc._jax_compat import ad

        inner = _unbatched(params)
        zero_in = [_is_zero(t) for t in tangents]
        zero_out: list[bool] = []

        def one(element_primals, live_tangents):
            live = iter(live_tangents)
            element_tangents = [
                ad.Zero(_element_aval(t.aval)) if zero else next(live)
                for t, zero in zip(tangents, zero_in, strict=True)
            ]
            outs, out_tangents = fun(list(element_primals), element_tangents, **inner)
            zero_out[:] = [_is_zero(t) for t in out_tangents]
            return list(outs), [
                None if z else t for t, z in zip(out_tangents, zero_out, strict=True)
            ]

        live = [t for t, zero in zip(tangents, zero_in, strict=True) if not zero]
        outs, out_tangents = jax.vmap(one)(list(primals), live)
        out_tangents = [
            ad.Zero(jax.typeof(o).to_tangent_aval()) if z else t
            for o, t, z in zip(outs, out_tangents, zero_out, strict=True)
        ]
        return outs, out_tangents

    return jvp


def per_input_jvp_over_batch(rule):
    """`rule(tangent, *primals, **params)` (one input's contribution), run per batch element."""
    if not callable(rule):  # None, or a mistake `defjvp` reports
        return rule

    def contribution(tangent, *primals, **params):
        if not params.get(BATCH_PARAM, 0):
            return rule(tangent, *primals, **params)
        import jax

        inner = _unbatched(params)
        return jax.vmap(lambda t, *p: rule(t, *p, **inner))(tangent, *primals)

    return contribution


def transpose_over_batch(fun):
    """`fun(cotangents, *args, **params)` (one cotangent or None per input), run per batch
    element; inputs being transposed stay `UndefinedPrimal`s, of the element's type."""

    def transpose(cotangents, *args, **params):
        if not params.get(BATCH_PARAM, 0):
            return fun(cotangents, *args, **params)
        import jax

        from jaxcc._jax_compat import ad

        inner = _unbatched(params)
        zero_ct = [_is_zero(c) for c in cotangents]
        undefined = [ad.is_undefined_primal(a) for a in args]

        def one(live_cts, defined):
            cts, values = iter(live_cts), iter(defined)
            element_cts = [
                ad.Zero(_element_aval(c.aval)) if zero else next(cts)
                for c, zero in zip(cotangents, zero_ct, strict=True)
            ]
            element_args = [
                ad.UndefinedPrimal(_element_aval(a.aval)) if u else next(values)
                for a, u in zip(args, undefined, strict=True)
            ]
            results = fun(element_cts, *element_args, **inner)
            return [None if r is None or _is_zero(r) else r for r in results]

        live_cts = [c for c, zero in zip(cotangents, zero_ct, strict=True) if not zero]
        defined = [a for a, u in zip(args, undefined, strict=True) if not u]
        return jax.vmap(one)(live_cts, defined)

    return transpose

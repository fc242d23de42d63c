"""vmap rules: a sequential one that is always correct, and a vectorised one for kernels that
declare they take a leading batch axis."""

from __future__ import annotations

from .lowering import BATCH_PARAM, PER_ELEMENT_PARAM


def _batch_size(args, axes) -> int:
    return next(x.shape[ax] for x, ax in zip(args, axes, strict=True) if ax is not None)


def _primitive_of(prim):
    """The JAX primitive of an XLACustomKernel; a JAX primitive as it is. brainevent's operators
    pass their XLACustomKernel object to these rules (its own rules accept both)."""
    return getattr(prim, "primitive", prim)


def general_batching_rule(prim, args, axes, **params):
    """Runs the primitive once per batch element with `jax.lax.scan` (batch axes moved to 0;
    unbatched operands are shared). Correct for any kernel; B calls for a batch of B."""
    import jax
    import jax.numpy as jnp

    prim = _primitive_of(prim)
    # jaxcc's primitives declare their results in `outs`; a plain JAX primitive (brainevent's
    # rule takes those too) may have one result, bound to one array rather than a list.
    if all(ax is None for ax in axes):
        result = prim.bind(*args, **params)
        return result, ([None] * len(result) if prim.multiple_results else None)
    batched = [ax is not None for ax in axes]
    sliced = [jnp.moveaxis(x, ax, 0) for x, ax in zip(args, axes, strict=True) if ax is not None]
    sliced = [_whole_batch(prim.name, x) for x in sliced]

    def one_element(carry, elements):
        it = iter(elements)
        call_args = [next(it) if b else x for x, b in zip(args, batched, strict=True)]
        result = prim.bind(*call_args, **params)
        return carry, (list(result) if prim.multiple_results else result)

    _, results = jax.lax.scan(one_element, None, sliced)
    if not prim.multiple_results:
        return results, 0
    return list(results), [0] * len(results)


def _whole_batch(name: str, x):
    """`x` with its leading (batch) axis unsplit: the scan walks the whole batch, which JAX
    refuses over an axis split on Explicit mesh axes. XLA gathers it on Auto axes unasked; here
    jaxcc reshards, and says so as for any gather (decision 162)."""
    import jax

    from jaxcc.sharding.gather_check import report_batch_gather, spec_axes

    sharding = getattr(jax.typeof(x), "sharding", None)
    spec = tuple(getattr(sharding, "spec", None) or ())
    mesh = getattr(sharding, "mesh", None)
    if not spec or mesh is None:
        return x
    sizes = dict(getattr(mesh, "shape", {}) or {})
    axes = tuple(a for a in spec_axes(spec[0]) if sizes.get(a, 1) > 1)
    if not axes:
        return x
    report_batch_gather(name, axes)
    unsplit = jax.sharding.PartitionSpec(None, *spec[1:])
    return jax.sharding.reshard(x, jax.sharding.NamedSharding(mesh, unsplit))


def per_element_sharded_batching_rule(prim, args, axes, **params):
    """For a primitive with a sharding rule whose kernel is not vectorised: the batch becomes one
    leading operand axis, as for a vectorised kernel, so the rule gains a factor for it and a
    sharded batch axis stays sharded; the lowering then runs the kernel once per element of each
    shard (`lax.scan`). `general_batching_rule` would scan over the global batch instead, which
    makes XLA gather a sharded batch axis onto every device."""
    return vectorized_batching_rule(prim, args, axes, **{**params, PER_ELEMENT_PARAM: True})


def vectorized_batching_rule(prim, args, axes, **params):
    """One call for the whole batch: every operand gets the batch axis first (unbatched ones are
    broadcast) and every output is declared with a leading batch axis. Under nested vmaps the
    batch axes are merged into one, so the kernel always sees exactly one leading batch axis."""
    import jax.numpy as jnp

    from jaxcc._jax_compat import ShapedArray

    prim = _primitive_of(prim)
    n_outs = len(params["outs"])
    if all(ax is None for ax in axes):
        return prim.bind(*args, **params), [None] * n_outs
    size = _batch_size(args, axes)
    moved = [
        jnp.moveaxis(x, ax, 0) if ax is not None else jnp.broadcast_to(x, (size, *x.shape))
        for x, ax in zip(args, axes, strict=True)
    ]
    inner = params.get(BATCH_PARAM, 0)
    if inner:
        # Already vectorised by an inner vmap: every operand and output leads with `inner`.
        total = size * inner
        moved = [x.reshape((total, *x.shape[2:])) for x in moved]
        outs = tuple(ShapedArray((total, *o.shape[1:]), o.dtype) for o in params["outs"])
    else:
        total = size
        outs = tuple(ShapedArray((size, *o.shape), o.dtype) for o in params["outs"])
    results = prim.bind(*moved, **{**params, "outs": outs, BATCH_PARAM: total})
    if inner:
        results = [r.reshape((size, inner, *r.shape[1:])) for r in results]
    return list(results), [0] * n_outs

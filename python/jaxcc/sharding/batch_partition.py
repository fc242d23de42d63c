"""XLA's batch-partitionable path for rules that split only leading dimensions (decision 63):
the custom call carries `num_batch_dims` and, under Shardy, the rule itself, and its target is
registered with `jax.ffi.register_ffi_target_as_batch_partitionable`; XLA then splits the leading
dimensions of every operand itself, without custom_partitioning's Python callback."""

from __future__ import annotations

import functools
import threading

_lock = threading.Lock()
_registered: set = set()
_primitive: list = []


def leading_batch_dims(rule, in_factors, out_factors) -> int:
    """k > 0 when every operand starts with the same k factors, has at least one more
    dimension, and every other factor is need_replication (so splitting only the leading k
    dimensions is all the rule allows); 0 when the rule needs custom_partitioning."""
    if rule.reduction or rule.permutation:
        return 0
    operands = list(in_factors) + list(out_factors)
    first = operands[0]
    k = 0  # the longest common prefix of splittable factors
    while (k < min(len(f) for f in operands) and first[k] is not None
           and first[k] not in rule.need_replication
           and all(f[k] == first[k] for f in operands)):  # fmt: skip
        k += 1
    # With every dimension a batch dimension, XLA 0.10.2's batch partitioner gathered the
    # operand (measured, tests/test_sharding.py): those rules take custom_partitioning.
    if k == 0 or any(len(f) == k for f in operands):
        return 0
    rest = {factor for f in operands for factor in f[k:]}
    if not rest <= set(rule.need_replication):
        return 0
    return k


def _register(target: str) -> None:
    import jax

    with _lock:
        if target not in _registered:
            jax.ffi.register_ffi_target_as_batch_partitionable(target)
            _registered.add(target)


def _lowering(ctx, *args, target, result_types, attributes, num_batch_dims, einsum,
              need_replication, vmap_method):  # fmt: skip
    import jax

    from jaxcc._jax_compat import mlir, sdy_rule_attribute

    extra = {"mhlo.frontend_attributes": mlir.ir_attribute({"num_batch_dims": str(num_batch_dims)})}
    if jax.config.jax_use_shardy_partitioner:
        extra["sdy.sharding_rule"] = sdy_rule_attribute(
            einsum,
            need_replication,
            [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_in],
            [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_out],
        )
    return jax.ffi.ffi_lowering(target, extra_attributes=extra)(ctx, *args, **dict(attributes))


def _plain(args, target, result_types, attributes, vmap_method):
    import jax

    call = jax.ffi.ffi_call(target, list(result_types), vmap_method=vmap_method)
    return list(call(*args, **dict(attributes)))


def _batching(args, dims, *, target, result_types, attributes, vmap_method, **_):
    import jax

    # Under jax.vmap the call is an ordinary ffi_call again, batched as the module says.
    def one(*xs):
        return _plain(xs, target, result_types, attributes, vmap_method)

    return jax.vmap(one, in_axes=tuple(dims))(*args), [0] * len(result_types)


def primitive():
    """The one primitive of batch-partitionable jaxcc calls, created on first use."""
    with _lock:
        if _primitive:
            return _primitive[0]
        import jax

        from jaxcc._jax_compat import Primitive, ShapedArray, batching, mlir

        p = Primitive("jaxcc_batch_partitioned_call")
        p.multiple_results = True
        p.def_abstract_eval(
            lambda *args, result_types, **_: [ShapedArray(r.shape, r.dtype) for r in result_types]
        )
        p.def_impl(lambda *args, **params: jax.jit(functools.partial(p.bind, **params))(*args))
        mlir.register_lowering(p, _lowering)
        batching.primitive_batchers[p] = _batching
        _primitive.append(p)
        return p


def call(target, args, result_types, attributes: dict, num_batch_dims: int, rule, vmap_method):
    import jax

    _register(target)
    return primitive().bind(
        *args,
        target=target,
        result_types=tuple(jax.ShapeDtypeStruct(r.shape, r.dtype) for r in result_types),
        attributes=tuple(sorted(attributes.items())),
        num_batch_dims=num_batch_dims,
        einsum=rule.einsum,
        need_replication=rule.need_replication,
        vmap_method=vmap_method,
    )

"""Runs the sharding scenarios on 8 forced CPU devices, in its own process (the rest of the suite
keeps one device): `python child.py` prints one JSON object, scenario -> result."""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import json  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402
import wrong_numbers  # noqa: E402

import jaxcc  # noqa: E402

COLLECTIVES = ("all-gather", "all-to-all", "all-reduce", "collective-permute", "reduce-scatter")
MESH = jax.make_mesh((8,), ("x",))  # Explicit axes, jax.make_mesh's default
AUTO = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
X = np.arange(1, 16 * 6 + 1, dtype=np.float32).reshape(16, 6)


def ops():
    return jaxcc.load_cpp_inline("shard_ops", kernels.SOURCE, kernels.FUNCTIONS,
                                 sharding=kernels.RULES)  # fmt: skip


def hlo_report(f, *args):
    text = jax.jit(f).lower(*args).compile().as_text()
    return {c: text.count(c + "(") + text.count(c + "-start(") for c in COLLECTIVES}


def path_of(f, *args):
    """Which lowering a call took: XLA's batch partitioner or custom_partitioning."""
    text = jax.jit(f).lower(*args).as_text()
    return (
        ("batch" if "num_batch_dims" in text else "")
        + ("custom_partitioning" if "CustomSPMDPartitioning" in text else "")
        + ("shard_map" if "manual_computation" in text else "")
    )


def spec_of(y):
    # Trailing Nones say nothing (P("x") is P("x", None)): left out so specs compare as meant.
    spec = [None if e is None else str(e) for e in y.sharding.spec]
    while spec and spec[-1] is None:
        spec.pop()
    return spec


def put(x, spec, mesh=MESH):
    return jax.device_put(x, NamedSharding(mesh, spec))


def rule_keeps_rows_sharded(mesh=MESH):
    m = ops()
    x = put(X, P("x", None), mesh)
    y = jax.jit(m.row_norm)(x)
    ok = np.allclose(np.asarray(y), X / X.sum(1, keepdims=True), rtol=1e-6)
    return {"correct": ok, "spec": spec_of(y), "hlo": hlo_report(m.row_norm, x),
            "rule": m.row_norm.spec.sharding_rule, "path": path_of(m.row_norm, x)}  # fmt: skip


def rule_on_auto_mesh():
    return rule_keeps_rows_sharded(AUTO)


def columns_sharded_get_gathered_for_need_replication():
    # `c` is need_replication: a column-sharded input must be resharded, never computed split.
    m = ops()
    x = put(np.tile(X, (1, 8)), P(None, "x"))  # 48 columns, 6 per device
    y = jax.jit(m.row_norm)(x)
    xs = np.asarray(x)
    return {"correct": np.allclose(np.asarray(y), xs / xs.sum(1, keepdims=True), rtol=1e-6)}


def rule_less_warns_once():
    m = ops()
    x = put(X, P("x", None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = jax.jit(m.row_norm_plain)(x)
        jax.jit(lambda a: m.row_norm_plain(a) * 2)(x)
    found = [str(w.message) for w in caught if issubclass(w.category, jaxcc.ShardingWarning)]
    jaxcc.set_sharding_check("error")
    try:
        jax.jit(lambda a: m.row_norm_plain(a) + 1)(x)
        raised = None
    except jaxcc.ShardingError as e:
        raised = str(e)
    finally:
        jaxcc.set_sharding_check(None)
    return {"warnings": found, "error": raised, "spec": spec_of(y),
            "hlo": hlo_report(m.row_norm_plain, x),
            "correct": np.allclose(np.asarray(y), X / X.sum(1, keepdims=True), rtol=1e-6)}  # fmt: skip


def attrs_and_two_outputs():
    m = ops()
    x = put(X, P("x", None))
    outs = [jax.ShapeDtypeStruct(X.shape, X.dtype), jax.ShapeDtypeStruct((16,), X.dtype)]

    def f(a):
        return m.scale_rows(a, outs=outs, scale=0.5)

    scaled, sums = jax.jit(f)(x)
    return {"correct": bool(np.allclose(scaled, X * 0.5) and np.allclose(sums, X.sum(1) * 0.5)),
            "specs": [spec_of(scaled), spec_of(sums)], "hlo": hlo_report(f, x),
            "path": path_of(f, x)}  # fmt: skip


def reduction_factor():
    m = ops()
    a = put(np.tile(X, (1, 8)), P(None, "x"))  # k = 48, split over the 8 devices
    v = put(np.linspace(-1, 1, 48).astype(np.float32), P("x"))
    out = jax.ShapeDtypeStruct((16,), np.float32)

    def f(a, v):
        return m.matvec(a, v, outs=out)

    y = jax.jit(f)(a, v)
    expected = np.asarray(a) @ np.asarray(v)
    return {"correct": np.allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-4),
            "hlo": hlo_report(f, a, v)}  # fmt: skip


def elementwise_ellipsis(mesh=MESH):
    m = jaxcc.load_cpp_inline("shard_elem", kernels.SOURCE, ["add_one"],
                              sharding={"add_one": "... -> ..."})  # fmt: skip
    x3 = put(np.arange(8 * 4 * 2, dtype=np.float32).reshape(8, 4, 2), P("x", None, None), mesh)
    y = jax.jit(m.add_one)(x3)
    return {"correct": np.allclose(np.asarray(y), np.asarray(x3) + 1), "spec": spec_of(y),
            "hlo": hlo_report(m.add_one, x3), "path": path_of(m.add_one, x3)}  # fmt: skip


def wrong_rank_is_a_spec_error():
    m = ops()
    x3 = jnp.zeros((8, 4, 2), jnp.float32)
    try:
        jax.jit(m.row_norm)(x3)
        return {"error": None}
    except jaxcc.SpecError as e:
        return {"error": str(e)}


def shard_map_kernels():
    m = ops()
    x = put(X, P("x", None))
    outs = [jax.ShapeDtypeStruct((2, 6), X.dtype), jax.ShapeDtypeStruct((2,), X.dtype)]

    def body(a):
        scaled, sums = m.scale_rows(a, outs=outs, scale=2.0)  # per-shard shapes (2, 6)
        return m.row_norm_plain(scaled), sums, jax.vmap(m.add_one)(a)

    f = jax.jit(jax.shard_map(body, mesh=MESH, in_specs=P("x", None),
                              out_specs=(P("x", None), P("x"), P("x", None))))  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        norm, sums, plus = f(x)
    warned = [str(w.message) for w in caught if issubclass(w.category, jaxcc.ShardingWarning)]
    ok = (np.allclose(norm, X / X.sum(1, keepdims=True), rtol=1e-6)
          and np.allclose(sums, X.sum(1) * 2) and np.allclose(plus, X + 1))  # fmt: skip
    return {"correct": bool(ok), "warnings": warned, "hlo": hlo_report(f, x)}


def forced_custom_partitioning():
    from jaxcc.sharding import rule

    rule.BATCH_PATH[0] = False
    jax.clear_caches()  # the switch is not part of jit's cache key
    try:
        # Explicit axes: the shardings are in the types, shard_map runs the rule while tracing;
        # Auto axes: custom_partitioning, from the shardings XLA proposes.
        return {"rows": rule_keeps_rows_sharded(), "elementwise": elementwise_ellipsis(),
                "rows_auto": rule_keeps_rows_sharded(AUTO),
                "elementwise_auto": elementwise_ellipsis(AUTO)}  # fmt: skip
    finally:
        rule.BATCH_PATH[0] = True
        jax.clear_caches()


def batch_path_under_vmap():
    m = ops()
    x = put(np.stack([X, 2 * X]), P(None, "x", None))
    y = jax.jit(jax.vmap(m.row_norm))(x)  # rows (not the batch) sharded
    xs = np.asarray(x)
    return {"correct": np.allclose(np.asarray(y), xs / xs.sum(2, keepdims=True), rtol=1e-6),
            "spec": spec_of(y), "hlo": hlo_report(jax.vmap(m.row_norm), x)}  # fmt: skip


def vmap_keeps_a_sharded_batch_axis(mesh=MESH):
    # The batch axis of a vmap over a loader function with a rule is split: it stays split, for
    # both lowerings, one level of vmap and two, with an unbatched operand broadcast.
    m = ops()
    out = {}
    batch = np.stack([X * (i + 1) for i in range(8)])  # (8, 16, 6), batch over the devices
    x = put(batch, P("x", None, None), mesh)
    for path, flag in (("batch", True), ("custom_partitioning", False)):
        jaxcc.sharding.rule.BATCH_PATH[0] = flag
        try:
            f = jax.vmap(m.row_norm)
            y = jax.jit(f)(x)
            out[path] = {"correct": np.allclose(np.asarray(y), batch / batch.sum(2, keepdims=True),
                                                rtol=1e-6),
                         "spec": spec_of(y), "hlo": hlo_report(f, x)}  # fmt: skip
        finally:
            jaxcc.sharding.rule.BATCH_PATH[0] = True
    nested = put(batch.reshape(8, 2, 8, 6), P("x", None, None, None), mesh)
    g = jax.vmap(jax.vmap(m.row_norm))
    y = jax.jit(g)(nested)
    ref = np.asarray(nested)
    out["nested"] = {"correct": np.allclose(np.asarray(y), ref / ref.sum(3, keepdims=True),
                                            rtol=1e-6),
                     "spec": spec_of(y), "hlo": hlo_report(g, nested)}  # fmt: skip
    w = put(np.arange(6, dtype=np.float32), P(None), mesh)
    elementwise = jaxcc.load_cpp_inline("shard_mul_rule", kernels.SOURCE, ["mul"],
                                        sharding={"mul": "..., ... -> ..."})  # fmt: skip
    h = jax.vmap(elementwise.mul, in_axes=(0, None))
    rows = put(batch[:, 0, :], P("x", None), mesh)  # (8, 6) against an unbatched (6,)
    y = jax.jit(h)(rows, w)
    # A rule mixing `...` and named operands: the batch axis is one factor of both (issue 25).
    mixed = wrong_numbers.kernel("add_bias", "... i, i -> ... i")
    bias = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    xb, bb = put(batch, P("x", None, None), mesh), put(bias, P("x", None), mesh)
    ym = jax.jit(jax.vmap(mixed))(xb, bb)
    out["mixed_operands"] = {"correct": np.allclose(np.asarray(ym), batch + bias[:, None, :]),
                             "spec": spec_of(ym), "hlo": hlo_report(jax.vmap(mixed), xb, bb)}  # fmt: skip
    out["unbatched_operand"] = {"correct": np.allclose(np.asarray(y), batch[:, 0, :] * np.arange(6)),
                                "spec": spec_of(y), "hlo": hlo_report(h, rows, w)}  # fmt: skip
    return out


def vmap_keeps_a_sharded_batch_axis_on_auto_mesh():
    return vmap_keeps_a_sharded_batch_axis(AUTO)


def scratch_under_a_rule():
    """A function with a jaxcc::Scratch and a rule: every shard gets a workspace sized from its
    own operands (a scratch_bytes function) or the size given (an int), on each lowering."""
    m = jaxcc.load_cpp_inline("shard_scratch", kernels.SCRATCH_SOURCE)
    expected = X / X.sum(1, keepdims=True)
    out = {}

    def per_shard(a):  # one float per row of the call's own operand
        return m.row_norm_scratch(a, scratch_bytes=lambda x: x.shape[0] * 4, exact=True)

    def whole(a):  # the global size, for every shard: enough, not exact
        return m.row_norm_scratch(a, scratch_bytes=a.shape[0] * 4, exact=False)

    for name, mesh in (("explicit", MESH), ("auto", AUTO)):
        x = put(X, P("x", None), mesh)
        for kind, f in (("per_shard", per_shard), ("whole", whole)):
            y = jax.jit(f)(x)
            out[f"{name}_{kind}"] = {
                "correct": np.allclose(np.asarray(y), expected, rtol=1e-6),
                "spec": spec_of(y), "hlo": hlo_report(f, x), "path": path_of(f, x)}  # fmt: skip
        batch = np.stack([X, 2 * X])
        xb = put(batch, P(None, "x", None), mesh)
        y = jax.jit(jax.vmap(per_shard))(xb)
        out[f"{name}_vmap"] = {
            "correct": np.allclose(np.asarray(y), batch / batch.sum(2, keepdims=True), rtol=1e-6),
            "spec": spec_of(y), "hlo": hlo_report(jax.vmap(per_shard), xb)}  # fmt: skip
    # Unsharded, the exact size is the global one: the same function runs as one call.
    y = jax.jit(per_shard)(X)
    out["single"] = {"correct": np.allclose(np.asarray(y), expected, rtol=1e-6)}
    exported = jaxcc.export(
        per_shard,
        jax.ShapeDtypeStruct(X.shape, X.dtype, sharding=NamedSharding(MESH, P("x", None))),
    )
    y = exported.call(put(X, P("x", None)))
    out["export"] = {"correct": np.allclose(np.asarray(y), expected, rtol=1e-6),
                     "spec": spec_of(y)}  # fmt: skip
    return out


SCENARIOS = [rule_keeps_rows_sharded, forced_custom_partitioning, batch_path_under_vmap,
             vmap_keeps_a_sharded_batch_axis, vmap_keeps_a_sharded_batch_axis_on_auto_mesh,
             rule_on_auto_mesh,
             columns_sharded_get_gathered_for_need_replication, rule_less_warns_once,
             attrs_and_two_outputs, reduction_factor, elementwise_ellipsis,
             wrong_rank_is_a_spec_error, shard_map_kernels, scratch_under_a_rule]  # fmt: skip


def main(names):
    results = {}
    for fn in SCENARIOS:
        if names and fn.__name__ not in names:
            continue
        try:
            results[fn.__name__] = fn()
        except Exception:
            results[fn.__name__] = {"exception": traceback.format_exc()}
    print(
        "RESULTS "
        + json.dumps(results, default=lambda o: bool(o) if isinstance(o, np.bool_) else str(o))
    )


def _row_norm_numba(x, out):
    for r in range(x.shape[0]):
        s = 0.0
        for c in range(x.shape[1]):
            s += x[r, c]
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] / s


def custom_kernel_backends():
    import numba

    m = ops()
    numba_fn = numba.njit(_row_norm_numba)
    prim = jaxcc.XLACustomKernel("shard_row_norm", sharding="r c -> r c; need_replication: c")
    prim.def_cpp_kernel(lambda **p: m.row_norm_plain)
    prim.def_numba_kernel(lambda outs, **p: jaxcc.numba_kernel(numba_fn, outs))
    x = put(X, P("x", None))
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    result = {}
    for backend in ("cpp", "numba"):

        def f(a, backend=backend):
            return prim(a, outs=out, backend=backend)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = jax.jit(f)(x)
        result[backend] = {
            "correct": np.allclose(np.asarray(y), X / X.sum(1, keepdims=True), rtol=1e-5),
            "spec": spec_of(y), "hlo": hlo_report(f, x),
            "warnings": [str(w.message) for w in caught
                         if issubclass(w.category, jaxcc.ShardingWarning)]}  # fmt: skip
    try:
        from jax.experimental import pallas as pl

        def pallas_kg(outs, **p):
            def body(x_ref, o_ref):
                o_ref[...] = x_ref[...] / jnp.sum(x_ref[...], axis=1, keepdims=True)

            return pl.pallas_call(body, out_shape=outs[0], interpret=True)

        prim.def_kernel("pallas", "cpu", pallas_kg)

        def g(a):
            return prim(a, outs=out, backend="pallas")

        xa = put(X, P("x", None), AUTO)  # Pallas refuses Explicit mesh axes outside shard_map
        y = jax.jit(g)(xa)
        x_for_hlo = xa
        result["pallas"] = {
            "correct": np.allclose(np.asarray(y), X / X.sum(1, keepdims=True), rtol=1e-5),
            "spec": spec_of(y), "hlo": hlo_report(g, x_for_hlo)}  # fmt: skip
    except ImportError as e:
        result["pallas"] = {"skipped": str(e)}
    try:
        prim(jnp.zeros((4, 2, 2)), outs=jax.ShapeDtypeStruct((4, 2, 2), jnp.float32))
        result["rank_error"] = None
    except jaxcc.SpecError as e:
        result["rank_error"] = str(e)
    return result


def custom_kernel_vmap_keeps_batch_sharded():
    elem = jaxcc.load_cpp_inline("shard_elem", kernels.SOURCE, ["add_one"],
                                 sharding={"add_one": "... -> ..."})  # fmt: skip
    prim = jaxcc.XLACustomKernel("shard_add_one", sharding="i -> i")
    prim.def_cpp_kernel(lambda **p: elem.add_one, vectorized=True)
    x = put(X[:8], P("x", None))

    def f(a):
        return jax.vmap(lambda row: prim(row, outs=jax.ShapeDtypeStruct(row.shape, row.dtype)))(a)

    y = jax.jit(f)(x)
    return {"correct": np.allclose(np.asarray(y), X[:8] + 1), "spec": spec_of(y),
            "hlo": hlo_report(f, x)}  # fmt: skip


def factor_sizes_must_agree():
    # `k` is 48 in the matrix and 40 in the vector: a SpecError while tracing, before XLA.
    m = ops()
    a = put(np.ones((16, 48), np.float32), P("x", None))
    v = put(np.ones(40, np.float32), P(None))
    try:
        jax.jit(lambda a, v: m.matvec(a, v, outs=jax.ShapeDtypeStruct((16,), jnp.float32)))(a, v)
    except jaxcc.SpecError as e:
        return {"error": str(e)}
    return {"error": None}


def uneven_split_is_reported():
    # 13 rows over 8 devices cannot be split evenly: the rows are gathered, and the user hears.
    m = ops()
    xs = np.arange(1, 13 * 6 + 1, dtype=np.float32).reshape(13, 6)
    outs = [jax.ShapeDtypeStruct((13, 6), jnp.float32), jax.ShapeDtypeStruct((13,), jnp.float32)]

    def f(a):
        a = jax.lax.with_sharding_constraint(a, NamedSharding(AUTO, P("x", None)))
        return m.scale_rows(a, outs=outs, scale=2.0)  # "r c -> r c, r; ...": custom_partitioning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaled, sums = jax.jit(f)(jnp.asarray(xs))
    return {
        "correct": bool(
            np.allclose(np.asarray(scaled), 2 * xs) and np.allclose(np.asarray(sums), 2 * xs.sum(1))
        ),
        "warnings": [str(w.message) for w in caught if "do not divide" in str(w.message)],
    }


def custom_kernel_per_element_vmap_keeps_batch_sharded(mesh=MESH):
    # A kernel that is not vectorised runs once per element, but of each shard: the batch axis
    # is the rule's extra factor, so it is never gathered.
    m = ops()
    name = f"shard_row_norm_seq_{mesh.axis_types[0]}"
    prim = jaxcc.XLACustomKernel(name, sharding="r c -> r c; need_replication: c")
    prim.def_cpp_kernel(lambda **p: m.row_norm)
    batch = np.stack([X * (i + 1) for i in range(8)])
    x = put(batch, P("x", None, None), mesh)

    def f(a):
        return jax.vmap(lambda e: prim(e, outs=jax.ShapeDtypeStruct(e.shape, e.dtype)))(a)

    y = jax.jit(f)(x)
    return {"correct": np.allclose(np.asarray(y), batch / batch.sum(2, keepdims=True), rtol=1e-6),
            "spec": spec_of(y), "hlo": hlo_report(f, x)}  # fmt: skip


def custom_kernel_per_element_vmap_on_auto_mesh():
    return custom_kernel_per_element_vmap_keeps_batch_sharded(AUTO)


def custom_kernel_grad():
    from jax.interpreters import ad

    m = ops()
    prim = jaxcc.XLACustomKernel("shard_mul", sharding="..., ... -> ...")
    prim.def_cpp_kernel(lambda **p: m.mul)

    def mul(x, y):
        return prim(x, y, outs=[jax.ShapeDtypeStruct(x.shape, x.dtype)])

    prim.def_jvp_rule2(lambda t, x, y, outs, **kw: mul(t, y), lambda t, x, y, outs, **kw: mul(x, t))

    def transpose(cts, x, y, **params):
        (ct,) = cts
        if type(ct) is ad.Zero:
            return None, None
        ct_x = mul(ct, y)[0] if ad.is_undefined_primal(x) else None
        ct_y = mul(x, ct)[0] if ad.is_undefined_primal(y) else None
        return ct_x, ct_y

    prim.def_transpose_rule(transpose)
    x = put(X, P("x", None))
    w = put(np.cos(X), P("x", None))

    def loss(a, b):
        return jnp.sum(mul(a, b)[0] ** 2)

    grad_jit = jax.jit(jax.grad(loss))
    g = grad_jit(x, w)
    expected = 2 * X * np.cos(X) ** 2
    body = jax.shard_map(lambda a, b: jax.grad(lambda u: jnp.sum(mul(u, b)[0] ** 2))(a),
                         mesh=MESH, in_specs=(P("x", None), P("x", None)),
                         out_specs=P("x", None))  # fmt: skip
    g2 = jax.jit(body)(x, w)
    return {"jit_correct": np.allclose(np.asarray(g), expected, rtol=1e-4),
            "jit_spec": spec_of(g), "jit_hlo": hlo_report(jax.grad(loss), x, w),
            "shard_map_correct": np.allclose(np.asarray(g2), expected, rtol=1e-4)}  # fmt: skip


SCENARIOS += [
    custom_kernel_backends,
    custom_kernel_vmap_keeps_batch_sharded,
    custom_kernel_per_element_vmap_keeps_batch_sharded,
    custom_kernel_per_element_vmap_on_auto_mesh,
    custom_kernel_grad,
    factor_sizes_must_agree,
    uneven_split_is_reported,
    *wrong_numbers.SCENARIOS,
]


if __name__ == "__main__":
    assert len(jax.devices()) == 8, jax.devices()
    main(sys.argv[1:])

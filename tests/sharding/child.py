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


def spec_of(y):
    return [None if e is None else str(e) for e in y.sharding.spec]


def put(x, spec, mesh=MESH):
    return jax.device_put(x, NamedSharding(mesh, spec))


def rule_keeps_rows_sharded(mesh=MESH):
    m = ops()
    x = put(X, P("x", None), mesh)
    y = jax.jit(m.row_norm)(x)
    ok = np.allclose(np.asarray(y), X / X.sum(1, keepdims=True), rtol=1e-6)
    return {"correct": ok, "spec": spec_of(y), "hlo": hlo_report(m.row_norm, x),
            "rule": m.row_norm.spec.sharding_rule}  # fmt: skip


def rule_on_auto_mesh():
    return rule_keeps_rows_sharded(AUTO)


def columns_sharded_get_gathered_for_need_replication():
    # `c` is need_replication: a column-sharded input must be resharded, never computed split.
    m = ops()
    x = put(X.T.copy().T, P(None, "x"), MESH) if False else put(np.tile(X, (1, 8))[:, :48], P(None, "x"))
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
            "specs": [spec_of(scaled), spec_of(sums)], "hlo": hlo_report(f, x)}  # fmt: skip


def reduction_factor():
    m = ops()
    a = put(X, P(None, "x")) if False else put(np.tile(X, (1, 8))[:, :48], P(None, "x"))
    v = put(np.linspace(-1, 1, 48).astype(np.float32), P("x"))
    out = jax.ShapeDtypeStruct((16,), np.float32)

    def f(a, v):
        return m.matvec(a, v, outs=out)

    y = jax.jit(f)(a, v)
    expected = np.asarray(a) @ np.asarray(v)
    return {"correct": np.allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-4),
            "hlo": hlo_report(f, a, v)}  # fmt: skip


def elementwise_ellipsis():
    m = jaxcc.load_cpp_inline("shard_elem", kernels.SOURCE, ["add_one"],
                              sharding={"add_one": "... -> ..."})  # fmt: skip
    x3 = put(np.arange(8 * 4 * 2, dtype=np.float32).reshape(8, 4, 2), P("x", None, None))
    y = jax.jit(m.add_one)(x3)
    return {"correct": np.allclose(np.asarray(y), np.asarray(x3) + 1), "spec": spec_of(y),
            "hlo": hlo_report(m.add_one, x3)}  # fmt: skip


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


SCENARIOS = [rule_keeps_rows_sharded, rule_on_auto_mesh,
             columns_sharded_get_gathered_for_need_replication, rule_less_warns_once,
             attrs_and_two_outputs, reduction_factor, elementwise_ellipsis,
             wrong_rank_is_a_spec_error, shard_map_kernels]  # fmt: skip


def main(names):
    results = {}
    for fn in SCENARIOS:
        if names and fn.__name__ not in names:
            continue
        try:
            results[fn.__name__] = fn()
        except Exception:
            results[fn.__name__] = {"exception": traceback.format_exc()}
    print("RESULTS " + json.dumps(results, default=lambda o: bool(o) if isinstance(o, np.bool_) else str(o)))


if __name__ == "__main__":
    assert len(jax.devices()) == 8, jax.devices()
    main(sys.argv[1:])

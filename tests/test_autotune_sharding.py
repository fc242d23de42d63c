"""Tuning inside sharded calls (issue 40, decision 159c): each shard chooses its variant by its own
(local) operand shapes, on every lowering jaxcc uses for a rule: shard_map (Explicit mesh axes),
custom_partitioning (Auto axes), and a rule that splits only leading dimensions, which an untuned
function sends to XLA's batch partitioner and a tuned one to custom_partitioning. Runs on 4
forced CPU devices in a child process, so the rest of the suite keeps one device."""

import textwrap

import pytest
from conftest import printed_results, run_python
from test_autotune import REPEAT_SOURCE

CHILD = textwrap.dedent("""
    import json, re
    import jax, numpy as np
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import jaxcc
    from jaxcc.tune import store as _tune_store

    SOURCE = {source!r}
    RULES = {{"batch": "r c -> r c; need_replication: c", "elementwise": "r c -> r c"}}
    out = {{}}
    for rule_name, rule in RULES.items():
        for axes in ("explicit", "auto"):
            kind = AxisType.Explicit if axes == "explicit" else AxisType.Auto
            mesh = jax.make_mesh((4,), ("x",), axis_types=(kind,))
            name = f"tuned_shard_{{rule_name}}_{{axes}}"
            mod = jaxcc.load_cpp_inline(name, SOURCE, sharding={{"bump": rule}},
                                        tune={{"bump": {{"REPEAT": [20000, 1]}}}})
            host = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
            x = jax.device_put(host, NamedSharding(mesh, P("x", None)))
            f = jax.jit(mod.bump)
            y = f(x)
            hlo = f.lower(x).compile().as_text()
            calls = re.findall(r'(f32\\[[0-9,]+\\][^ ]*) custom-call\\(.*?custom_call_target="([^"]+)"', hlo)
            eager = mod.bump(x)
            keys = sorted({{r["key"] for r in _tune_store.list_decisions(jaxcc.get_cache_dir())
                           if r["module"] == name}})
            out[f"{{rule_name}}_{{axes}}"] = {{
                "correct": bool(np.array_equal(np.asarray(y), host + 1)
                                and np.array_equal(np.asarray(eager), host + 1)),
                "keys": keys,
                "calls": calls,
                "spec": [str(s) for s in y.sharding.spec],
            }}
    print("RESULTS " + json.dumps(out))
""")


@pytest.fixture(scope="module")
def results():
    code = CHILD.format(source=REPEAT_SOURCE)
    done = run_python(  # in the session's cache: its frame runtime is compiled already
        code, {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}, timeout=600
    )
    return printed_results(done)


@pytest.mark.parametrize("rule", ["batch", "elementwise"])
@pytest.mark.parametrize("axes", ["explicit", "auto"])
def test_each_shard_is_tuned_and_called_by_its_local_shapes(results, rule, axes):
    r = results[f"{rule}_{axes}"]
    assert r["correct"]
    assert r["spec"][0] == "x"  # the rows stay split
    assert "float32[4,8]" in r["keys"], r["keys"]  # the shard's shape, not the global [16,8]
    assert r["calls"], "no custom call in the compiled program"
    for shape, target in r["calls"]:
        assert shape.startswith("f32[4,8]"), r["calls"]  # the per-shard call
        assert target == f"tuned_shard_{rule}_{axes}@tune-REPEAT1.bump", r["calls"]

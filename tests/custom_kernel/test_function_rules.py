"""An XLACustomKernel whose cpp generator returns a jaxcc function with its own sharding rule
(decision 162): it runs eagerly, under jit, vmap and grad (it died with JAX's "Please file a
bug" AssertionError), and on a 4-device mesh the function's rule keeps the call split on each
path jaxcc has for the plain function; a primitive rule that splits what the function's rule
keeps whole is a SpecError."""

import os
import subprocess
import sys

import jax
import numpy as np
import pytest
from conftest import printed_results
from function_rule_kernels import RULES, X, call, expected, primitive

import jaxcc

CHILD = os.path.join(os.path.dirname(__file__), "function_rules_child.py")


@pytest.mark.parametrize("function", ["scale", "row_norm"])
@pytest.mark.parametrize("rule", ["none", "same"])
def test_eager_jit_and_vmap_equal_the_function(function, rule):
    rule = RULES[function] if rule == "same" else None
    want = expected(function, X)
    np.testing.assert_allclose(call(function, X, rule), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda x: call(function, x, rule))(X), want, rtol=1e-6)
    batch = X.reshape(4, 2, 6)
    for vectorized in (False, True) if function == "scale" else (False,):
        got = jax.vmap(lambda x, v=vectorized: call(function, x, rule, v))(batch)
        np.testing.assert_allclose(got, expected(function, batch), rtol=1e-6)


def test_grad_through_jvp_and_transpose_rules():
    grad = jax.grad(lambda x: (call("scale", x) * x).sum())
    np.testing.assert_allclose(grad(X), 4 * X, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(grad)(X), 4 * X, rtol=1e-6)


def test_the_catalogue_function_reported_as_failing():
    """The reproduction: check_kernel_catalogue's `scale`, loaded with "... -> ...", as the cpp
    kernel of an XLACustomKernel."""
    import check_kernel_catalogue as catalogue

    kernel = jaxcc.XLACustomKernel("xck_catalogue_scale")
    kernel.def_cpp_kernel(lambda **_: catalogue.module().scale)
    out = jax.ShapeDtypeStruct(catalogue.X.shape, catalogue.X.dtype)
    np.testing.assert_allclose(kernel(catalogue.X, outs=out, factor=2.0), catalogue.X * 2)
    got = jax.jit(lambda x: kernel(x, outs=out, factor=2.0))(catalogue.X)
    np.testing.assert_allclose(got, catalogue.X * 2)


@pytest.mark.parametrize("jit", [False, True])
def test_primitive_rule_splitting_what_the_function_keeps_whole_is_a_spec_error(jit):
    # "r c -> r c" lets jaxcc split c; row_norm's own rule needs whole rows.
    def f(x):
        return call("row_norm", x, rule="r c -> r c")

    with pytest.raises(jaxcc.SpecError) as info:
        (jax.jit(f) if jit else f)(X)
    message = str(info.value)
    assert "row_norm" in message and "need_replication" in message
    assert 'sharding="r c -> r c; need_replication: c"' in message  # the fix


def test_primitive_rule_stricter_than_the_function_is_allowed():
    # Keeping a dimension whole that the function could split is only less parallel.
    got = call("scale", X, rule="r c -> r c; need_replication: c")
    np.testing.assert_allclose(got, X * 2)


def test_check_kernel_on_one_device():
    kernel = primitive("scale")
    report = jaxcc.check_kernel(kernel, X, outs=jax.ShapeDtypeStruct(X.shape, X.dtype),
                                factor=2.0, skip=["bounds"])  # fmt: skip
    assert report.ok, report


@pytest.fixture(scope="module")
def mesh_results():
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run([sys.executable, CHILD], capture_output=True, text=True, env=env,
                          timeout=600)  # fmt: skip
    return printed_results(proc)


# The path each call takes on 4 devices (the plain function's own path where one is named).
PATHS = {
    "auto": {"scale": "custom_partitioning", "row_norm": "batch"},
    "explicit": {"scale": "shard_map", "row_norm": "batch"},
}


def scenario(mesh_results, mesh, name):
    results = mesh_results[mesh]
    assert "exception" not in results, results.get("exception")
    return results[name]


@pytest.mark.parametrize("mesh", ["auto", "explicit"])
@pytest.mark.parametrize("function", ["scale", "row_norm"])
def test_the_functions_rule_keeps_the_call_split(mesh_results, mesh, function):
    r = scenario(mesh_results, mesh, f"{function}_jit")
    plain = scenario(mesh_results, mesh, f"{function}_plain")
    assert r["correct"] and plain["correct"]
    assert r["gathers"] == 0 and r["spec"] == ["x"]
    assert r["path"] == plain["path"] == PATHS[mesh][function]
    assert r["warnings"] == []  # no "has no sharding rule" false alarm


@pytest.mark.parametrize("mesh", ["auto", "explicit"])
@pytest.mark.parametrize("case", ["scale_shard_map", "row_norm_shard_map",
                                  "scale_both_rules_vmap", "row_norm_both_rules_vmap",
                                  "scale_vectorized_vmap", "scale_grad",
                                  "scale_jit_check_error"])  # fmt: skip
def test_every_transform_stays_split(mesh_results, mesh, case):
    r = scenario(mesh_results, mesh, case)
    assert r["correct"], r
    assert r["gathers"] == 0 and r["spec"] == ["x"], r
    assert r["warnings"] == [], r


@pytest.mark.parametrize("mesh", ["auto", "explicit"])
def test_sequential_vmap_of_a_rule_less_primitive_gathers_the_batch(mesh_results, mesh):
    # Right either way; on Explicit axes JAX refused the scan ("0th dimension of all xs should
    # be replicated"), now jaxcc reshards and says so.
    r = scenario(mesh_results, mesh, "scale_sequential_vmap")
    assert r["correct"]
    if mesh == "explicit":
        assert len(r["warnings"]) == 1 and "vectorized=True" in r["warnings"][0]


def test_check_kernel_sharding_row_checks_the_functions_rule(mesh_results):
    rows = mesh_results["check_kernel"]
    assert "exception" not in rows, rows.get("exception")
    assert rows["scale"][0] == "passed", rows["scale"]
    assert rows["row_total"][0] == "failed" and "r k -> r k" in rows["row_total"][1]

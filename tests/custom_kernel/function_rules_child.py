"""4 forced CPU devices: XLACustomKernels over jaxcc functions with their own rules, on Auto and
Explicit meshes. `python function_rules_child.py` prints `RESULTS <json>`, scenario -> result."""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import json  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import check_kernel_catalogue as catalogue  # noqa: E402
import function_rule_kernels as k  # noqa: E402

import jaxcc  # noqa: E402

GATHERS = ("all-gather", "all-to-all")


def measure(f, x, want):
    """Numbers against one device, the gathers in the compiled program, the output's spec, the
    lowering path, and the ShardingWarnings said."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = jax.jit(f)(x)
        lowered = jax.jit(f).lower(x)
    text, compiled = lowered.as_text(), lowered.compile().as_text()
    spec = [None if e is None else str(e) for e in getattr(y.sharding, "spec", ())]
    while spec and spec[-1] is None:
        spec.pop()
    return {
        "correct": bool(np.allclose(np.asarray(y), want, rtol=1e-6)),
        "gathers": sum(compiled.count(op + "(") + compiled.count(op + "-start(") for op in GATHERS),
        "spec": spec,
        "path": ("batch" if "num_batch_dims" in text else "")
        + ("custom_partitioning" if "CustomSPMDPartitioning" in text else "")
        + ("shard_map" if "manual_computation" in text else ""),
        "warnings": [
            str(w.message) for w in caught if issubclass(w.category, jaxcc.ShardingWarning)
        ],
    }


def scenarios(mesh_type):
    mesh = jax.make_mesh((4,), ("x",), axis_types=(mesh_type,))
    rows = jax.device_put(k.X, NamedSharding(mesh, P("x", None)))
    batch = jax.device_put(k.X.reshape(4, 2, 6), NamedSharding(mesh, P("x", None, None)))
    out = {}
    for function in ("scale", "row_norm"):
        want = k.expected(function, k.X)
        out[f"{function}_jit"] = measure(lambda x, f=function: k.call(f, x), rows, want)
        out[f"{function}_plain"] = measure(
            lambda x, f=function: getattr(k.module(), f)(x, **({"factor": 2.0} if f == "scale" else {})),
            rows, want)  # fmt: skip
        out[f"{function}_shard_map"] = measure(
            jax.shard_map(lambda x, f=function: k.call(f, x), mesh=mesh, in_specs=P("x"),
                          out_specs=P("x")), rows, want)  # fmt: skip
        # The primitive carries the function's own rule too: its rule splits, per element.
        out[f"{function}_both_rules_vmap"] = measure(
            jax.vmap(lambda x, f=function: k.call(f, x, rule=k.RULES[f])), batch,
            k.expected(function, k.X.reshape(4, 2, 6)))  # fmt: skip
    out["scale_vectorized_vmap"] = measure(
        jax.vmap(lambda x: k.call("scale", x, vectorized=True)), batch, k.X.reshape(4, 2, 6) * 2
    )
    out["scale_grad"] = measure(jax.grad(lambda x: (k.call("scale", x) * x).sum()), rows, 4 * k.X)
    # A primitive without a rule whose kernel is not vectorised scans the whole batch.
    out["scale_sequential_vmap"] = measure(
        jax.vmap(lambda x: k.call("scale", x)), batch, k.X.reshape(4, 2, 6) * 2
    )
    jaxcc.set_sharding_check("error")
    try:
        out["scale_jit_check_error"] = measure(lambda x: k.call("scale", x) + 1, rows, k.X * 2 + 1)
    finally:
        jaxcc.set_sharding_check(None)
    return out


def check_kernel_rows():
    """check_kernel's sharding row on XLACustomKernels without rules: the right rule of `scale`
    passes, the catalogue's row_total ("r k -> r k", k must stay whole) fails."""
    rows = {}
    for name, fn, x, attrs in (("scale", k.module().scale, k.X, {"factor": 2.0}),
                               ("row_total", catalogue.module().row_total, catalogue.M, {})):  # fmt: skip
        kernel = jaxcc.XLACustomKernel(f"xck_check_{name}")
        kernel.def_cpp_kernel(lambda fn=fn, **_: fn)
        report = jaxcc.check_kernel(kernel, x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype),
                                    checks=["sharding"], **attrs)  # fmt: skip
        row = next(r for r in report.rows if r.name == "sharding")
        rows[name] = [row.status, row.detail]
    return rows


def main():
    results = {}
    for label, mesh_type in (("auto", AxisType.Auto), ("explicit", AxisType.Explicit)):
        try:
            results[label] = scenarios(mesh_type)
        except Exception:  # noqa: BLE001
            results[label] = {"exception": traceback.format_exc()}
    try:
        results["check_kernel"] = check_kernel_rows()
    except Exception:  # noqa: BLE001
        results["check_kernel"] = {"exception": traceback.format_exc()}
    print("RESULTS " + json.dumps(results))


if __name__ == "__main__":
    main()

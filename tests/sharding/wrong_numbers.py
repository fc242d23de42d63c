"""Scenarios of issue 25 (run by child.py on 8 forced CPU devices): the four rules that gave
wrong numbers with no warning, and the audit of the rest of the partition logic. Each runs on
Explicit axes (the shard_map lowering) and Auto axes (custom_partitioning), on meshes of one and
two axes, so no lowering escapes its test."""

import warnings

import family
import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxcc

COLLECTIVES = ("all-gather", "all-to-all", "all-reduce", "collective-permute", "reduce-scatter")
TYPES = {"explicit": AxisType.Explicit, "auto": AxisType.Auto}


def mesh(shape, names, kind):
    count = int(np.prod(shape))
    return jax.make_mesh(shape, names, axis_types=(TYPES[kind],) * len(shape),
                         devices=jax.devices()[:count])  # fmt: skip


def kernel(fn, rule):
    m = jaxcc.load_cpp_inline("wrong_numbers", family.SOURCE, family.KERNELS,
                              sharding={fn: rule}, replace=True)  # fmt: skip
    return m[fn]


def put(x, m, *spec):
    return jax.device_put(np.asarray(x, np.float32), NamedSharding(m, P(*spec)))


def run(f, *args):
    """(outputs as lists, collective counts, ShardingWarnings) of jax.jit(f)(*args)."""
    from jaxcc.sharding import gather_check

    gather_check._gathers_reported.clear()  # each scenario hears its own gathers
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = jax.jit(f).lower(*args).compile()
        outs = compiled(*args)
    text = compiled.as_text()
    counts = {c: text.count(c + "(") + text.count(c + "-start(") for c in COLLECTIVES}
    said = [str(w.message) for w in caught if issubclass(w.category, jaxcc.ShardingWarning)]
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return [np.asarray(o).tolist() for o in outs], counts, said


def undeclared_reduction_factor():
    # Case 1: "r c -> r" for a row sum: `c` only in the input. Refused at load with both fixes;
    # with `reduction: c` the column-split sum is right on both lowerings.
    try:
        kernel("row_sum", "r c -> r")
        error = None
    except jaxcc.SpecError as e:
        error = str(e)
    x = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)
    out = {"error": error}
    for kind in TYPES:
        m = mesh((4,), ("x",), kind)
        for rule in ("r c -> r; reduction: c", "r c -> r; need_replication: c"):
            f = kernel("row_sum", rule)
            outs, counts, said = run(lambda a, f=f: f(a, outs=jax.ShapeDtypeStruct((4,), "float32")),
                                     put(x, m, None, "x"))  # fmt: skip
            out[f"{kind} {rule}"] = {"correct": outs[0] == x.sum(1).tolist(), "hlo": counts,
                                     "warnings": said}  # fmt: skip
    return out


def permutation_factor():
    # Case 2: rolling a 16-vector split over 4 devices: every device rolled its own piece.
    out = {}
    x = np.arange(16, dtype=np.float32)
    for kind in TYPES:
        m = mesh((4,), ("x",), kind)
        f = kernel("roll", "i -> i; permutation: i")
        outs, counts, said = run(f, put(x, m, "x"))
        out[kind] = {"got": outs[0], "correct": outs[0] == np.roll(x, -1).tolist(),
                     "warnings": said}  # fmt: skip
    return out


def reduction_sums_only_its_outputs():
    # Case 3: "r k, r -> r, r; reduction: k" (a row sum and a copy), k split over 4 devices:
    # the psum also hit the copy ([0, 4, 8, 12]).
    out = {}
    a = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)
    u = np.arange(4, dtype=np.float32)
    types = [jax.ShapeDtypeStruct((4,), "float32")] * 2
    for kind in TYPES:
        m = mesh((4,), ("x",), kind)
        f = kernel("sum_and_copy", "r k, r -> r, r; reduction: k")
        outs, counts, said = run(lambda a, u, f=f: f(a, u, outs=types), put(a, m, None, "x"),
                                 put(u, m, None))  # fmt: skip
        out[kind] = {"copy": outs[1], "sums_correct": outs[0] == a.sum(1).tolist(),
                     "warnings": said}  # fmt: skip
    return out


def vmap_of_mixed_operands():
    # Case 4: "... i, i -> ... i" under jax.vmap: the batch axis was two unrelated factors.
    out = {}
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    b = np.arange(2 * 4, dtype=np.float32).reshape(2, 4) * 10
    expected = (x + b[:, None, :]).tolist()
    f = jax.vmap(kernel("add_bias", "... i, i -> ... i"))
    for kind in TYPES:
        m = mesh((2, 2), ("a", "b"), kind)
        # JAX refuses batch axes sharded apart on Explicit axes: there both sit on `a`.
        spec_b = "b" if kind == "auto" else "a"
        outs, counts, said = run(f, put(x, m, "a"), put(b, m, spec_b))
        out[kind] = {"correct": outs[0] == expected}
        same, counts, _ = run(f, put(x, m, "a", None, "b"), put(b, m, "a", "b"))
        out[kind + "_same_axes"] = {"correct": same[0] == expected, "hlo": counts}
        unbatched = jax.vmap(kernel("add_bias", "... i, i -> ... i"), in_axes=(0, None))
        outs, counts, _ = run(unbatched, put(x, m, "a"), put(b[0], m, None))
        out[kind + "_unbatched"] = {"correct": outs[0] == (x + b[0]).tolist(), "hlo": counts}
    return out


def need_replication_on_every_lowering():
    # `c` is need_replication: a column-split input is gathered (and the user told), never
    # computed split, on the shard_map and custom_partitioning lowerings too (the batch path
    # alone reached the old test).
    from jaxcc.sharding import rule as sharding

    out = {}
    x = np.arange(1, 8 * 8 + 1, dtype=np.float32).reshape(8, 8)
    expected = (x / x.sum(1, keepdims=True)).tolist()
    for kind in TYPES:
        m = mesh((4, 2), ("a", "b"), kind)
        for batch_path in (True, False):
            sharding.BATCH_PATH[0] = batch_path
            jax.clear_caches()
            try:
                f = kernel("row_norm", "r c -> r c; need_replication: c")
                outs, counts, said = run(f, put(x, m, "b", "a"))
            finally:
                sharding.BATCH_PATH[0] = True
                jax.clear_caches()
            out[f"{kind} batch_path={batch_path}"] = {
                "correct": np.allclose(outs[0], expected, rtol=1e-6),
                "warnings": said,
            }
    return out


def reduction_on_every_lowering():
    # A split reduction factor is all-reduced on both lowerings and on a 2-D mesh, never
    # gathered.
    out = {}
    a = np.linspace(-1, 1, 8 * 16, dtype=np.float32).reshape(8, 16)
    v = np.linspace(2, 3, 16, dtype=np.float32)
    f = kernel("matvec", "r k, k -> r; reduction: k")
    call = lambda a, v: f(a, v, outs=jax.ShapeDtypeStruct((8,), "float32"))  # noqa: E731
    for kind in TYPES:
        m = mesh((4, 2), ("a", "b"), kind)
        outs, counts, _ = run(call, put(a, m, "b", "a"), put(v, m, "a"))
        out[kind] = {"correct": np.allclose(outs[0], a @ v, rtol=1e-5, atol=1e-5), "hlo": counts}
    return out


def audit():
    # The rest of the partition logic: a factor over two mesh axes, operands that disagree,
    # compound factors, scalars, `...` of different ranks.
    out = {}
    x = np.arange(1, 8 * 8 + 1, dtype=np.float32).reshape(8, 8)
    for kind in TYPES:
        m = mesh((4, 2), ("a", "b"), kind)
        two_axes, counts, _ = run(kernel("affine", "i j -> i j"), put(x, m, ("a", "b"), None))
        out[f"{kind} two_axes"] = {"correct": two_axes[0] == (2 * x + 1).tolist(), "hlo": counts}
        f = kernel("mul", "i j, i j -> i j")
        outs, counts, said = run(f, put(x, m, "a", None), put(x, m, None, "a"))
        out[f"{kind} disagree"] = {"correct": outs[0] == (x * x).tolist(), "warnings": said}
        f = kernel("flatten", "i j -> (i j)")
        y = np.arange(8 * 2, dtype=np.float32).reshape(8, 2)
        outs, counts, said = run(lambda a, f=f: f(a, outs=jax.ShapeDtypeStruct((16,), "float32")),
                                 put(y, m, "a", None))  # fmt: skip
        out[f"{kind} compound"] = {"correct": outs[0] == (y - np.arange(2)).ravel().tolist(),
                                   "warnings": said}  # fmt: skip
        f = kernel("scale", "i j, -> i j")
        outs, counts, _ = run(f, put(x, m, "a", "b"), put(np.float32(3), m))
        out[f"{kind} scalar"] = {"correct": outs[0] == (3 * x).tolist(), "hlo": counts}
    try:
        f = kernel("mul", "..., ... -> ...")
        jax.jit(f)(np.ones((2, 4), np.float32), np.ones((2, 2, 4), np.float32))
        out["ellipsis_ranks"] = None
    except jaxcc.SpecError as e:
        out["ellipsis_ranks"] = str(e)
    return out


def export_round_trip():
    # jax.export keeps the partitioned call on Explicit axes (shard_map serializes); on Auto
    # axes custom_partitioning cannot be serialized: an ExportError naming the fix.
    a = np.linspace(-1, 1, 8 * 16, dtype=np.float32).reshape(8, 16)
    v = np.linspace(2, 3, 16, dtype=np.float32)
    f = kernel("matvec", "r k, k -> r; reduction: k")
    call = lambda a, v: f(a, v, outs=jax.ShapeDtypeStruct((8,), "float32"))  # noqa: E731
    out = {}
    for kind in TYPES:
        m = mesh((4, 2), ("a", "b"), kind)
        args = [put(a, m, "b", "a"), put(v, m, "a")]
        shapes = [jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding) for x in args]
        try:
            blob = jaxcc.export(jax.jit(call), *shapes).serialize()
        except jaxcc.ExportError as e:
            out[kind] = {"error": str(e)}
            continue
        outs, counts, _ = run(jaxcc.deserialize(blob).call, *args)
        out[kind] = {"correct": np.allclose(outs[0], a @ v, rtol=1e-5, atol=1e-5), "hlo": counts}
    # Nothing split on an Explicit mesh: a plain call, which exports (found by the fuzz: it went
    # through custom_partitioning and the export failed).
    m = mesh((4, 2), ("a", "b"), "explicit")
    args = [put(a, m), put(v, m)]
    shapes = [jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding) for x in args]
    outs, counts, _ = run(jaxcc.deserialize(jaxcc.export(jax.jit(call), *shapes).serialize()).call,
                          *args)  # fmt: skip
    out["explicit_replicated"] = {"correct": np.allclose(outs[0], a @ v, rtol=1e-5, atol=1e-5)}
    return out


SCENARIOS = [undeclared_reduction_factor, permutation_factor, reduction_sums_only_its_outputs,
             vmap_of_mixed_operands, need_replication_on_every_lowering,
             reduction_on_every_lowering, audit, export_round_trip]  # fmt: skip

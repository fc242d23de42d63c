"""The differential sharding test (issue 25), run in its own process on 8 forced CPU devices:
Hypothesis draws a kernel of the family (family.py) with a rule it satisfies, a mesh (1-D 8,
2-D 4x2 and 2x4, 3-D 2x2x2; Auto and Explicit axes), input shardings (any axis or pair of axes
per dimension, none, some, along factors the rule forbids) and a transform (jax.jit, jax.vmap
inside and outside jit, shard_map, jax.grad through an XLACustomKernel, a bundle from
load_library, a jax.export round trip), and compares the result with the same call on one
device. Where the shardings are ones the rule allows, the compiled program must also hold no
all-gather or all-to-all, and an all-reduce only for a split reduction factor.

    python fuzz.py N [SEED]   # N cases; prints "FUZZ {json}" (cases, failures, seconds)
"""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import hypothesis  # noqa: E402
import jax  # noqa: E402
import numpy as np  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import family  # noqa: E402
import fuzz_backends  # noqa: E402
import fuzz_world  # noqa: E402

N = 8  # the unit of every size: a multiple of every mesh axis
B = 8  # the batch of the vmap and shard_map transforms
SHAPES = [(8,), (4, 2), (2, 4), (2, 2, 2)]
MESHES = {
    f"{'x'.join(map(str, s))}-{t.name}": jax.make_mesh(s, ("a", "b", "c")[: len(s)],
                                                       axis_types=(t,) * len(s))
    for s in SHAPES for t in (AxisType.Explicit, AxisType.Auto)
}  # fmt: skip
TRANSFORMS = [
    "jit",
    "vmap_in_jit",
    "jit_in_vmap",
    "shard_map",
    "bundle",
    "export",
    "grad",
    "backend",
]
COLLECTIVES = ("all-gather", "all-to-all", "all-reduce")
SEEN: set = set()  # the distinct cases drawn (Hypothesis may draw one twice)
BACKENDS: list = []  # the XLACustomKernel backends that run here, filled in main()
stats = {"cases": 0, "guarded": 0, "by_transform": {}, "by_mesh": {}, "failures": []}


def spec_entries(draw, mesh, shape, free):
    """One PartitionSpec entry per dimension: None, an axis or a pair of axes, each axis at
    most once per operand and only where it divides the dimension."""
    entries = []
    for size in shape:
        options = [()] + [(a,) for a in free] + [(a, b) for a in free for b in free if a != b]
        options = [o for o in options if size % int(np.prod([mesh.shape[a] for a in o])) == 0]
        axes = draw(st.sampled_from(options))
        free = [a for a in free if a not in axes]
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return entries


@st.composite
def cases(draw):
    kind = draw(st.integers(0, len(family.CASES) - 1))
    mesh_name = draw(st.sampled_from(sorted(MESHES)))
    mesh = MESHES[mesh_name]
    transform = draw(st.sampled_from(TRANSFORMS))
    backend = None
    if transform == "grad":
        kind = draw(st.integers(0, len(family.LINEAR) - 1))
        shapes = family.LINEAR[kind][2](N)
    elif transform == "backend":
        kind = draw(st.sampled_from(sorted(fuzz_backends.RULES)))
        # Pallas refuses Explicit mesh axes outside shard_map (a JAX limitation, docs/sharding.md).
        choices = [b for b in BACKENDS if (b != "pallas" or mesh_name.endswith("Auto"))
                   and (b != "warp" or kind in fuzz_backends.WARP_KINDS)]  # fmt: skip
        backend = draw(st.sampled_from(choices))
        shapes = fuzz_backends.shapes(kind, N)[0]
    else:
        shapes = family.CASES[kind][2](N)
    batched = [True] * len(shapes)
    batch_entry = None
    if transform in ("vmap_in_jit", "jit_in_vmap", "shard_map"):
        batched = [draw(st.booleans()) for _ in shapes]
        batched[draw(st.integers(0, len(shapes) - 1))] = True
        axes = list(mesh.axis_names)
        # Explicit axes: JAX wants every batched operand's batch axis sharded alike.
        batch_entry = draw(st.sampled_from([None, *axes])) if transform != "shard_map" else axes[0]
    specs = []
    for shape, b in zip(shapes, batched, strict=True):
        # Inside shard_map every axis is manual: the batch is split, nothing else.
        free = [] if transform == "shard_map" else [a for a in mesh.axis_names if a != batch_entry]
        body = spec_entries(draw, mesh, shape, free)
        batch = transform in ("vmap_in_jit", "jit_in_vmap", "shard_map") and b
        specs.append(([batch_entry] if batch else []) + body)
    seed = draw(st.integers(0, 3))
    return {"kind": kind, "mesh": mesh_name, "transform": transform, "shapes": shapes,
            "batched": batched, "specs": specs, "seed": seed, "backend": backend}  # fmt: skip


def run(case, world):
    mesh = MESHES[case["mesh"]]
    transform = case["transform"]
    xs = family.inputs(case["shapes"], case["seed"])
    if transform in ("vmap_in_jit", "jit_in_vmap", "shard_map"):
        xs = [np.stack([x * (i + 1) for i in range(B)]) if b else x
              for x, b in zip(xs, case["batched"], strict=True)]  # fmt: skip
    f, reference = world.functions(case, mesh)
    placed = [jax.device_put(x, NamedSharding(mesh, P(*s))) for x, s in
              zip(xs, case["specs"], strict=True)]  # fmt: skip
    single = [jax.device_put(x, jax.devices()[0]) for x in xs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = world.reference(case, reference, single)
        if f is None:
            return  # an export refused with the fix (fuzz_world.functions checked it)
        if transform in ("jit", "bundle", "export", "backend"):
            compiled = jax.jit(f).lower(*placed).compile()
            got = compiled(*placed)
            world.guard(case, mesh, compiled.as_text(), COLLECTIVES, stats)
        else:
            got = f(*placed)
    got = jax.tree.leaves(got)
    assert len(got) == len(expected), (len(got), len(expected))
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        g = np.asarray(g)
        assert g.shape == e.shape, (i, g.shape, e.shape)
        if not np.allclose(g, e, rtol=2e-5, atol=1e-4):
            bad = np.argwhere(~np.isclose(g, e, rtol=2e-5, atol=1e-4))[:3].tolist()
            raise AssertionError(f"output {i + 1} differs at {bad}: {g.ravel()[:6]} vs "
                                 f"{e.ravel()[:6]}")  # fmt: skip


def main(count: int, seed) -> None:
    world = fuzz_world.World(os.environ.get("JAXCC_FUZZ_WORKDIR") or None)
    BACKENDS.extend(world.backends)
    stats["backends"] = list(world.backends)
    began = time.monotonic()

    @settings(max_examples=count, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.generate, Phase.shrink])  # fmt: skip
    @given(cases())
    def check(case):
        stats["cases"] += 1
        by = stats["by_transform"]
        by[case["transform"]] = by.get(case["transform"], 0) + 1
        stats["by_mesh"][case["mesh"]] = stats["by_mesh"].get(case["mesh"], 0) + 1
        SEEN.add(json.dumps(case, sort_keys=True, default=str))
        stats["distinct"] = len(SEEN)
        try:
            run(case, world)
        except Exception as e:
            summary = f"{type(e).__name__}: {str(e)[:400]}"
            stats["failures"].append({"case": describe(case), "error": summary})
            raise

    if seed is not None:
        check = hypothesis.seed(int(seed))(check)
    try:
        check()
    except Exception:
        stats["falsifying"] = traceback.format_exc()[-3000:]
    stats["seconds"] = round(time.monotonic() - began, 1)
    stats["distinct_kinds"] = len(family.CASES)
    print("FUZZ " + json.dumps(stats, default=str))


def describe(case):
    if case["transform"] == "backend":
        return {**case, "rule": fuzz_backends.RULES[case["kind"]]}
    kinds = family.LINEAR if case["transform"] == "grad" else family.CASES
    kernel, rule = kinds[case["kind"]][:2]
    return {**case, "kernel": kernel, "rule": rule}


if __name__ == "__main__":
    assert len(jax.devices()) == 8, jax.devices()
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)

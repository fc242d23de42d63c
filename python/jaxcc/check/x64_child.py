"""The x64 child of check_kernel's `dtypes` row (decision 222): `python -m jaxcc.check.x64_child
--serve` with JAX_ENABLE_X64=1 reads lines "N DIR" from stdin; for each it loads DIR/bundle (the
kernel's module, written by the parent, under a target prefix of its own), runs each job of
DIR/job.json (its inputs in DIR/inputs_J.npz), writes DIR/result.json (per job "ok" or "error"
with the text) and DIR/outputs_J.npz, and answers "done". JSON and npz, never pickle (nothing in
jaxcc unpickles: tests/test_no_eval.py). A child because JAX's x64 mode is a process's setting
at its start: the parent keeps its own; one child serves every check of the parent (importing
JAX is most of its cost)."""

from __future__ import annotations

import json
import os
import sys


def outs_from_json(spec):
    """outs as the parent described it (dtypes_row._outs_to_json): None, one ShapeDtypeStruct, or a
    list/tuple of them."""
    import jax

    if spec is None:
        return None
    items = [jax.ShapeDtypeStruct(tuple(shape), dtype) for shape, dtype in spec["items"]]
    return (
        items[0] if spec["kind"] == "one" else (tuple(items) if spec["kind"] == "tuple" else items)
    )


def run_job(number: str, work: str) -> None:
    import numpy as np

    from jaxcc.deploy.bundle import load_library

    with open(os.path.join(work, "job.json")) as f:
        job = json.load(f)
    prefix = f"{job['prefix']}{number}"  # each job's load registers targets of its own
    module = load_library(os.path.join(work, "bundle"), target_prefix=prefix)
    fn = module[job["name"]]
    results = []
    for j, outs in enumerate(job["outs"]):
        with np.load(os.path.join(work, f"inputs_{j}.npz")) as saved:
            arrays = [saved[f"arr_{i}"] for i in range(len(saved.files))]
        try:
            result = fn(*arrays, outs=outs_from_json(outs), **job["attrs"])
            leaves = result if isinstance(result, (list, tuple)) else [result]
            np.savez(os.path.join(work, f"outputs_{j}.npz"), *[np.asarray(o) for o in leaves])
            results.append({"status": "ok"})
        except Exception as e:  # noqa: BLE001  # the parent tells a refusal from a failure
            results.append({"status": "error", "text": f"{type(e).__name__}: {e}"})
    with open(os.path.join(work, "result.json"), "w") as f:
        json.dump(results, f)


def serve() -> int:
    import jax  # noqa: F401  # before the first job: its time is the child's start, not a job's

    from jaxcc.deploy import bundle  # noqa: F401  # what every job loads, imported once here

    for line in sys.stdin:
        number, _, work = line.rstrip("\n").partition(" ")
        run_job(number, work)
        sys.stdout.write("done\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())

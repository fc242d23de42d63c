"""The x64 child of check_kernel's `dtypes` row (decision 222): `python -m jaxcc.check.x64_child
--serve` with JAX_ENABLE_X64=1 reads lines "N DIR" from stdin; for each it loads DIR/bundle (the
kernel's module, written by the parent, under a target prefix of its own), runs each job of
DIR/job.pkl, writes per job ("ok", outputs) or ("error", text) to DIR/out.pkl and answers
"done". A child because JAX's x64 mode is a process's setting at its start: the parent keeps its
own; one child serves every check of the parent (importing JAX is most of its cost)."""

from __future__ import annotations

import os
import pickle
import sys


def run_job(number: str, work: str) -> None:
    import numpy as np

    from jaxcc.deploy.bundle import load_library

    with open(os.path.join(work, "job.pkl"), "rb") as f:
        job = pickle.load(f)
    prefix = f"{job['prefix']}{number}"  # each job's load registers targets of its own
    module = load_library(os.path.join(work, "bundle"), target_prefix=prefix)
    fn = module[job["name"]]
    results = []
    for arrays, outs in job["jobs"]:
        try:
            result = fn(*arrays, outs=outs, **job["attrs"])
            leaves = result if isinstance(result, (list, tuple)) else [result]
            results.append(("ok", [np.asarray(o) for o in leaves]))
        except Exception as e:  # noqa: BLE001  # the parent tells a refusal from a failure
            results.append(("error", f"{type(e).__name__}: {e}"))
    with open(os.path.join(work, "out.pkl"), "wb") as f:
        pickle.dump(results, f)


def serve() -> int:
    import jax  # noqa: F401  # before the first job: its time is the child's start, not a job's

    for line in sys.stdin:
        number, _, work = line.rstrip("\n").partition(" ")
        run_job(number, work)
        sys.stdout.write("done\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())

"""The x64 child of check_kernel's `dtypes` row (decision 222): `python -m jaxcc.check.x64_child
DIR` with JAX_ENABLE_X64=1 loads DIR/bundle (the kernel's module, written by the parent), runs
each job of DIR/job.pkl and writes per job ("ok", outputs) or ("error", text) to DIR/out.pkl.
A child because JAX's x64 mode is a process's setting at its start: the parent keeps its own."""

from __future__ import annotations

import os
import pickle
import sys


def main(work: str) -> int:
    import numpy as np

    from jaxcc.deploy.bundle import load_library

    with open(os.path.join(work, "job.pkl"), "rb") as f:
        job = pickle.load(f)
    module = load_library(os.path.join(work, "bundle"), target_prefix=job["prefix"])
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

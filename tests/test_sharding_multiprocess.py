"""2- and 4-process jax.distributed jobs on 127.0.0.1 sharing one cache directory: one build,
counted at the compiler, and a cross-process sharded kernel call with a rule (issue 12 item 5)."""

import json
import os
import subprocess
import sys

import pytest

JOB = os.path.join(os.path.dirname(__file__), "sharding", "multiproc.py")


@pytest.mark.parametrize("processes", [2, 4])
def test_distributed_job_builds_once_and_shards_across_processes(tmp_path, processes):
    cache = tmp_path / "shared-cache"  # empty: the first process to get the lock builds
    proc = subprocess.run([sys.executable, JOB, "job", str(processes), str(cache)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("JOB ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-2000:]
    job = json.loads(lines[-1][4:])
    assert not job["timed_out"], job
    assert job["kernel_compiles"] == 1, job  # one build for the whole job
    workers = job["workers"]
    assert len(workers) == processes and all("rc" not in w for w in workers), workers
    assert sorted(w["process"] for w in workers) == list(range(processes))
    assert sum(not w["cache_hit"] for w in workers) == 1  # the builder; the others hit
    for w in workers:
        assert w["global_devices"] == 2 * processes and w["local_devices"] == 2
        assert w["local_ok"], w  # this process's shards of the kernel's output are right
        assert w["total"] == pytest.approx(w["expected_total"], rel=1e-5)  # cross-process sum
        assert w["spec"] == ["x"] and w["all_gather"] == 0

"""The differential sharding test (issue 25): tests/sharding/fuzz.py draws rules, kernels,
meshes, input shardings and transforms with Hypothesis and compares every result with the same
kernel on one device, in one child process with 8 forced CPU devices (the rest of the suite
keeps one). 250 cases a run, seeded by the Python version, so each leg of the README's test
command (Python 3.11, 3.12) draws its own 250 and a CI run checks 500 different ones (decision
167); `JAXCC_SHARDING_FUZZ=N` runs N (with a random seed unless `JAXCC_SHARDING_FUZZ_SEED` fixes
one): docs/sharding.md, "Differential test"."""

import json
import os
import subprocess
import sys

import pytest

FUZZ = os.path.join(os.path.dirname(__file__), "sharding", "fuzz.py")
CASES = int(os.environ.get("JAXCC_SHARDING_FUZZ", "250"))
# The same draw on every run of one Python version, another draw on another version.
LEG_SEED = f"{sys.version_info[0]}{sys.version_info[1]:02d}"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env["JAXCC_FUZZ_WORKDIR"] = str(tmp_path_factory.mktemp("fuzz"))
    if "JAXCC_SHARDING_FUZZ" in os.environ:  # a longer run: random unless a seed is given
        seed = os.environ.get("JAXCC_SHARDING_FUZZ_SEED", str(int.from_bytes(os.urandom(4))))
    else:
        seed = LEG_SEED
    args = [sys.executable, FUZZ, str(CASES), seed]
    proc = subprocess.run(args, capture_output=True, text=True, env=env,
                          timeout=max(600, CASES * 2))  # fmt: skip
    lines = [line for line in proc.stdout.splitlines() if line.startswith("FUZZ ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(lines[-1][len("FUZZ ") :])


def test_sharded_calls_agree_with_one_device(report):
    failures = report["failures"]
    assert not failures, json.dumps(failures[:3], indent=1) + report.get("falsifying", "")
    assert report["cases"] >= CASES, report


def test_every_transform_mesh_and_backend_was_drawn(report):
    transforms = report["by_transform"]
    for name in ("jit", "vmap_in_jit", "jit_in_vmap", "shard_map", "bundle", "export", "grad",
                 "backend"):  # fmt: skip
        assert transforms.get(name, 0) >= CASES // 40, (name, transforms)
    assert {"cpp", "numba", "pallas"} <= set(report["backends"])
    assert len(report["by_mesh"]) == 8, report["by_mesh"]  # 4 shapes x (Explicit, Auto)


def test_allowed_shardings_compile_without_gathers(report):
    # The HLO guard ran on the cases whose shardings the rule allows (fuzz_world.allowed).
    assert report["guarded"] >= CASES // 10, report

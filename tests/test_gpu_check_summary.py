"""scripts/gpu_check_summary.py (gpu-check.sh's summary) counts skips apart from passes and fails
the check when a test that must run on that machine was skipped (issue 25: a GPU machine without
Triton, or with one GPU, reported PASSED). Runs the real script on JUnit files as pytest writes
them."""

import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "gpu_check_summary.py"


def junit(cases) -> str:
    body = []
    for name, skip in cases:
        inner = f'<skipped type="pytest.skip" message="{skip}"/>' if skip else ""
        body.append(f'<testcase classname="tests.t" name="{name}" time="0.1">{inner}</testcase>')
    return ('<?xml version="1.0"?><testsuites><testsuite name="pytest">' + "".join(body)
            + "</testsuite></testsuites>")  # fmt: skip


def summarise(tmp_path, cases, have_gpu=True, gpus=1, cc="9.0"):
    (tmp_path / "steps.tsv").write_text("gpu-tests\t0\t12\n")
    (tmp_path / "gpu-tests.xml").write_text(junit(cases))
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "1" if have_gpu else "0",
                           "30", str(gpus), cc], capture_output=True, text=True)  # fmt: skip
    return (
        proc.returncode,
        json.loads((tmp_path / "summary.json").read_text()),
        (tmp_path / "summary.md").read_text(),
    )


def test_skips_are_counted_apart_from_passes(tmp_path):
    rc, summary, md = summarise(tmp_path, [("test_a", None), ("test_two", "needs two GPUs")])
    assert rc == 0 and summary["ok"]
    outcomes = [r["outcome"] for r in summary["tests"]["gpu-tests"]]
    assert outcomes == ["passed", "skipped: needs two GPUs"]
    assert "1 passed, 1 skipped" in md


@pytest.mark.parametrize("reason", ["could not import 'triton': No module named 'triton'",
                                    "numba-cuda is not installed", "needs nvcc",
                                    "needs a JAX GPU device"])  # fmt: skip
def test_a_skip_of_a_test_this_machine_must_run_fails_the_check(tmp_path, reason):
    rc, summary, md = summarise(tmp_path, [("test_a", None), ("test_b", reason)])
    assert rc == 1 and not summary["ok"]
    assert summary["unexpected_skips"] == ["tests.t::test_b"]
    assert "Skipped where they must run" in md and "**FAILED**" in md


def test_what_a_machine_may_skip_depends_on_the_machine(tmp_path):
    # Two-GPU tests must run on a machine with two GPUs; Hopper-only ones on a Hopper.
    assert summarise(tmp_path, [("t", "needs two GPUs")], gpus=2)[0] == 1
    assert summarise(tmp_path, [("t", "warp specialisation needs sm_90 or newer")],
                     cc="8.0")[0] == 0  # fmt: skip
    assert summarise(tmp_path, [("t", "warp specialisation needs sm_90 or newer")],
                     cc="9.0")[0] == 1  # fmt: skip
    # Without a GPU only the CPU halves were meant to run: skips are reported, not failures.
    rc, summary, _ = summarise(tmp_path, [("t", "needs a JAX GPU device")], have_gpu=False)
    assert rc == 0 and summary["tests"]["gpu-tests"][0]["outcome"].startswith("skipped")

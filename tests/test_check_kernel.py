"""jaxcc.check_kernel on loaded C++ kernels: the catalogue of planted defects in
tests/check_kernel_catalogue.py, each flagged by exactly its row, a right kernel that passes
every row, assert_kernel_ok for pytest, and the `jaxcc check` CLI (in a child process with 8 CPU
devices, where the sharding row runs). XLACustomKernel rules: tests/custom_kernel/
test_check_kernel_rules.py."""

import importlib.util
import os
import subprocess
import sys

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxcc

sys.path.insert(0, os.path.dirname(__file__))
import check_kernel_catalogue as catalogue  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def ops():
    return catalogue.module()


def failed(report) -> set:
    return {row.name for row in report.failed}


def test_right_kernel_passes_every_row_that_applies(ops):
    report = jaxcc.check_kernel(ops.scale, catalogue.X, factor=2.0)
    assert report.ok, str(report)
    statuses = {row.name: row.status for row in report.rows}
    for name in ("outputs", "inputs", "bounds", "determinism", "jit", "vmap", "bundle", "threads"):
        assert statuses[name] == "passed", str(report)
    # jax.export writes artefacts with flatbuffers; without it the row says so and is skipped.
    serializes = importlib.util.find_spec("flatbuffers") is not None
    assert statuses["export"] == ("passed" if serializes else "skipped"), str(report)
    for name in ("jvp", "transpose", "backends", "cuda_graph", "stream"):
        assert statuses[name] == "skipped", str(report)
    # One device here: the sharding row says how to get more.
    assert "xla_force_host_platform_device_count" in report["sharding"].detail
    text = str(report)
    assert text.splitlines()[0] == "check_kernel(check_catalogue.scale): ok"
    assert all(name in text for name in statuses)


def test_right_kernel_with_two_outputs_passes(ops):
    outs = [jax.ShapeDtypeStruct((8,), np.float32), catalogue.ONE]
    report = jaxcc.check_kernel(ops.cumsum_total, catalogue.X, outs=outs, skip=["bundle"])
    assert report.ok, str(report)
    assert "every element written (two sentinel fills)" in report["outputs"].detail


def test_unwritten_output_fails_outputs_only(ops):
    report = jaxcc.check_kernel(ops.half_written, catalogue.X, skip=["bundle", "export"])
    assert failed(report) == {"outputs"}, str(report)
    assert "4 of 8 elements never written (first at index (4,))" in report["outputs"].detail


def test_mutated_input_fails_inputs_only(ops):
    report = jaxcc.check_kernel(ops.mutates_input, catalogue.X, skip=["bundle", "export"])
    assert failed(report) == {"inputs"}, str(report)
    assert "input 1 was changed by the call at index (0,): -1.0 -> 0.0" in report["inputs"].detail


def test_nondeterministic_reduction_fails_determinism_only(ops):
    report = jaxcc.check_kernel(ops.counted_sum, catalogue.X, outs=catalogue.ONE)
    assert failed(report) == {"determinism"}, str(report)
    assert "output 1 differs at index (0,)" in report["determinism"].detail
    # The rows that compare two runs say why they did not run.
    assert report["jit"].status == "skipped" and "not deterministic" in report["jit"].detail


def test_wrong_vmap_method_fails_vmap_only():
    wrong = catalogue.total_module("broadcast_all").total
    report = jaxcc.check_kernel(wrong, catalogue.X, outs=catalogue.ONE, skip=["bundle"])
    assert failed(report) == {"vmap"}, str(report)
    assert "jax.vmap (in_axes=0) vs a loop of calls" in report["vmap"].detail
    right = catalogue.total_module("sequential").total
    assert jaxcc.check_kernel(right, catalogue.X, outs=catalogue.ONE, checks=["vmap"]).ok


def test_assert_kernel_ok_lists_every_failed_row(ops):
    with pytest.raises(jaxcc.KernelCheckError) as caught:
        jaxcc.assert_kernel_ok(ops.half_written, catalogue.X, checks=["outputs", "inputs"])
    assert isinstance(caught.value, AssertionError)
    assert "1 check(s) failed:\n  outputs: output 1: 4 of 8" in str(caught.value)
    assert caught.value.report.failed[0].name == "outputs"
    assert jaxcc.assert_kernel_ok(ops.scale, catalogue.X, factor=2.0, checks=["jit"]).ok


def test_checks_skip_and_tolerances(ops):
    report = jaxcc.check_kernel(ops.scale, catalogue.X, factor=2.0, checks=["jit", "vmap"],
                                skip=["vmap"])  # fmt: skip
    assert [r.name for r in report.rows] == ["jit"]
    with pytest.raises(jaxcc.CallError, match="unknown check 'jitt'; the checks: outputs"):
        jaxcc.check_kernel(ops.scale, catalogue.X, factor=2.0, checks=["jitt"])
    with pytest.raises(jaxcc.CallError, match="a loaded kernel function .* or a JAX function"):
        jaxcc.check_kernel(3, catalogue.X)


def test_sample_call_that_fails_is_one_failed_row(ops):
    report = jaxcc.check_kernel(ops.scale, catalogue.X)  # the attribute `factor` is missing
    assert [r.name for r in report.failed] == ["call"]
    assert "missing factor" in report["call"].detail
    assert all(r.status == "skipped" for r in report.rows[1:])


def test_tolerance_defaults_by_dtype():
    from jaxcc.check.subject import Subject

    subject = Subject(None, [], None, {}, False)
    assert subject.tolerance(np.float32) == (1e-5, 1e-6)
    assert subject.tolerance(np.int32) == (0.0, 0.0)
    subject.rtol = 0.5
    assert subject.tolerance(np.float64)[0] == 0.5


def run_cli(*args, cwd=HERE):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    return subprocess.run([sys.executable, "-m", "jaxcc", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture(scope="module")
def cli_run():
    return run_cli("check_kernel_catalogue")


def test_cli_flags_the_rule_that_splits_a_summed_factor(cli_run):
    out = cli_run.stdout
    assert cli_run.returncode == 1, out + cli_run.stderr
    assert ("jaxcc check: 2 of 5 kernel(s) failed: check_kernel_catalogue:row_total, "
            "check_kernel_catalogue:row_total_primitive\n") in out  # fmt: skip
    for name in ("row_total", "row_total_primitive"):  # a loaded kernel, an XLACustomKernel
        wrong = out.split(f"check_kernel_catalogue:{name}\n")[1].split("\n\n")[0]
        failed_rows = [line.split()[0] for line in wrong.splitlines()[1:] if " failed " in line]
        assert failed_rows == ["sharding"], wrong
        assert "factor 'k' split over 8 devices: output 1 differs" in wrong


def test_cli_sharding_row_passes_a_right_rule(cli_run):
    out = cli_run.stdout
    right = out.split("check_kernel_catalogue:row_total_right_rule\n")[1].split("\n\n")[0]
    assert "check_kernel(check_catalogue_rule.row_total): ok" in right
    assert "sharding     passed   equals one device, no gather: 'r' over 4" in right
    scale = out.split("check_kernel_catalogue:scale\n")[1].split("\n\n")[0]
    assert "sharding     passed" in scale
    ruled = out.split("check_kernel_catalogue:row_total_primitive_right_rule\n")[1]
    assert "sharding     passed   equals one device, no gather: 'r' over 4" in ruled


def test_cli_shows_the_bounds_row(cli_run):
    out = cli_run.stdout
    scale = out.split("check_kernel_catalogue:scale\n")[1].split("\n\n")[0]
    assert "  bounds       passed   the debug build (-O0 -g, 4096 guard bytes" in scale
    primitive = out.split("check_kernel_catalogue:row_total_primitive\n")[1].split("\n\n")[0]
    assert "  bounds       skipped  backend 'jax': not a jaxcc C++/CUDA kernel" in primitive


def test_cli_refuses_a_module_without_declarations(tmp_path):
    (tmp_path / "no_checks.py").write_text("X = 1\n")
    proc = run_cli("no_checks", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no_checks declares no kernels to check; add a module-level JAXCC_CHECKS" in proc.stderr


def test_catalogue_outputs_are_the_declared_types(ops):
    # The catalogue's own sanity: the right kernels compute what they say.
    np.testing.assert_allclose(ops.scale(catalogue.X, factor=2.0), 2 * catalogue.X)
    total = ops.row_total(catalogue.M)
    np.testing.assert_allclose(total[:, 0], catalogue.M.sum(1), rtol=1e-6)
    assert jax.ShapeDtypeStruct(total.shape, total.dtype) == jax.ShapeDtypeStruct(
        catalogue.M.shape, catalogue.M.dtype
    )


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.uint8, np.bool_]),
    data=st.data(),
)
def test_difference_names_exactly_the_changed_element(shape, dtype, data):
    """The comparison every row uses: equal arrays (NaNs included) agree, and one element moved
    beyond the tolerance is reported at its own index, as 1 differing element."""
    from jaxcc.check.subject import Subject

    subject = Subject(None, [], None, {}, False)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = np.asarray(rng.standard_normal(shape) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f" and a.size:
        a.flat[0] = np.nan
    assert subject.difference([a], [a.copy()], "same") is None
    if not a.size:
        return
    index = data.draw(st.integers(0, a.size - 1))
    b = a.copy()
    x = b.flat[index]
    b.flat[index] = (not x) if dtype is np.bool_ else (x - 1 if x > 0 else x + 1)  # no overflow
    if np.dtype(dtype).kind == "f" and np.isnan(a.flat[index]):
        b.flat[index] = 1.0
    at = tuple(int(i) for i in np.unravel_index(index, a.shape))
    found = subject.difference([a], [b], "changed")
    assert found is not None and f"differs at index {at}:" in found, found
    assert f"(1 of {a.size} elements)" in found


def test_cli_only_checks_and_skip_narrow_the_run():
    proc = run_cli("check_kernel_catalogue", "--only", "scale", "--checks", "jit,vmap,threads",
                   "--skip", "threads", "--devices", "1")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert rows == ["jit", "vmap"], proc.stdout
    assert proc.stdout.rstrip().endswith("jaxcc check: 1 kernel(s) ok")

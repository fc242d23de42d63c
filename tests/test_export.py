"""jaxcc.export / jaxcc.deserialize: jax.export round trips of functions that call jaxcc kernels,
across real processes, and the typed errors for artefacts whose targets nobody loaded."""

import json
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_python
from jax.export import DisabledSafetyCheck

import jaxcc
from jaxcc.errors import BundleError, CallError, ExportError, MissingTargetError

SOURCE = r"""
#include "jaxcc/jaxcc.h"

void scale_add(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  const float* a = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = a[i] * factor + 1.0f;
}

void negate(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = -x.data_ptr<float>()[i];
}
"""
LOAD = 'jaxcc.load_cpp_inline("export_ops", SOURCE, ["scale_add", "negate"])'
SHAPE = jax.ShapeDtypeStruct((5,), jnp.float32)
X = np.arange(5, dtype=np.float32)


def load_ops():
    return jaxcc.load_cpp_inline("export_ops", SOURCE, ["scale_add", "negate"])


def model(ops):
    return lambda x: jnp.sin(ops.scale_add(x, factor=3.0)) * 2.0


def expected(x):
    return np.sin(x * 3.0 + 1.0) * 2.0


def run_in_fresh_process(body: str, blob_path, env=None) -> dict:
    """Runs `body` in a new interpreter with SOURCE, jaxcc, jnp and the blob at hand; the body
    assigns a dict to `report`, which comes back as JSON."""
    code = "\n".join(
        [
            "import json, jax, jax.numpy as jnp, numpy as np, jaxcc",
            f"SOURCE = {SOURCE!r}",
            f"blob = open({str(blob_path)!r}, 'rb').read()",
            "report = {}",
            textwrap.dedent(body),
            "print('REPORT=' + json.dumps(report))",
        ]
    )
    done = run_python(code, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("REPORT=")][-1]
    return json.loads(line[len("REPORT=") :])


def test_export_allows_exactly_the_jaxcc_targets_the_function_calls():
    ops = load_ops()
    with pytest.raises(ValueError, match="no compatibility guarantees"):
        jax.export.export(jax.jit(model(ops)))(SHAPE)  # what a user gets without jaxcc.export
    exported = jaxcc.export(model(ops), SHAPE)
    assert isinstance(exported, jax.export.Exported)
    # negate is registered too, but not called: it is not allowed.
    assert exported.disabled_safety_checks == (
        DisabledSafetyCheck.custom_call("export_ops.scale_add"),
    )
    np.testing.assert_allclose(exported.call(X), expected(X), rtol=1e-6)


def test_jitted_functions_and_several_kernels_export_too():
    ops = load_ops()
    exported = jaxcc.export(jax.jit(lambda x: ops.negate(ops.scale_add(x, factor=2.0))), SHAPE)
    names = sorted(c.is_custom_call() for c in exported.disabled_safety_checks)
    assert names == ["export_ops.negate", "export_ops.scale_add"]
    np.testing.assert_allclose(exported.call(X), -(X * 2.0 + 1.0))


def test_the_callers_disabled_checks_are_kept_first(unique_name):
    ops = load_ops()
    foreign = f"{unique_name}.handwritten"

    def fn(x):
        y = jax.ffi.ffi_call(foreign, SHAPE, vmap_method="sequential")(x)
        return ops.scale_add(y, factor=1.0)

    mine = [DisabledSafetyCheck.custom_call(foreign), DisabledSafetyCheck.platform()]
    exported = jaxcc.export(fn, SHAPE, disabled_checks=mine)
    assert exported.disabled_safety_checks == (
        *mine,
        DisabledSafetyCheck.custom_call("export_ops.scale_add"),
    )
    # The foreign target is nobody's in this process: deserializing its artefact says so.
    with pytest.raises(MissingTargetError) as info:
        jaxcc.deserialize(exported.serialize(), modules=[ops])
    assert info.value.missing == [foreign]
    assert unique_name in str(info.value) and "export_ops" in str(info.value)


def test_a_foreign_custom_call_is_refused_with_the_fix(unique_name):
    load_ops()

    def fn(x):
        return jax.ffi.ffi_call(f"{unique_name}.other", SHAPE, vmap_method="sequential")(x)

    with pytest.raises(ExportError, match=r"DisabledSafetyCheck\.custom_call"):
        jaxcc.export(fn, SHAPE)


def test_round_trip_export_here_deserialize_and_run_in_a_fresh_process(tmp_path):
    ops = load_ops()
    blob_path = tmp_path / "model.jaxexport"
    blob_path.write_bytes(jaxcc.export(model(ops), SHAPE).serialize())
    report = run_in_fresh_process(
        f"""
        ops = {LOAD}
        exported = jaxcc.deserialize(blob, modules=[ops])
        report["cache_hit"] = ops.cache_hit
        report["y"] = np.asarray(exported.call(jnp.arange(5, dtype=jnp.float32))).tolist()
        report["jitted"] = np.asarray(jax.jit(exported.call)(jnp.ones(5, jnp.float32))).tolist()
        """,
        blob_path,
    )
    assert report["cache_hit"], "the fresh process should load the module from the warm cache"
    np.testing.assert_allclose(report["y"], expected(X), rtol=1e-6)
    np.testing.assert_allclose(report["jitted"], expected(np.ones(5, np.float32)), rtol=1e-6)


def test_a_blob_whose_targets_nobody_loaded_is_a_typed_error_not_a_crash(tmp_path):
    ops = load_ops()
    blob_path = tmp_path / "model.jaxexport"
    blob_path.write_bytes(jaxcc.export(model(ops), SHAPE).serialize())
    report = run_in_fresh_process(
        f"""
        try:
            jaxcc.deserialize(blob)
        except jaxcc.MissingTargetError as e:
            report["missing"], report["message"] = e.missing, str(e)
        ops = {LOAD}  # the fix the message names; the same blob then runs
        exported = jaxcc.deserialize(blob, modules=[ops])
        report["y"] = np.asarray(exported.call(jnp.arange(5, dtype=jnp.float32))).tolist()
        """,
        blob_path,
    )
    assert report["missing"] == ["export_ops.scale_add"]
    assert "jaxcc.load_" in report["message"] and "'export_ops'" in report["message"]
    np.testing.assert_allclose(report["y"], expected(X), rtol=1e-6)


def test_multi_platform_export_runs_here_and_checks_the_other_platform():
    ops = load_ops()
    exported = jaxcc.export(model(ops), SHAPE, platforms=["cpu", "cuda"])
    assert exported.platforms == ("cpu", "cuda")
    blob = exported.serialize()
    np.testing.assert_allclose(jaxcc.deserialize(blob).call(X), expected(X), rtol=1e-6)
    if jax.default_backend() == "cpu":  # no CUDA build of export_ops is registered here
        with pytest.raises(MissingTargetError, match="not registered on cuda"):
            jaxcc.deserialize(blob, platform="cuda")
    cpu_only = jaxcc.export(model(ops), SHAPE, platforms=["cpu"]).serialize()
    with pytest.raises(ExportError, match="exported for cpu, not for cuda"):
        jaxcc.deserialize(cpu_only, platform="cuda")


def test_xla_custom_kernel_with_a_jaxcc_backend_exports(unique_name):
    kernel = jaxcc.XLACustomKernel(unique_name)
    ops = load_ops()
    kernel.def_cpp_kernel(lambda **params: ops.negate)
    exported = jaxcc.export(lambda x: kernel(x, outs=SHAPE), SHAPE)
    assert exported.disabled_safety_checks == (
        DisabledSafetyCheck.custom_call("export_ops.negate"),
    )
    np.testing.assert_allclose(jaxcc.deserialize(exported.serialize()).call(X), -X)


def test_process_local_bridge_kernels_are_refused(unique_name):
    numba = pytest.importorskip("numba")

    @numba.njit
    def double(x, out):
        for i in range(x.size):
            out[i] = 2 * x[i]

    kernel = jaxcc.XLACustomKernel(unique_name)
    kernel.def_numba_kernel(lambda outs, **p: jaxcc.numba_kernel(double, outs))
    with pytest.raises(ExportError, match="valid only in this process"):
        jaxcc.export(lambda x: kernel(x, outs=SHAPE), SHAPE)


@pytest.mark.parametrize(
    "blob, error, match",
    [
        (b"not an artefact", ExportError, "not a jax.export artefact"),
        (b"", ExportError, "not a jax.export artefact"),
        ("a path?", ExportError, "bytes of Exported.serialize"),
        (None, ExportError, "bytes of Exported.serialize"),
    ],
)
def test_bad_blobs_are_typed_errors(blob, error, match):
    with pytest.raises(error, match=match):
        jaxcc.deserialize(blob)


def test_a_truncated_blob_is_a_typed_error():
    blob = jaxcc.export(model(load_ops()), SHAPE).serialize()
    with pytest.raises(ExportError, match="not a jax.export artefact"):
        jaxcc.deserialize(blob[: len(blob) // 2])


def test_bad_arguments_are_typed_errors():
    ops = load_ops()
    blob = jaxcc.export(model(ops), SHAPE).serialize()
    with pytest.raises(CallError, match="CompiledModule"):
        jaxcc.deserialize(blob, modules=["export_ops"])
    with pytest.raises(ExportError, match="must be a function"):
        jaxcc.export(42, SHAPE)
    with pytest.raises(ExportError, match="DisabledSafetyCheck values"):
        jaxcc.export(model(ops), SHAPE, disabled_checks=["export_ops.scale_add"])
    with pytest.raises(ExportError, match="must be a list"):
        jaxcc.export(model(ops), SHAPE, disabled_checks="export_ops.scale_add")
    # bundles= goes through jaxcc.load_library: a path that is no bundle is its typed error.
    with pytest.raises(BundleError, match="not a directory"):
        jaxcc.deserialize(blob, bundles=["/nonexistent/bundle"])


def test_an_artefact_run_against_a_changed_signature_is_an_error_not_a_crash(tmp_path, unique_name):
    """Target names do not depend on the code: a process that loads changed code under the
    exported name runs it, and a handler whose attribute type changed refuses the call."""
    ops = jaxcc.load_cpp_inline(unique_name, SOURCE, ["scale_add"])
    blob_path = tmp_path / "model.jaxexport"
    blob_path.write_bytes(jaxcc.export(model(ops), SHAPE).serialize())
    changed = SOURCE.replace("float factor", "double factor")
    report = run_in_fresh_process(
        f"""
        ops = jaxcc.load_cpp_inline({unique_name!r}, {changed!r}, ["scale_add"])
        exported = jaxcc.deserialize(blob, modules=[ops])  # the name is registered
        try:
            exported.call(jnp.ones(5, jnp.float32))
        except jax.errors.JaxRuntimeError as e:
            report["error"] = str(e)
        """,
        blob_path,
    )
    assert "Wrong scalar data type: expected float64 but got float32" in report["error"]
    assert "'factor'" in report["error"]


def test_a_kernel_function_exports_directly_with_symbolic_shapes():
    ops = load_ops()
    shape = jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), jnp.float32)
    exported = jaxcc.export(ops.negate, shape)
    blob = exported.serialize()
    for n in (1, 7):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_allclose(jaxcc.deserialize(blob, modules=[ops]).call(x), -x)


@pytest.mark.gpu
def test_a_cuda_kernel_round_trips_through_a_fresh_process(tmp_path, unique_name):
    from cuda_sources import SCALE_BY

    name = f"{unique_name}_scale"
    ops = jaxcc.load_cuda_inline(name, SCALE_BY)
    exported = jaxcc.export(lambda x: ops.scale_by(x, scale_factor=3.0) + 1.0, SHAPE)
    assert exported.platforms == ("cuda",)
    assert exported.disabled_safety_checks == (DisabledSafetyCheck.custom_call(f"{name}.scale_by"),)
    blob_path = tmp_path / "model.jaxexport"
    blob_path.write_bytes(exported.serialize())
    report = run_in_fresh_process(
        f"""
        try:
            jaxcc.deserialize(blob)
        except jaxcc.MissingTargetError as e:
            report["missing"] = e.missing
        ops = jaxcc.load_cuda_inline({name!r}, {SCALE_BY!r})
        exported = jaxcc.deserialize(blob, modules=[ops])
        report["y"] = np.asarray(exported.call(jnp.arange(5, dtype=jnp.float32))).tolist()
        """,
        blob_path,
    )
    assert report["missing"] == [f"{name}.scale_by"]
    np.testing.assert_allclose(report["y"], X * 3.0 + 1.0, rtol=1e-6)


def test_round_trip_through_a_bundle_in_a_process_without_a_compiler(tmp_path):
    """Export here; a fresh process with no g++, nvcc or ninja on PATH (CXX and JAXCC_NVCC name
    missing files) gets the targets from a `jaxcc build` bundle alone and runs the artefact."""
    ops = load_ops()
    blob_path = tmp_path / "model.jaxexport"
    blob_path.write_bytes(jaxcc.export(model(ops), SHAPE).serialize())
    source = tmp_path / "export_ops.cc"
    source.write_text(SOURCE)
    bundle = tmp_path / "export_ops_bundle"
    built = subprocess.run(
        [sys.executable, "-m", "jaxcc", "build", str(source), "--name", "export_ops"]
        + ["--functions", "scale_add,negate", "--out", str(bundle)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    no_compiler = {
        "PATH": str(empty_bin),
        "CXX": str(tmp_path / "missing" / "g++"),
        "JAXCC_NVCC": str(tmp_path / "missing" / "nvcc"),
    }
    report = run_in_fresh_process(
        f"""
        exported = jaxcc.deserialize(blob, bundles=[{str(bundle)!r}])
        report["targets"] = jaxcc.list_registered_targets()
        report["y"] = np.asarray(exported.call(jnp.arange(5, dtype=jnp.float32))).tolist()
        """,
        blob_path,
        env=no_compiler,
    )
    assert "export_ops.scale_add" in str(report["targets"])
    np.testing.assert_allclose(report["y"], expected(X), rtol=1e-6)

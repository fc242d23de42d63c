"""Every typed data_ptr<X>() of brainevent 0.3's CUDA sources is accepted by data_ptr's dtype
rule in every instantiation (scripts/brainevent_dtype_audit.py; decision 149), so the check
breaks no brainevent operator. Needs brainevent 0.3.0 (Python >= 3.12) and nvcc, no GPU; skips
otherwise. The whole corpus takes a few minutes of nvcc, so it is marked slow; one file and the
audit's own negative control run in the default suite."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
brainevent = pytest.importorskip(
    "brainevent", reason="brainevent 0.3.0 (Python >= 3.12) is not installed"
)


def _audit_module():
    sys.path.insert(0, str(ROOT / "scripts"))  # the audit imports brainevent_corpus
    spec = importlib.util.spec_from_file_location(
        "brainevent_dtype_audit", ROOT / "scripts" / "brainevent_dtype_audit.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


audit = _audit_module()
PACKAGE = pathlib.Path(brainevent.__file__).parent


@pytest.fixture(scope="module", autouse=True)
def need_nvcc():
    import jaxcc

    try:
        jaxcc._core.find_nvcc([])  # noqa: SLF001 - the search a build uses
    except Exception as exc:  # noqa: BLE001 - any failure means no usable nvcc here
        pytest.skip(f"nvcc not found: {exc}")


def test_audit_finds_every_typed_use():
    # 17 files of brainevent 0.3.0 hold typed data_ptr<X>() uses; each is paired with the
    # kernel's dtype statement or bound by a dispatch (none is left unpaired).
    files = audit.typed_sources(PACKAGE)
    assert len(files) == 17, files
    for rel in files:
        _, uses = audit.rewrite((PACKAGE / rel).read_text(encoding="utf-8"))
        assert uses and not [u for u in uses if u.how == "unpaired"], rel


def test_tcsr_float_csrmv_passes_the_audit():
    result = audit.audit_file(PACKAGE, "_tcsr/float_csrmv.cu", None)
    assert result.ok, result.detail


def test_audit_refuses_a_float_read_of_an_int32_buffer(tmp_path):
    # The negative control: the same file with indices (int32 by the kernel's own check) read as
    # float must fail, naming the line and both types.
    rel = "_tcsr/float_csrmv.cu"
    text = (PACKAGE / rel).read_text(encoding="utf-8")
    assert "indices.data_ptr<const int32_t>()" in text
    (tmp_path / "_tcsr").mkdir()
    (tmp_path / rel).write_text(
        text.replace("indices.data_ptr<const int32_t>()", "indices.data_ptr<const float>()", 1)
    )
    (tmp_path / "include").symlink_to(PACKAGE / "include")
    result = audit.audit_file(tmp_path, rel, None)
    assert not result.ok
    assert "data_ptr<const float>() on jaxcc::DType::Int32" in result.detail, result.detail


@pytest.mark.slow
def test_every_typed_use_in_brainevent_passes_the_audit():
    failed = []
    for rel in audit.typed_sources(PACKAGE):
        result = audit.audit_file(PACKAGE, rel, None)
        if not result.ok:
            failed.append(f"{rel}: {result.detail}")
    assert not failed, "\n".join(failed)

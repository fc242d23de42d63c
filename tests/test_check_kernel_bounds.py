"""check_kernel's `bounds` row (decision 160): the kernel's module rebuilt under the debug profile
and run with guard zones around its outputs. A write past the end or before the start fails
exactly this row, naming the buffer and the bytes, and nothing else runs the kernel; a right
kernel passes; kernels that are not jaxcc C++ builds are skipped with the reason; the debug
build never touches the user's targets (decision 155's versioned names and their warning)."""

import os
import sys
import types
import warnings

import jax
import numpy as np
import pytest

import jaxcc
from jaxcc.call import ffi_targets

sys.path.insert(0, os.path.dirname(__file__))
import check_kernel_catalogue as catalogue  # noqa: E402

OUTS = jax.ShapeDtypeStruct(catalogue.X.shape, catalogue.X.dtype)


def failed(report) -> set:
    return {row.name for row in report.failed}


def debug_targets(module_name: str) -> list:
    return [
        t for t in ffi_targets.registered_targets() if t.startswith(f"{module_name}_jaxcc_debug_")
    ]


@pytest.mark.parametrize(
    "name, where",
    [("past_end", "wrote past the end"), ("before_start", "wrote before the start")],
)
def test_write_outside_the_output_fails_bounds_only(name, where):
    report = jaxcc.check_kernel(catalogue.bounds_module()[name], catalogue.X)
    assert failed(report) == {"bounds"}, str(report)
    edge = where.split("wrote ")[1]
    assert report["bounds"].detail == (
        f"function '{name}' {where} of its output 'out' (32 bytes): bytes 0 to 3 {edge} were "
        "changed (of the 4096 guard bytes checked)"
    )
    # The kernel's own build never ran: its write would land in memory XLA owns.
    others = [row for row in report.rows if row.name != "bounds"]
    assert others and all(row.status == "skipped" for row in others), str(report)
    assert all("writes outside an output (see bounds)" in row.detail for row in others)


def test_right_kernel_passes_bounds_and_leaves_the_users_targets_alone():
    ops = catalogue.module()
    prefix, target = ops.target_prefix, ops.scale.target
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ReloadWarning, no other warning
        report = jaxcc.check_kernel(ops.scale, catalogue.X, factor=2.0, checks=["bounds"])
    assert report["bounds"].status == "passed", str(report)
    assert "writes nothing outside its outputs" in report["bounds"].detail
    assert (ops.target_prefix, ops.scale.target) == (prefix, target)
    assert f"check_catalogue_jaxcc_debug_{ops.key[:12]}.scale" in debug_targets("check_catalogue")
    np.testing.assert_allclose(ops.scale(catalogue.X, factor=2.0), 2 * catalogue.X)


SOURCE_V1 = r"""
#include "jaxcc/jaxcc.h"
void twice(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
}
"""


def test_an_edit_under_a_live_name_checks_the_new_code_without_a_second_warning():
    """The author's loop (decision 155): v1 checked, then edited to write past the end. The
    user's own reload warns once as before; the check adds no warning and builds a new debug
    twin for the new code (its prefix carries the new key), which finds the new defect."""
    name = "check_bounds_edited"
    v1 = jaxcc.load_cpp_inline(name, SOURCE_V1, ["twice"])
    assert jaxcc.check_kernel(v1.twice, catalogue.X, checks=["bounds"]).ok
    edited = SOURCE_V1.replace("i < out.numel()", "i <= out.numel()")
    with pytest.warns(jaxcc.ReloadWarning):
        v2 = jaxcc.load_cpp_inline(name, edited, ["twice"])
    assert v2.target_prefix == f"{name}@{v2.key[:12]}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = jaxcc.check_kernel(v2.twice, catalogue.X, checks=["bounds"])
    assert "wrote past the end of its output 'out'" in report["bounds"].detail
    assert v2.target_prefix == f"{name}@{v2.key[:12]}"  # the user's module is untouched
    assert debug_targets(name) == sorted(f"{name}_jaxcc_debug_{m.key[:12]}.twice" for m in (v1, v2))


def test_a_live_module_whose_cache_was_cleared_is_still_checked(unique_name):
    """clear_cache() empties the process's table of loaded modules (their entries are gone), yet
    the module the user holds still runs: its rows that rebuild it (bounds, bundle) find its
    request on the function itself, not "not loaded by load_* (a bundle?)"."""
    module = jaxcc.load_cpp_inline(unique_name, SOURCE_V1, ["twice"])
    jaxcc.clear_cache(unique_name)
    report = jaxcc.check_kernel(module.twice, catalogue.X, checks=["bounds", "bundle"])
    assert report["bounds"].status == "passed", str(report)
    assert report["bundle"].status == "passed", str(report)


def test_skip_bounds_builds_no_debug_module():
    module = jaxcc.load_cpp_inline("check_bounds_skipped", SOURCE_V1, ["twice"])
    report = jaxcc.check_kernel(module.twice, catalogue.X, skip=["bounds", "bundle", "export"])
    assert "bounds" not in [row.name for row in report.rows]
    assert report.ok, str(report)
    assert debug_targets("check_bounds_skipped") == []


def test_a_module_built_under_the_debug_profile_is_checked_as_it_is():
    module = jaxcc.load_cpp_inline("check_bounds_debug", SOURCE_V1, ["twice"], debug=True)
    report = jaxcc.check_kernel(module.twice, catalogue.X, checks=["bounds"])
    assert report["bounds"].status == "passed", str(report)
    assert debug_targets("check_bounds_debug") == []


def test_xla_custom_kernel_checks_its_cpp_backends_on_the_debug_build():
    wrong = jaxcc.XLACustomKernel("check_bounds_primitive")
    wrong.def_kernel("jax", "cpu", lambda **p: lambda x: 2 * x)
    wrong.def_cpp_kernel(lambda **p: catalogue.bounds_module().past_end)
    report = jaxcc.check_kernel(wrong, catalogue.X, outs=OUTS)
    assert failed(report) == {"bounds"}, str(report)
    assert report["bounds"].detail.startswith("backend 'cpp': function 'past_end' wrote past")
    twice = jaxcc.load_cpp_inline("check_bounds_twice", SOURCE_V1, ["twice"]).twice
    right = jaxcc.XLACustomKernel("check_bounds_primitive_right")
    right.def_cpp_kernel(lambda **p: twice)
    right.def_kernel("jax", "cpu", lambda **p: lambda x: 2 * x)
    report = jaxcc.check_kernel(right, catalogue.X, outs=OUTS, checks=["bounds", "backends"])
    assert report.ok, str(report)
    assert report["bounds"].status == "passed", str(report)
    assert report["bounds"].detail.endswith(
        "outside its inputs (two fills) (backend 'cpp'); not checked: backend 'jax': not a jaxcc "
        "C++/CUDA kernel function"
    )


def test_kernels_that_are_not_jaxcc_builds_are_skipped_with_the_reason():
    numba = pytest.importorskip("numba")

    @numba.njit
    def doubled(x, out):
        out[:] = 2 * x

    kernel = jaxcc.XLACustomKernel("check_bounds_numba")
    kernel.def_numba_kernel(lambda outs, **p: jaxcc.numba_kernel(doubled, outs=outs))
    report = jaxcc.check_kernel(kernel, catalogue.X, outs=OUTS, checks=["bounds", "outputs"])
    assert report.ok, str(report)
    assert report["bounds"].status == "skipped"
    assert report["bounds"].detail == "backend 'numba': not a jaxcc C++/CUDA kernel function"


def test_cuda_kernel_without_a_gpu_is_skipped():
    from jaxcc.check.bounds import _cannot_check

    if jax.default_backend() == "gpu":
        pytest.skip("this process has a GPU")
    cuda = types.SimpleNamespace(platform="cuda", spec=types.SimpleNamespace(params=[]))
    assert _cannot_check(cuda) == "a CUDA kernel and no GPU in this process"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

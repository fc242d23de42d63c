"""An XLACustomKernel exported with symbolic shapes (issue 50, "also found" and item 8; decision
223): `outs` dimensions stay symbolic (they were turned into ints, JAX's untyped
InconclusiveDimensionOperation), so a jaxcc C++ backend and a JAX backend export with `b` open
and run at any b; a backend that needs the sizes as numbers, and the Numba bridge (its kernel is
an address of this process), are a typed ExportError naming the backend."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
void twice(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
}
"""
B4 = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 4"), jnp.float32)
X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.fixture(scope="module")
def kernel():
    twice = jaxcc.load_cpp_inline("export_symbolic", SOURCE, ["twice"]).twice
    k = jaxcc.XLACustomKernel("export_symbolic_twice")
    k.def_cpp_kernel(lambda **p: twice)
    k.def_kernel("jax", "cpu", lambda **p: lambda x: 2 * x)
    # A backend reading a size as a number: fine at concrete shapes, not with `b` open.
    k.def_kernel("sized", "cpu", lambda outs, **p: lambda x: 2 * x[: int(outs[0].shape[0])])
    return k


def call(kernel, backend):
    return lambda x: kernel(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend=backend)


@pytest.mark.parametrize("backend", ["cpp", "jax"])
def test_a_symbolic_batch_exports_and_runs_at_any_size(kernel, backend):
    exported = jaxcc.export(call(kernel, backend), B4)
    assert str(exported.out_avals[0].shape) == "(b, 4)"
    for n in (3, 1):
        np.testing.assert_array_equal(np.asarray(exported.call(X[:n])), 2 * X[:n])


def test_a_backend_that_needs_concrete_sizes_is_an_export_error_naming_it(kernel):
    np.testing.assert_array_equal(jaxcc.export(call(kernel, "sized"), X).call(X), 2 * X)
    with pytest.raises(jaxcc.ExportError, match=r"the 'sized' kernel for cpu needs concrete "):
        jaxcc.export(call(kernel, "sized"), B4)


def test_the_numba_backend_is_an_export_error_as_with_concrete_shapes():
    numba = pytest.importorskip("numba")

    @numba.njit
    def doubled(x, out):
        out[:] = 2 * x

    k = jaxcc.XLACustomKernel("export_symbolic_numba")
    k.def_numba_kernel(lambda outs, **p: jaxcc.numba_kernel(doubled, outs=outs))
    for shape in (X, B4):
        with pytest.raises(jaxcc.ExportError, match=r"launcher of a numba_kernel"):
            jaxcc.export(call(k, None), shape)


def test_check_kernels_export_row_exports_an_xla_custom_kernel_with_a_symbolic_batch(kernel):
    """Item 8: the export row ran for loaded kernels only; an XLACustomKernel whose outs follow
    from its inputs (outs= a function) is exported with `b` open and called at b and b - 1."""
    pytest.importorskip("flatbuffers")

    def outs(x):
        return jax.ShapeDtypeStruct(x.shape, x.dtype)

    report = jaxcc.check_kernel(kernel, X, outs=outs, backend="cpp", checks=["export"])
    assert report["export"].status == "passed", str(report)
    assert report["export"].detail.endswith(
        "a symbolic leading dimension exports and equals eager at b=3 and b=2"
    )
    sized = jaxcc.check_kernel(kernel, X, outs=outs, backend="sized", checks=["export"])
    assert sized["export"].status == "passed", str(sized)  # concrete export works
    assert "symbolic batch not exported (ExportError: " in sized["export"].detail


def test_check_kernels_export_row_skips_a_numba_backend_saying_why():
    numba = pytest.importorskip("numba")
    pytest.importorskip("flatbuffers")

    @numba.njit
    def doubled(x, out):
        out[:] = 2 * x

    k = jaxcc.XLACustomKernel("export_symbolic_numba_row")
    k.def_numba_kernel(lambda outs, **p: jaxcc.numba_kernel(doubled, outs=outs))
    report = jaxcc.check_kernel(k, X, outs=jax.ShapeDtypeStruct(X.shape, X.dtype),
                                checks=["export"])  # fmt: skip
    assert report["export"].status == "skipped", str(report)
    assert report["export"].detail.startswith("this backend cannot be exported: ExportError: ")

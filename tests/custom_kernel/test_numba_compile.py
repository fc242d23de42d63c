"""How the Numba CPU bridge compiles a kernel (decision 127): once per process for equal code,
without the wrappers a Numba dispatcher adds, and not at all when the user compiled it already."""

import jax
import numba
import numpy as np
import pytest
from ck_helpers import X8, make_scaled, run_numba

from jaxcc.custom_kernel.bridges import numba_cpu_compile


@pytest.fixture(autouse=True)
def on_the_cpu():
    with jax.default_device(jax.devices("cpu")[0]):
        yield


def count_compiles(monkeypatch) -> list:
    """Every Numba compile from now on (a dispatcher's or the bridge's own), by function name."""
    from numba.core import compiler

    compiled, original = [], compiler.compile_extra

    def counting(typingctx, targetctx, func, *args, **kwargs):
        compiled.append(func.__name__)
        return original(typingctx, targetctx, func, *args, **kwargs)

    monkeypatch.setattr(compiler, "compile_extra", counting)
    return compiled


def test_equal_kernels_compile_once_per_process(monkeypatch):
    compiled = count_compiles(monkeypatch)
    first, again = make_scaled(7.0), make_scaled(7.0)  # what an operator does per configuration
    np.testing.assert_allclose(run_numba(first, X8), np.arange(8) * 7 + 1)
    np.testing.assert_allclose(run_numba(again, X8), np.arange(8) * 7 + 1)
    assert compiled.count("scaled") == 1  # the second one's code came from the first's compile


def test_a_kernel_is_compiled_without_numbas_python_and_c_wrappers(monkeypatch):
    """Decision 127: jaxcc calls the kernel's native function only; a dispatcher's compile would
    also build its CPython and cfunc wrappers (a third of the compile)."""
    compiled = count_compiles(monkeypatch)
    kernel = make_scaled(13.0)
    np.testing.assert_allclose(run_numba(kernel, X8), np.arange(8) * 13 + 1)
    assert compiled == ["scaled"]
    array = numba.types.Array(numba.float32, 1, "C")
    result, _ = numba_cpu_compile.compile_kernel(make_scaled(19.0), (array, array))
    defined = [f.name for f in result.library._final_module.functions if not f.is_declaration]
    assert not any(name.startswith(("_ZN7cpython", "cfunc.")) for name in defined), defined
    assert len(kernel.overloads) == 0  # the dispatcher itself was not asked
    # A kernel the user already compiled for these types is taken as it is.
    compiled.clear()
    called = make_scaled(17.0)
    called(np.zeros(8, np.float32), np.zeros(8, np.float32))
    np.testing.assert_allclose(run_numba(called, X8), np.arange(8) * 17 + 1)
    assert compiled == ["scaled"]  # the Python call's compile, not a second one

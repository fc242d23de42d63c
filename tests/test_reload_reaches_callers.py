"""A rebuild reaches every caller in the process (issue 49, items 9-11 and 13): a header edit
rebuilt with force_rebuild is a new version; the same load after a header edit re-checks what a
new process would; a re-registered XLACustomKernel generator runs the new module eagerly too; a
jitted function traces again after a reload and sees the new module; eager calls take NumPy
inputs as a jitted call does."""

import os
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc

USES_HEADER = r"""
#include "offset.h"
void shifted(const jaxcc::Tensor x, jaxcc::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + OFFSET;
}
"""

ADD = r"""
void add(const jaxcc::Tensor x, jaxcc::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + OFFSET;
}
"""


def add_source(offset: int) -> str:
    return f"#define OFFSET {offset}\n" + ADD


def write_header(directory, offset: int) -> None:
    """The header's new text, settled in the past so its stamp is trusted (decision 146a)."""
    path = directory / "offset.h"
    path.write_text(f"#define OFFSET {offset}\n")
    past = time.time() - 60 - offset  # a different mtime for every version
    os.utime(path, (past, past))


def load_shifted(name, include, **options):
    return jaxcc.load_cpp_inline(
        name, USES_HEADER, ["shifted"], extra_include_paths=[str(include)], **options
    )


ONES = jnp.ones(4, jnp.float32)


def test_a_header_edit_rebuilt_with_force_rebuild_runs_the_new_code(tmp_path, unique_name):
    write_header(tmp_path, 1)
    first = load_shifted(unique_name, tmp_path)
    np.testing.assert_array_equal(first.shifted(ONES), 2.0)
    write_header(tmp_path, 5)
    with pytest.warns(jaxcc.ReloadWarning):
        rebuilt = load_shifted(unique_name, tmp_path, force_rebuild=True)
    assert not rebuilt.cache_hit
    assert rebuilt.key == first.key  # a header edit keeps the key; the library is another
    np.testing.assert_array_equal(rebuilt.shifted(ONES), 6.0)
    np.testing.assert_array_equal(jax.jit(rebuilt.shifted)(ONES), 6.0)
    np.testing.assert_array_equal(first.shifted(ONES), 2.0)  # the old object keeps its build


def test_the_same_load_after_a_header_edit_sees_the_edit(tmp_path, unique_name):
    write_header(tmp_path, 1)
    first = load_shifted(unique_name, tmp_path)
    np.testing.assert_array_equal(first.shifted(ONES), 2.0)
    assert load_shifted(unique_name, tmp_path) is first  # nothing changed: the same module
    write_header(tmp_path, 3)
    with pytest.warns(jaxcc.ReloadWarning):
        again = load_shifted(unique_name, tmp_path)
    np.testing.assert_array_equal(again.shifted(ONES), 4.0)


def test_a_jitted_function_traces_again_after_a_reload_and_runs_the_new_code(unique_name):
    box = {"mod": jaxcc.load_cpp_inline(unique_name, add_source(1), ["add"])}

    def model(x):
        return box["mod"].add(x) * 2

    jitted = jax.jit(model)
    np.testing.assert_array_equal(jitted(ONES), 4.0)
    with pytest.warns(jaxcc.ReloadWarning) as caught:
        box["mod"] = jaxcc.load_cpp_inline(unique_name, add_source(10), ["add"])
    # What the warning says works, as written: the jitted function traces again by itself, and
    # jax.jit(model) anew sees the new module too.
    assert "jitted functions trace again at their next call" in str(caught[0].message)
    np.testing.assert_array_equal(jitted(ONES), 22.0)
    np.testing.assert_array_equal(jax.jit(model)(ONES), 22.0)


def test_a_reregistered_custom_kernel_generator_runs_the_new_module_eagerly(unique_name):
    def generator_of(module):
        def kernel_generator(**params):
            return module.add

        return kernel_generator

    first = jaxcc.load_cpp_inline(unique_name, add_source(1), ["add"])
    kernel = jaxcc.XLACustomKernel(f"{unique_name}_prim")
    kernel.def_cpp_kernel(generator_of(first))
    out = jax.ShapeDtypeStruct((4,), jnp.float32)
    np.testing.assert_array_equal(kernel(ONES, outs=out), 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jaxcc.ReloadWarning)
        second = jaxcc.load_cpp_inline(unique_name, add_source(7), ["add"])
    kernel.def_cpp_kernel(generator_of(second))  # what docs/usage.md prescribes after a reload
    np.testing.assert_array_equal(kernel(ONES, outs=out), 8.0)  # eager
    np.testing.assert_array_equal(jax.jit(lambda x: kernel(x, outs=out))(ONES), 8.0)
    np.testing.assert_array_equal(kernel(ONES, outs=out, backend="cpp"), 8.0)


def test_eager_calls_take_numpy_inputs_as_a_jitted_call_does(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, add_source(1), ["add"])
    x = np.arange(4.0)  # NumPy float64: JAX makes it float32 unless x64 is on
    eager = mod.add(x)
    jitted = jax.jit(mod.add)(x)
    assert eager.dtype == jitted.dtype == jnp.float32
    np.testing.assert_array_equal(eager, jitted)
    np.testing.assert_array_equal(eager, np.arange(4.0) + 1)

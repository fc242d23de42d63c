"""The linker a CPU module links with (decision 161a): every linker this machine has builds a
module that runs, and a link failure gets the same hint in each linker's words. The C++ tests
(src/toolchain/linker_test.cc) cover the choice itself with fake linkers."""

import json
import os
import shutil

import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc
from jaxcc import _core
from jaxcc.errors import CompileError, ToolchainError

SOURCE = r"""
#include "jaxcc/jaxcc.h"
void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1;
}
"""
LINKERS = ["system"] + [name for name in ("gold", "lld", "mold") if shutil.which(f"ld.{name}")]


def link_command(module) -> list:
    """The link step's command as the cache entry recorded it (the key's link flags)."""
    with open(os.path.join(os.path.dirname(module.path), "manifest.json")) as f:
        return json.load(f)["inputs"]["link_flags"]


@pytest.mark.parametrize("linker", LINKERS)
def test_each_installed_linker_builds_a_module_that_runs(linker, monkeypatch, unique_name):
    monkeypatch.setenv("JAXCC_LINKER", linker)
    assert _core.find_linker().path == linker
    module = jaxcc.load_cpp_inline(unique_name, SOURCE, ["add_one"])
    x = jnp.arange(8, dtype=jnp.float32)
    np.testing.assert_array_equal(module.add_one(x), np.arange(8) + 1)
    flags = link_command(module)
    if linker == "system":
        assert not any(f.startswith("-fuse-ld=") for f in flags), flags
    else:
        assert f"-fuse-ld={linker}" in flags, flags


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    "source, flags, expected",
    [
        (
            "void missing_symbol_xyz();\nvoid f(const jaxcc::Tensor x, jaxcc::Tensor y) { missing_symbol_xyz(); }",
            {},
            ["missing_symbol_xyz", "extra_ldflags=['-l<name>']"],
        ),
        (
            "#include <omp.h>\nvoid f(const jaxcc::Tensor x, jaxcc::Tensor y) { (void)omp_get_max_threads(); }",
            {},
            ["omp_get_max_threads", "pass -fopenmp in extra_cflags"],
        ),
        (
            "void f(const jaxcc::Tensor x, jaxcc::Tensor y) {}",
            {"extra_ldflags": ["-lno_such_library_jaxcc"]},
            ["no_such_library_jaxcc", "extra_ldflags=['-L<dir>', '-l<name>']"],
        ),
    ],
    ids=["undefined_symbol", "openmp_runtime", "missing_library"],
)
def test_link_failures_get_the_same_hint_from_every_linker(
    linker, source, flags, expected, monkeypatch, unique_name
):
    monkeypatch.setenv("JAXCC_LINKER", linker)
    with pytest.raises(CompileError) as error:
        jaxcc.load_cpp_inline(unique_name, '#include "jaxcc/jaxcc.h"\n' + source, ["f"], **flags)
    for text in expected:
        assert text in str(error.value), (linker, str(error.value))


def test_a_linker_that_is_not_installed_is_a_toolchain_error_naming_the_package(
    monkeypatch, unique_name
):
    missing = next((n for n in ("mold", "lld", "gold") if not shutil.which(f"ld.{n}")), None)
    if missing is None:
        pytest.skip("every linker jaxcc knows is installed here")
    monkeypatch.setenv("JAXCC_LINKER", missing)
    with pytest.raises(ToolchainError, match=f"JAXCC_LINKER={missing}.*apt-get install"):
        jaxcc.load_cpp_inline(unique_name, SOURCE, ["add_one"])

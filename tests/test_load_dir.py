"""load_cpp_dir: one translation unit per file, annotations across files, incremental rebuilds."""

import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc

HERE = os.path.dirname(__file__)


def test_every_file_is_its_own_unit_and_annotations_span_files(tmp_path, unique_name):
    src = tmp_path / "mod"
    shutil.copytree(os.path.join(HERE, "kernels", "dir_module"), src)
    mod = jaxcc.load_cpp_dir(src, name=unique_name)
    assert sorted(mod.function_names) == ["double_it", "shift"]
    x = jnp.arange(3, dtype=jnp.float32)
    np.testing.assert_array_equal(jax.jit(mod.double_it)(x), [0, 2, 4])
    np.testing.assert_array_equal(mod.shift(x, by=1.5), [1.5, 2.5, 3.5])


def test_a_rebuild_in_a_kept_build_directory_recompiles_only_the_changed_file(
    tmp_path, unique_name
):
    src = tmp_path / "mod"
    shutil.copytree(os.path.join(HERE, "kernels", "dir_module"), src)
    build = tmp_path / "build"
    jaxcc.load_cpp_dir(src, name=unique_name, build_directory=build, auto_register=False)
    shift = src / "shift.cc"
    shift.write_text(shift.read_text().replace("+ by", "- by"))
    mod = jaxcc.load_cpp_dir(src, name=unique_name, build_directory=build, auto_register=False)
    assert not mod.cache_hit
    log = (build / "build.log").read_text()
    compiled = sorted(line.split()[-1] for line in log.splitlines() if "] compile " in line)
    source_index = sorted(p.name for p in src.glob("*.cc")).index("shift.cc")
    assert compiled == [f"kernel_{source_index}.cc"], log


def test_an_empty_directory_is_a_spec_error(tmp_path):
    with pytest.raises(jaxcc.SpecError, match="file_patterns"):
        jaxcc.load_cpp_dir(tmp_path)

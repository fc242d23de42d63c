"""Incremental by default (docs/cache.md, "Reused objects"): every translation unit's object is
shared through the cache, so editing one file of a directory recompiles that unit only, with no
build_directory. Compiler invocations are counted through a $CXX wrapper that logs them."""

import os
import shutil

import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled_units, logging_compiler

import jaxcc

FILES = {
    "a.cc": '#include "jaxcc/jaxcc.h"\n#include "only_a.h"\n'
    "void fa(const jaxcc::Tensor x, jaxcc::Tensor out) {\n"
    "  for (int64_t i = 0; i < x.numel(); ++i)\n"
    "    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + A_OFFSET;\n}\n",
    "b.cc": '#include "jaxcc/jaxcc.h"\n'
    "void fb(const jaxcc::Tensor x, jaxcc::Tensor out) {\n"
    "  for (int64_t i = 0; i < x.numel(); ++i)\n"
    "    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * 2.0f;\n}\n",
    "c.cc": '#include "jaxcc/jaxcc.h"\n'
    "void fc(const jaxcc::Tensor x, jaxcc::Tensor out) {\n"
    "  for (int64_t i = 0; i < x.numel(); ++i)\n"
    "    out.data_ptr<float>()[i] = -x.data_ptr<float>()[i];\n}\n",
    "only_a.h": "#pragma once\n#define A_OFFSET 1.0f\n",
}
FUNCTIONS = {"fa": None, "fb": None, "fc": None}


ALL_UNITS = ["ffi_frame_runtime.cc", "ffi_wrapper.cc", "kernel_0.cc", "kernel_1.cc", "kernel_2.cc"]


def make_dir(tmp_path):
    src = tmp_path / "mod"
    src.mkdir()
    for name, text in FILES.items():
        (src / name).write_text(text)
    return src


LOADS = iter(range(1_000_000))


def load(src, name, **kwargs):
    # A fresh target prefix per load: XLA cannot replace a registered handler, and the prefix
    # is not part of the module's key.
    prefix = f"{name}_{next(LOADS)}"
    return jaxcc.load_cpp_dir(src, FUNCTIONS, name=name, target_prefix=prefix, **kwargs)


def check(mod, offset=1.0, scale=2.0):
    x = jnp.arange(4, dtype=jnp.float32)
    np.testing.assert_array_equal(mod.fa(x), np.arange(4) + offset)
    np.testing.assert_array_equal(mod.fb(x), np.arange(4) * scale)
    np.testing.assert_array_equal(mod.fc(x), -np.arange(4))


def test_editing_one_file_recompiles_only_that_unit(
    fresh_cache, unique_name, tmp_path, monkeypatch
):
    log = logging_compiler(tmp_path, monkeypatch)
    src = make_dir(tmp_path)
    first = load(src, unique_name)
    check(first)
    assert compiled_units(log) == ALL_UNITS
    assert first.objects_reused == 0

    (src / "b.cc").write_text(FILES["b.cc"].replace("2.0f", "3.0f"))
    edited = load(src, unique_name)
    assert not edited.cache_hit
    # b.cc only; a, c, the wrapper and the frame runtime are linked
    assert compiled_units(log) == ["kernel_1.cc"]
    assert edited.objects_reused == 4 and edited.wrapper_reused
    check(edited, scale=3.0)

    # Back to the first text: the whole module is a cache hit again, nothing compiles.
    (src / "b.cc").write_text(FILES["b.cc"])
    assert load(src, unique_name).cache_hit
    assert compiled_units(log) == []


def test_another_module_compiles_its_own_units_and_links_the_frame_runtime(
    fresh_cache, unique_name, tmp_path, monkeypatch
):
    # The frame runtime's text and command are the same for every module of a platform
    # (decision 128): a cache compiles it once, then every module links that object.
    log = logging_compiler(tmp_path, monkeypatch)
    src = make_dir(tmp_path)
    load(src, unique_name)
    assert "ffi_frame_runtime.cc" in compiled_units(log)
    other = jaxcc.load_cpp_inline(
        unique_name + "_other",
        "void neg(const jaxcc::Tensor& x, jaxcc::Tensor& out) {\n"
        "  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = -x.data_ptr<float>()[i];\n"
        "}\n",
        functions={"neg": None},
    )
    assert compiled_units(log) == ["ffi_wrapper.cc", "kernel_0.cc"]
    assert other.objects_reused == 1
    np.testing.assert_array_equal(other.neg(jnp.arange(3, dtype=jnp.float32)), -np.arange(3))


def test_a_header_edit_recompiles_the_units_that_include_it(
    fresh_cache, unique_name, tmp_path, monkeypatch
):
    log = logging_compiler(tmp_path, monkeypatch)
    src = make_dir(tmp_path)
    load(src, unique_name)
    compiled_units(log)
    (src / "only_a.h").write_text(FILES["only_a.h"].replace("1.0f", "5.0f"))
    mod = load(src, unique_name)
    assert compiled_units(log) == ["kernel_0.cc"]  # the depfile of a.cc listed only_a.h
    check(mod, offset=5.0)
    # The entry tracks the header even though the other units' objects were reused.
    (src / "only_a.h").write_text(FILES["only_a.h"].replace("1.0f", "7.0f"))
    mod = load(src, unique_name)
    assert not mod.cache_hit and compiled_units(log) == ["kernel_0.cc"]
    check(mod, offset=7.0)


def test_a_damaged_object_is_compiled_again_never_linked(
    fresh_cache, unique_name, tmp_path, monkeypatch
):
    log = logging_compiler(tmp_path, monkeypatch)
    src = make_dir(tmp_path)
    load(src, unique_name)
    compiled_units(log)
    for obj in (fresh_cache / ".objects").glob("*.o"):
        data = bytearray(obj.read_bytes())
        data[len(data) // 2] ^= 0xFF
        obj.write_bytes(bytes(data))
    (src / "b.cc").write_text(FILES["b.cc"].replace("2.0f", "4.0f"))
    mod = load(src, unique_name)
    assert compiled_units(log) == ALL_UNITS
    assert mod.objects_reused == 0
    check(mod, scale=4.0)


def test_force_rebuild_and_clear_cache(fresh_cache, unique_name, tmp_path, monkeypatch):
    log = logging_compiler(tmp_path, monkeypatch)
    src = make_dir(tmp_path)
    load(src, unique_name)
    compiled_units(log)
    forced = load(src, unique_name, force_rebuild=True)
    assert compiled_units(log) == ALL_UNITS and forced.objects_reused == 0
    assert any((fresh_cache / ".objects").glob("*.o"))
    jaxcc.clear_cache()
    assert not (fresh_cache / ".objects").exists()


CUDA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels", "cuda_dir")
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists(
    "/usr/local/cuda/bin/nvcc") else None)  # fmt: skip


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_a_cuda_directory_rebuilds_only_the_edited_file_in_the_cache(
    fresh_cache, unique_name, tmp_path, monkeypatch, capfd
):
    # No build_directory: the default cache path is incremental through the shared objects.
    if shutil.which("nvcc") is None:
        monkeypatch.setenv("CUDA_HOME", os.path.dirname(os.path.dirname(NVCC)))
    src = tmp_path / "kernels"
    shutil.copytree(CUDA_DIR, src)
    kwargs = dict(name=unique_name, compute_capability="8.0", verbose=True)

    def nvcc_compiles():
        err = capfd.readouterr().err
        return [line for line in err.splitlines() if "nvcc" in line and " -c " in line]

    first = jaxcc.load_cuda_dir(str(src), **kwargs)
    assert len(nvcc_compiles()) == 3 and first.objects_reused == 0
    (src / "mul.cu").write_text(
        (src / "mul.cu").read_text().replace("a[i] * b[i]", "a[i] * b[i] * 1.0f")
    )
    second = jaxcc.load_cuda_dir(str(src), target_prefix=unique_name + "_v2", **kwargs)
    compiled = nvcc_compiles()
    assert len(compiled) == 1 and "kernel_1.cu" in compiled[0], compiled  # mul.cu only
    # add.cu, sub.cu, the wrapper, the frame runtime
    assert not second.cache_hit and second.objects_reused == 4
    # The shared header is in every unit's recorded dependencies.
    (src / "common.cuh").write_text("#pragma once\n#define CUDA_DIR_BLOCK 256\n")
    third = jaxcc.load_cuda_dir(str(src), target_prefix=unique_name + "_v3", **kwargs)
    # only the wrapper and the frame runtime
    assert len(nvcc_compiles()) == 3 and third.objects_reused == 2

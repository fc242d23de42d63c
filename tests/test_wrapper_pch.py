"""The generated wrappers' headers are precompiled once per cache, compiler and flags, and every
wrapper compile reads that (decision 124; docs/cache.md, "Precompiled wrapper prelude")."""

import os
import subprocess
import sys

import jax.numpy as jnp
import pytest

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
void scale(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  for (int64_t i = 0; i < x.numel(); ++i)
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * factor + OFFSET;
}
"""


def preludes(cache):
    return sorted((cache / ".pch").glob("*/wrapper_prelude.h.gch"))


def build(name, offset, capfd):
    mod = jaxcc.load_cpp_inline(
        name, SOURCE.replace("OFFSET", f"{offset}.0f"), ["scale"], verbose=True
    )
    out = mod.scale(jnp.arange(3, dtype=jnp.float32), factor=2.0)
    assert [float(v) for v in out] == [offset + 0.0, offset + 2.0, offset + 4.0]
    return capfd.readouterr().err


def test_every_wrapper_compile_reads_one_precompiled_prelude(fresh_cache, unique_name, capfd):
    first = build(unique_name + "_a", 0, capfd)
    assert len(preludes(fresh_cache)) == 1
    prelude = preludes(fresh_cache)[0]
    stamp = prelude.stat()
    assert "-include wrapper_prelude.h" in first, first
    # A second module of another signature-equal source: a new wrapper compile, the same
    # prelude, not rebuilt.
    second = build(unique_name + "_b", 1, capfd)
    assert "ffi_wrapper.cc" in second and "-include wrapper_prelude.h" in second, second
    assert preludes(fresh_cache) == [prelude]
    assert prelude.stat().st_mtime_ns == stamp.st_mtime_ns
    assert prelude.stat().st_ino == stamp.st_ino


def test_a_build_without_a_usable_prelude_still_builds(fresh_cache, unique_name, capfd):
    build(unique_name + "_a", 0, capfd)
    # A damaged precompiled header: GCC refuses it and parses the headers itself.
    for gch in preludes(fresh_cache):
        gch.write_bytes(b"not a precompiled header")
    build(unique_name + "_b", 3, capfd)


def test_clear_cache_removes_the_precompiled_prelude(fresh_cache, unique_name, capfd):
    build(unique_name, 0, capfd)
    assert preludes(fresh_cache)
    jaxcc.clear_cache()
    assert not (fresh_cache / ".pch").exists()


@pytest.mark.parametrize("level", [0, 3])
def test_each_wrapper_level_has_its_own_prelude(fresh_cache, unique_name, level, capfd):
    jaxcc.load_cpp_inline(
        f"{unique_name}_{level}",
        SOURCE.replace("OFFSET", "0.0f"),
        ["scale"],
        optimization_level=level,
    )
    assert len(preludes(fresh_cache)) == 1


LOAD = r"""
import sys
import jax.numpy as jnp
import jaxcc
mod = jaxcc.load_cpp_inline(sys.argv[1], sys.argv[2], ["scale"])
print(float(mod.scale(jnp.ones(2, dtype=jnp.float32), factor=3.0)[1]))
"""


def test_two_processes_building_at_once_share_one_prelude(fresh_cache, unique_name):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LOAD, f"{unique_name}_{i}", SOURCE.replace("OFFSET", f"{i}.0f")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )  # fmt: skip
        for i in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for i, (p, (out, err)) in enumerate(zip(procs, outs, strict=True)):
        assert p.returncode == 0, err
        assert float(out.strip().splitlines()[-1]) == 3.0 + i
    assert len(preludes(fresh_cache)) == 1
    assert not list((fresh_cache / ".pch").glob("*/*.tmp-*"))

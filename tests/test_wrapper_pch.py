"""The generated wrappers' headers are precompiled once per cache, compiler and flags (by the
cache's second build, beside it), and every later wrapper compile reads that (decision 122;
docs/cache.md, "Precompiled wrapper prelude")."""

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


def test_the_prelude_is_made_by_a_second_build_and_read_from_the_third(
    fresh_cache, unique_name, capfd
):
    # A cache's first build (often its only one) neither waits for nor makes a prelude.
    first = build(unique_name + "_a", 0, capfd)
    assert "-include wrapper_prelude.h" not in first
    assert not preludes(fresh_cache)
    # A cache that has compiled before makes it beside the build, which does not wait for it.
    second = build(unique_name + "_b", 1, capfd)
    assert "-include wrapper_prelude.h" not in second
    assert len(preludes(fresh_cache)) == 1
    prelude = preludes(fresh_cache)[0]
    stamp = prelude.stat()
    # Every wrapper compile after that reads it; it is not built again.
    for i, offset in enumerate((2, 3)):
        later = build(f"{unique_name}_c{i}", offset, capfd)
        assert "ffi_wrapper.cc" in later and "-include wrapper_prelude.h" in later, later
    assert preludes(fresh_cache) == [prelude]
    assert prelude.stat().st_mtime_ns == stamp.st_mtime_ns
    assert prelude.stat().st_ino == stamp.st_ino


def test_a_build_without_a_usable_prelude_still_builds(fresh_cache, unique_name, capfd):
    build(unique_name + "_a", 0, capfd)
    build(unique_name + "_b", 1, capfd)
    # A damaged precompiled header: not read (its SHA-256 differs), made again beside the build.
    for gch in preludes(fresh_cache):
        gch.write_bytes(b"not a precompiled header")
    assert "-include wrapper_prelude.h" not in build(unique_name + "_c", 3, capfd)
    assert "-include wrapper_prelude.h" in build(unique_name + "_d", 4, capfd)


def test_clear_cache_removes_the_precompiled_prelude(fresh_cache, unique_name, capfd):
    build(unique_name + "_a", 0, capfd)
    build(unique_name + "_b", 1, capfd)
    assert preludes(fresh_cache)
    jaxcc.clear_cache()
    assert not (fresh_cache / ".pch").exists()


@pytest.mark.parametrize("level", [0, 3])
def test_each_wrapper_level_has_its_own_prelude(fresh_cache, unique_name, level, capfd):
    for offset in (0, 1):
        jaxcc.load_cpp_inline(
            f"{unique_name}_{level}_{offset}",
            SOURCE.replace("OFFSET", f"{offset}.0f"),
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


def test_two_processes_building_at_once_share_one_prelude(fresh_cache, unique_name, capfd):
    build(unique_name, 0, capfd)  # the cache has compiled before: the next builds make it
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

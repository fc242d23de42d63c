"""Declared dtypes (decision 158) survive every way a load can skip reading the spec: the cache
key changes with them, a warm load in a new process hands back the same dtypes from the warm
index, and a bundle's manifest carries them (one without them still loads: any dtype)."""

import json
import os
import subprocess
import sys
import time
import warnings

import jax.numpy as jnp
import pytest
from conftest import run_python

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"

// @BE halve arg:float32 ret:float32
void halve(const jaxcc::Tensor x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i] / 2;
}
"""


@pytest.fixture(autouse=True, scope="module")
def installed_headers_settled():
    """No warm record is written while a watched directory changed in the last 3 s (decision
    84); right after `pip install` the installed headers are that young, so wait them out."""
    import jax

    roots = [jaxcc.include_dir(), os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api")]
    youngest = max(os.stat(d).st_mtime for root in roots for d, _, _ in os.walk(root))
    time.sleep(max(0.0, youngest + 3.5 - time.time()))


def test_the_cache_key_changes_when_only_a_declared_dtype_does():
    source = SOURCE.replace("// @BE halve arg:float32 ret:float32\n", "")
    keys = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jaxcc.ReloadWarning)  # one name, changed specs
        for spec in ("arg ret", "arg:float32 ret", "arg:float64 ret", "arg ret:float32"):
            mod = jaxcc.load_cpp_inline("arg_dtypes_key", source, {"halve": spec})
            keys[spec] = mod.key
            declared = [p.dtype for p in mod.specs["halve"].params]
            assert declared == [t.partition(":")[2] or None for t in spec.split()], spec
    assert len(set(keys.values())) == len(keys), keys


PROBE = """
import json, sys
import jax.numpy as jnp
import jaxcc
from jaxcc import _core
mod = jaxcc.load_cpp_file(sys.argv[1])
stages = [stage for stage, _ in _core.last_load_trace()]
try:
    mod.halve(jnp.ones(2, jnp.int32))
    refused = None
except jaxcc.DTypeMismatchError as e:
    refused = str(e)
print(json.dumps({"hit": mod.cache_hit, "stages": stages, "refused": refused,
                  "dtypes": [p.dtype for p in mod.specs["halve"].params],
                  "value": mod.halve(jnp.full(2, 3.0, jnp.float32)).tolist()}))
"""


def test_a_warm_load_in_a_new_process_gives_the_same_dtypes(tmp_path):
    source = tmp_path / "halve.cc"
    source.write_text(SOURCE)
    env = {"JAXCC_CACHE_DIR": str(tmp_path / "cache"), "JAXCC_DEFER_SOURCES": "0"}
    reports = []
    for _ in range(2):
        result = run_python(PROBE.replace("sys.argv[1]", repr(str(source))), env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        reports.append(json.loads(result.stdout.strip().splitlines()[-1]))
    cold, warm = reports
    assert not cold["hit"] and warm["hit"]
    # The index answered: the spec came from its record, not from reading the source again.
    assert "warm index" in warm["stages"] and "header digest (memo)" not in warm["stages"]
    for report in reports:
        assert report["dtypes"] == ["float32", "float32"]
        assert report["refused"].startswith("halve: input 1 ('x') is int32"), report
        assert report["value"] == [1.5, 1.5]


def jaxcc_cli(*args):
    return subprocess.run([sys.executable, "-m", "jaxcc", *args], capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_a_bundle_carries_the_dtypes_and_an_older_manifest_means_any(tmp_path):
    source = tmp_path / "halve.cc"
    source.write_text(SOURCE)
    out = tmp_path / "bundle"
    result = jaxcc_cli("build", str(source), "--name", "arg_dtypes_bundle", "--out", str(out))
    assert result.returncode == 0, result.stderr
    manifest_path = out / "jaxcc-bundle.json"
    manifest = json.loads(manifest_path.read_text())
    params = manifest["functions"][0]["params"]
    assert [p.get("dtype") for p in params] == ["float32", "float32"]
    mod = jaxcc.load_library(out, target_prefix="arg_dtypes_bundle_typed")
    assert [p.dtype for p in mod.specs["halve"].params] == ["float32", "float32"]
    with pytest.raises(jaxcc.DTypeMismatchError, match=r"input 1 \('x'\) is int32"):
        mod.halve(jnp.ones(2, jnp.int32))
    assert mod.halve(jnp.full(2, 5.0, jnp.float32)).tolist() == [2.5, 2.5]
    # A bundle written before dtypes were recorded: no field, so any dtype, as then.
    for p in params:
        del p["dtype"]
    manifest_path.chmod(0o644)
    manifest_path.write_text(json.dumps(manifest, indent=2))
    old = jaxcc.load_library(out, target_prefix="arg_dtypes_bundle_old")
    assert [p.dtype for p in old.specs["halve"].params] == [None, None]
    assert old.halve(jnp.full(2, 5.0, jnp.float32)).tolist() == [2.5, 2.5]

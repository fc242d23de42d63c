"""Bundles keep sharding rules (issue 25): `jaxcc build` records each function's rule in the
manifest, `jaxcc.load_library` applies it, and `sharding=` adds or replaces rules as the loaders'
does. On one device here; tests/sharding/fuzz.py (test_sharding_fuzz.py) runs bundled kernels
on 8 devices against the same kernels on one, compiled-program guard included."""

import json
import subprocess
import sys

import numpy as np
import pytest

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
// @BE row_norm arg ret sharding="r  c -> r c; need_replication: c"
void row_norm(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) s += in[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = in[r * cols + c] / s;
  }
}
// @BE twice arg ret
void twice(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
}
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    root = tmp_path_factory.mktemp("ruled")
    (root / "ruled.cc").write_text(SOURCE)
    out = root / "ruled_bundle"
    result = subprocess.run([sys.executable, "-m", "jaxcc", "build", str(root / "ruled.cc"),
                             "--name", "ruled_bundle", "--out", str(out)],
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def test_bundle_keeps_the_sharding_rule(bundle):
    manifest = json.loads((bundle / "jaxcc-bundle.json").read_text())
    rules = {f["name"]: f["sharding_rule"] for f in manifest["functions"]}
    assert rules == {"row_norm": "r c -> r c; need_replication: c", "twice": ""}
    m = jaxcc.load_library(bundle, replace=True)
    assert m.specs["row_norm"].sharding_rule == "r c -> r c; need_replication: c"
    assert m.row_norm.sharding == jaxcc.ShardingRule("r c -> r c; need_replication: c")
    assert m.twice.sharding is None
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(m.row_norm(x), x / x.sum(1, keepdims=True), rtol=1e-6)


def test_load_library_sharding_adds_and_replaces_rules(bundle):
    m = jaxcc.load_library(bundle, replace=True,
                           sharding={"twice": "... -> ...", "row_norm": "r c -> r c; "
                                     "need_replication: r c"})  # fmt: skip
    assert m.twice.sharding.text == "... -> ..."
    assert m.row_norm.sharding.text == "r c -> r c; need_replication: r c"
    np.testing.assert_allclose(m.twice(np.ones(4, np.float32)), 2 * np.ones(4))


@pytest.mark.parametrize(
    ("sharding", "expected"),
    [
        ({"twise": "i -> i"}, "did you mean `twice`?"),
        ({"twice": "i, j -> i"}, "2 input(s), but the function takes 1"),
        ({"row_norm": "r c -> r"}, "`c` appears only in inputs"),
        (["twice"], "must be a dict"),
    ],
)
def test_load_library_refuses_a_bad_rule_before_loading(bundle, sharding, expected):
    with pytest.raises(jaxcc.SpecError, match=None) as info:
        jaxcc.load_library(bundle, replace=True, sharding=sharding)
    assert expected in str(info.value)


def test_a_bundle_written_before_rules_were_recorded_loads_without_one(bundle, tmp_path):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(bundle, old)
    manifest = json.loads((old / "jaxcc-bundle.json").read_text())
    for function in manifest["functions"]:
        del function["sharding_rule"]
    (old / "jaxcc-bundle.json").write_text(json.dumps(manifest))
    m = jaxcc.load_library(old, replace=True)
    assert m.row_norm.sharding is None
    manifest["functions"][0]["sharding_rule"] = "r c -> r"  # a rule the reader refuses
    (old / "jaxcc-bundle.json").write_text(json.dumps(manifest))
    with pytest.raises(jaxcc.BundleError, match="sharding rule of 'row_norm'"):
        jaxcc.load_library(old, replace=True)

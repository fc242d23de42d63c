"""Bundles carry tuning (issue 40, decision 159b): `jaxcc build` of a tuned module ships every
variant and the decisions made so far; `load_library` in a fresh process with an empty cache
registers the variants and uses the shipped decision for its key without timing anything, tunes
a new key as usual, and refuses a bundle whose decisions or variants were altered."""

import json
import os
import textwrap

import pytest
from conftest import run_python
from test_autotune import REPEAT_SOURCE

import jaxcc

# Counts the timings in the child: a shipped key must time nothing.
LOADER = textwrap.dedent("""
    import json, sys
    import jax.numpy as jnp, jaxcc
    from jaxcc.tune import store as _tune_store
    from jaxcc.tune import decide
    timed = []
    original = decide.tune
    def counting(fn, shapes, *rest):
        timed.append(str(shapes))
        return original(fn, shapes, *rest)
    decide.tune = counting
    mod = jaxcc.load_library(sys.argv[1])
    shipped = float(mod.bump(jnp.zeros(333, jnp.float32))[0])
    after_shipped = len(timed)
    fresh = float(mod.bump(jnp.zeros(77, jnp.float32))[0])
    print("RESULT " + json.dumps({
        "values": [shipped, fresh], "timed_for_shipped": after_shipped, "timed": len(timed),
        "variants": mod.bump.variant_targets,
        "local": [r["key"] for r in _tune_store.list_decisions(jaxcc.get_cache_dir())],
        "registered": [t for t in jaxcc.list_registered_targets() if "bundle_tuned" in t]}))
""")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    root = tmp_path_factory.mktemp("tuned_bundle")
    (root / "tuned_for_bundle.py").write_text(
        "import jaxcc\n"
        f"mod = jaxcc.load_cpp_inline('bundle_tuned', {REPEAT_SOURCE!r}, "
        "tune={'bump': {'REPEAT': [3000, 1]}})\n"
    )
    # The builds go to the session's cache (its frame runtime is compiled already).
    env = {"PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = run_python(
        "import sys; from jaxcc.__main__ import main; sys.exit(main(['build', '--module', "
        f"'tuned_for_bundle', '--out', {str(root / 'out')!r}, '--tune-shapes', "
        "'bump=float32[333]']))",
        env,
    )
    assert done.returncode == 0, done.stderr
    assert "bundle_tuned (tuned: bump; 2 builds, 1 decisions)" in done.stdout, done.stdout
    return root / "out" / "bundle_tuned"


def run_python_with_arg(path, env):
    code = f"import sys; sys.argv = ['x', {str(path)!r}]\n" + LOADER
    return run_python(code, env)


def _lines(err):
    return [line for line in err.splitlines() if line.startswith("jaxcc autotune:")]


def test_bundle_holds_every_variant_and_the_decisions(bundle):
    top = json.loads((bundle / "jaxcc-tuned.json").read_text())
    assert [b["dir"] for b in top["builds"]] == ["tune-REPEAT3000", "tune-REPEAT1"]
    covered = {f["path"] for f in top["files"]}
    assert covered == {
        "tune-REPEAT3000/jaxcc-bundle.json", "tune-REPEAT1/jaxcc-bundle.json",
        "autotune-decisions.json",
    }  # fmt: skip
    (decision,) = json.loads((bundle / "autotune-decisions.json").read_text())
    assert decision["key"] == "float32[333]" and decision["chosen_text"] == "REPEAT=1"


def test_fresh_process_uses_the_shipped_decision_and_tunes_a_new_key(bundle, tmp_path):
    done = run_python_with_arg(bundle, {"JAXCC_CACHE_DIR": str(tmp_path / "empty"),
                                        "JAXCC_PRINT_AUTOTUNING": "1",
                                        "JAXCC_TUNE_RETIME": "0"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.split("RESULT ", 1)[1])
    assert result["values"] == [1.0, 1.0]
    assert result["timed_for_shipped"] == 0  # the shipped key: nothing timed
    assert result["timed"] == 1  # the new key: tuned as usual ...
    assert result["local"] == ["float32[77]"]  # ... and remembered in the local cache only
    assert result["variants"] == {
        "REPEAT=3000": "bundle_tuned@tune-REPEAT3000.bump",
        "REPEAT=1": "bundle_tuned@tune-REPEAT1.bump",
    }
    assert "bundle_tuned.bump" in result["registered"]
    first, second = _lines(done.stderr)
    assert "key=float32[333]" in first and first.endswith("cached shipped"), first
    assert "key=float32[77]" in second and not second.endswith("cached"), second


@pytest.mark.parametrize(
    "victim, message",
    [
        ("autotune-decisions.json", "file autotune-decisions.json has SHA-256"),
        ("tune-REPEAT1/jaxcc-bundle.json", "file tune-REPEAT1/jaxcc-bundle.json has"),
        ("tune-REPEAT1/libbundle_tuned.so", "file libbundle_tuned.so has"),
    ],
)
def test_an_altered_file_is_refused(bundle, tmp_path, victim, message):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy)
    path = copy / victim
    data = bytearray(path.read_bytes())
    if victim.endswith(".json"):
        text = data.decode().replace("REPEAT=1", "REPEAT=3").replace('"REPEAT1"', '"REPEAT3"')
        data = bytearray(text.encode())
        if bytes(data) == path.read_bytes():
            data[-2:-1] = b" "
    else:
        data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    # Refused before anything is loaded, so this process can ask (no interpreter per case).
    with pytest.raises(jaxcc.BundleError) as refused:
        jaxcc.load_library(copy)
    assert message in str(refused.value) and "Nothing was loaded" in str(refused.value)


def test_build_of_annotated_sources_writes_a_tuned_bundle(tmp_path):
    source = REPEAT_SOURCE.replace("// @BE bump arg ret", '// @jaxcc bump tune="REPEAT=3000,1"')
    (tmp_path / "bundle_tuned.cc").write_text(source)
    done = run_python(  # built in the session's cache
        "import sys; from jaxcc.__main__ import main; sys.exit(main(['build', "
        f"{str(tmp_path / 'bundle_tuned.cc')!r}, '--out', {str(tmp_path / 'out')!r}]))",
    )
    assert done.returncode == 0, done.stderr
    assert "(tuned: bump; 2 builds, 0 decisions)" in done.stdout
    loaded = run_python_with_arg(tmp_path / "out", {"JAXCC_CACHE_DIR": str(tmp_path / "c2")})
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout.split("RESULT ", 1)[1])["timed"] == 2

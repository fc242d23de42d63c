"""Deferred source files (decision 139): a file whose stat has settled goes into the request by its
path and stamp; a warm load fingerprints the stamp and never reads the file, and everything that
needs the bytes (signatures, the key, the build) reads them then. Any rewrite moves the stamp
(ctime), so a changed file is never served the old module, in a fresh process or in this one."""

import json
import os
import textwrap
import time

import jax.numpy as jnp
import pytest
from conftest import run_python
from test_warm_index import installed_headers_settled  # noqa: F401  (records need settled dirs)

import jaxcc
from jaxcc import _core
from jaxcc.build import load_request as load
from jaxcc.build import options as jaxcc_options
from jaxcc.errors import SpecError

SETTLE_S = 3.2  # util/fs.h TimestampSettled: 3 s, and a margin


def kernel(offset: int) -> str:
    # The same length for every one-digit offset: a rewrite keeps the file's size.
    return textwrap.dedent(
        f"""
        #include "jaxcc/jaxcc.h"
        void add_offset(const jaxcc::Tensor x, jaxcc::Tensor out) {{
          for (int64_t i = 0; i < x.numel(); ++i)
            out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + {offset}.0f;
        }}
        """
    )


def rewrite_in_place(path, offset: int) -> None:
    """New bytes in the same inode, same size, and the old mtime put back: only ctime moves."""
    before = os.stat(path)
    with open(path, "r+") as f:
        f.write(kernel(offset))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


def settle() -> None:
    time.sleep(SETTLE_S)


PROBE = textwrap.dedent(
    """
    import json, sys
    import jax.numpy as jnp
    import jaxcc
    from jaxcc import _core
    source = _core.open_source_file(sys.argv[1])
    mod = jaxcc.load_cpp_file(sys.argv[1], functions=["add_offset"])
    stages = [stage for stage, _ in _core.last_load_trace()]
    print(json.dumps({"deferred": isinstance(source, _core.DeferredSourceFile),
                      "hit": mod.cache_hit, "stages": stages,
                      "value": float(mod.add_offset(jnp.zeros(2, jnp.float32))[0])}))
    """
)


def probe(path, cache):
    code = PROBE.replace("sys.argv[1]", repr(str(path)))
    result = run_python(code, env={"JAXCC_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_settled_file_is_loaded_warm_without_being_read(tmp_path):
    path = tmp_path / "kernel.cc"
    path.write_text(kernel(1))
    cache = tmp_path / "cache"
    fresh = probe(path, cache)  # written just now: read at once, as ever
    assert not fresh["deferred"] and fresh["value"] == 1.0
    settle()
    # Deferred now: no record under its stamp yet, so the file is read once and found by its
    # text (the record the first load wrote), without the full path; the record is kept under
    # the stamp as well.
    first = probe(path, cache)
    assert first["deferred"] and first["hit"] and first["value"] == 1.0
    assert "read deferred sources" in first["stages"]
    assert "warm fingerprint (text)" in first["stages"]
    assert "header digest (memo)" not in first["stages"]
    warm = probe(path, cache)
    assert warm["deferred"] and warm["hit"] and warm["value"] == 1.0
    assert "warm index" in warm["stages"] and "read deferred sources" not in warm["stages"]
    assert "header digest (memo)" not in warm["stages"]


def test_a_rewrite_keeping_size_inode_and_mtime_is_seen_by_a_fresh_process(tmp_path):
    path = tmp_path / "kernel.cc"
    path.write_text(kernel(1))
    cache = tmp_path / "cache"
    settle()
    probe(path, cache)
    assert probe(path, cache)["stages"].count("read deferred sources") == 0  # warm, by stamp
    rewrite_in_place(path, 2)
    settle()  # settled again, so the new file is deferred too: only its ctime tells
    after = probe(path, cache)
    assert after["deferred"] and not after["hit"] and after["value"] == 2.0


def test_a_rewrite_is_seen_by_the_same_process(tmp_path, fresh_cache):
    path = tmp_path / "kernel.cc"
    path.write_text(kernel(3))
    settle()
    first = jaxcc.load_cpp_file(str(path), functions=["add_offset"], name="deferred_same")
    assert first.add_offset(jnp.zeros(2, jnp.float32))[0] == 3.0
    again = jaxcc.load_cpp_file(str(path), functions=["add_offset"], name="deferred_same")
    assert again is first  # the in-process table: same file, same stamp
    rewrite_in_place(path, 4)
    settle()
    # Not the table's module: a new build, under versioned targets (XLA cannot put its handlers
    # in place of the old ones).
    with pytest.warns(jaxcc.ReloadWarning):
        second = jaxcc.load_cpp_file(str(path), functions=["add_offset"], name="deferred_same")
    assert second is not first
    assert second.targets["add_offset"].startswith("deferred_same@")
    assert second.add_offset(jnp.zeros(2, jnp.float32))[0] == 4.0


def load_request(path, source):
    request = jaxcc_options.make_request(
        "test",
        name="deferred_moved",
        platform="cpu",
        sources=[source],
        functions=["add_offset"],
        source_dirs=(str(path.parent),),
    )
    options = jaxcc_options.run_options(
        "test", verbose=False, force_rebuild=False, replace=False, ninja_workers=None
    )
    return request, options


def test_a_file_changed_after_its_stamp_was_taken_is_built_as_read_and_not_indexed(
    tmp_path, fresh_cache
):
    path = tmp_path / "kernel.cc"
    path.write_text(kernel(5))
    settle()
    source = _core.open_source_file(str(path))
    assert isinstance(source, _core.DeferredSourceFile) and source.label == str(path)
    rewrite_in_place(path, 6)  # between the stat and the load
    request, options = load_request(path, source)
    # resolve_specs reads the file as the load does.
    assert [spec.name for spec in _core.resolve_specs(request)] == ["add_offset"]
    module = load.load(request, options)
    # The bytes read are what was built...
    assert not module.cache_hit
    assert module.add_offset(jnp.zeros(2, jnp.float32))[0] == 6.0
    # ...and no record went under the stale stamp's fingerprint.
    index = fresh_cache / ".index"
    assert not index.exists() or not any(index.iterdir())


def test_a_deferred_file_removed_before_the_load_is_a_spec_error_naming_it(tmp_path, fresh_cache):
    path = tmp_path / "kernel.cc"
    path.write_text(kernel(7))
    settle()
    source = _core.open_source_file(str(path))
    assert isinstance(source, _core.DeferredSourceFile)
    path.unlink()
    request, options = load_request(path, source)
    with pytest.raises(SpecError, match=f"cannot read {path}.*readable source file"):
        load.load(request, options)


def test_the_setting_turns_deferral_off_and_a_bad_value_is_a_spec_error(tmp_path, monkeypatch):
    path = tmp_path / "kernel.cc"
    path.write_text(kernel(8))
    settle()
    assert isinstance(_core.open_source_file(str(path)), _core.DeferredSourceFile)
    monkeypatch.setenv("JAXCC_DEFER_SOURCES", "0")
    read = _core.open_source_file(str(path))
    assert isinstance(read, _core.SourceFile) and read.text == kernel(8)
    monkeypatch.setenv("JAXCC_DEFER_SOURCES", "yes")
    with pytest.raises(SpecError, match="JAXCC_DEFER_SOURCES=yes is not a setting; use 1"):
        jaxcc.load_cpp_file(str(path), functions=["add_offset"])

"""The warm index (decision 84): a fresh process that loads what an earlier one loaded goes from
the request straight to the verified cache entry, and falls back to the full path whenever
something the key depends on may have changed: the compiler, the user's headers, the index file
itself."""

import json
import os
import stat
import textwrap
import time

import pytest
from conftest import run_python

import jaxcc


@pytest.fixture(autouse=True, scope="module")
def installed_headers_settled():
    """No record is written while a watched directory changed in the last 3 s (racy timestamps,
    decision 84); right after `pip install` the installed header directories are that young, so
    wait until they are not, instead of failing when this module runs first."""
    import jax

    roots = [jaxcc.include_dir(), os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api")]
    dirs = [d for root in roots for d, _, _ in os.walk(root)]
    youngest = max(os.stat(d).st_mtime for d in dirs)
    time.sleep(max(0.0, youngest + 3.5 - time.time()))


SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include "offset.h"

void add_offset(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i)
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + OFFSET;
}
"""

PROBE = textwrap.dedent(
    """
    import json, sys
    import jax.numpy as jnp
    import jaxcc
    from jaxcc import _core
    mod = jaxcc.load_cpp_file(sys.argv[1], functions=["add_offset"])
    stages = [stage for stage, _ in _core.last_load_trace()]
    print(json.dumps({"hit": mod.cache_hit, "stages": stages,
                      "value": float(mod.add_offset(jnp.zeros(2, jnp.float32))[0])}))
    """
)


def probe(source_file, cache, env=None):
    # Every load reads the file and finds its record by the text: one record per request, however
    # long the test runs (a file that settles mid-test would get a second, by its stamp, decision
    # 139; test_deferred_sources.py tests that).
    full_env = {"JAXCC_CACHE_DIR": str(cache), "JAXCC_DEFER_SOURCES": "0", **(env or {})}
    code = PROBE.replace("sys.argv[1]", repr(str(source_file)))
    result = run_python(code, env=full_env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def took_warm_path(report):
    # The index answered: none of the stages only the full path runs were reached.
    return "warm index" in report["stages"] and "header digest (memo)" not in report["stages"]


def make_module(tmp_path, offset):
    (tmp_path / "offset.h").write_text(f"#define OFFSET {offset}.0f\n")
    source = tmp_path / "kernel.cc"
    source.write_text(SOURCE)
    return source


def test_a_second_process_loads_through_the_index(tmp_path):
    source = make_module(tmp_path, 1)
    cache = tmp_path / "cache"
    first = probe(source, cache)
    assert not first["hit"] and not took_warm_path(first) and first["value"] == 1.0
    second = probe(source, cache)
    assert second["hit"] and took_warm_path(second) and second["value"] == 1.0
    # The stage's parts, which the GPU probe reads to tell where a slow warm index stage went.
    assert {"warm index: read record", "warm index: decode"} <= set(second["stages"])
    index = list((cache / ".index").iterdir())
    assert len(index) == 1
    assert stat.S_IMODE(index[0].stat().st_mode) == 0o600


def test_an_edited_user_header_is_rebuilt_not_served_from_the_index(tmp_path):
    source = make_module(tmp_path, 1)
    cache = tmp_path / "cache"
    probe(source, cache)
    assert took_warm_path(probe(source, cache))
    (tmp_path / "offset.h").write_text("#define OFFSET 5.0f\n")
    os.utime(tmp_path / "offset.h", (1, 1))  # an old mtime: only the size and content say so
    after = probe(source, cache)
    assert not after["hit"] and after["value"] == 5.0


def test_a_header_edit_keeping_size_and_mtime_is_rebuilt_not_served_from_the_index(tmp_path):
    # What `cp -p`, `tar x`, `rsync -t` and `touch -r` leave (issue 37): the same size, the old
    # mtime; only the ctime moved. The header is settled first, so its stamp is trusted and the
    # warm path only stats it: the stamp must catch this, not a hash.
    header = tmp_path / "offset.h"
    source = make_module(tmp_path, 1)
    time.sleep(max(0.0, header.stat().st_ctime + 3.2 - time.time()))
    cache = tmp_path / "cache"
    probe(source, cache)
    assert took_warm_path(probe(source, cache))
    before = header.stat()
    header.write_text("#define OFFSET 6.0f\n")
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (header.stat().st_size, header.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )
    after = probe(source, cache)
    assert not after["hit"] and after["value"] == 6.0


def test_a_replaced_compiler_sends_the_load_down_the_full_path(tmp_path):
    source = make_module(tmp_path, 2)
    cache = tmp_path / "cache"
    wrapper = tmp_path / "cxx"
    wrapper.write_text('#!/bin/sh\nexec g++ "$@"\n')
    wrapper.chmod(0o755)
    # Installed compilers are old: a path changed in the last seconds gets no record (the
    # racy-timestamp rule), so this one is dated back.
    os.utime(wrapper, (1, 1))
    env = {"CXX": str(wrapper)}
    probe(source, cache, env)
    assert took_warm_path(probe(source, cache, env))
    # Same path, new file (new inode), same bytes: the record no longer holds, the full path
    # decides, and the compiler's content (decision 170) and version line are unchanged, so the
    # entry is still the right one.
    wrapper.unlink()
    wrapper.write_text('#!/bin/sh\nexec g++ "$@"\n')
    wrapper.chmod(0o755)
    after = probe(source, cache, env)
    assert after["hit"] and not took_warm_path(after) and after["value"] == 2.0
    # Other bytes under the same path are another compiler (decision 170): built again.
    wrapper.write_text('#!/bin/sh\n# replaced\nexec g++ "$@"\n')
    after = probe(source, cache, env)
    assert not after["hit"] and after["value"] == 2.0
    # A different CXX is a different request to the index: never served from the old record.
    other = tmp_path / "cxx2"
    other.write_text('#!/bin/sh\nexec g++ "$@"\n')
    other.chmod(0o755)
    assert not took_warm_path(probe(source, cache, {"CXX": str(other)}))


FORMAT_FIELD = b"18:jaxcc-warm-index-7,"


def test_a_warm_hit_reads_no_manifest(tmp_path):
    source = make_module(tmp_path, 4)
    cache = tmp_path / "cache"
    probe(source, cache)
    report = probe(source, cache)
    assert report["hit"] and took_warm_path(report) and report["value"] == 4.0
    # The record's copy of the manifest's facts is checked instead (decision 85).
    assert "manifest read + parse" not in report["stages"]
    assert "library sha256" in report["stages"]


def test_a_tampered_library_is_refused_on_the_warm_path(tmp_path):
    source = make_module(tmp_path, 5)
    cache = tmp_path / "cache"
    probe(source, cache)
    (library,) = cache.glob("kernel-*/*.so")
    stat_before = library.stat()
    data = bytearray(library.read_bytes())
    data[-1] ^= 0xFF  # same size, and the mtime is put back: only the hash can tell
    library.write_bytes(bytes(data))
    os.utime(library, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    report = probe(source, cache)
    # Not served from the index: the full path finds the entry damaged and rebuilds it.
    assert not took_warm_path(report) and report["value"] == 5.0
    assert library.read_bytes() != bytes(data)
    assert took_warm_path(probe(source, cache))


def test_a_library_hashed_once_is_not_hashed_again_until_it_changes(tmp_path):
    """Decision 91: a warm hit keeps the stamp the library hashed right under; later hits compare
    the stat instead of reading megabytes, and a write (which moves the ctime) brings the hash
    back."""
    source = make_module(tmp_path, 6)
    cache = tmp_path / "cache"
    probe(source, cache)
    (library,) = cache.glob("kernel-*/*.so")
    time.sleep(max(0.0, library.stat().st_ctime + 3.2 - time.time()))  # past the tick guard
    hashed = probe(source, cache)
    assert took_warm_path(hashed) and "library sha256" in hashed["stages"]
    assert "warm index: stamp kept" in hashed["stages"]
    stamped = probe(source, cache)
    assert took_warm_path(stamped) and stamped["value"] == 6.0
    assert "library stamp" in stamped["stages"] and "library sha256" not in stamped["stages"]
    # An in-place write with the mtime put back still moves the ctime: hashed, refused, rebuilt.
    stat_before = library.stat()
    data = bytearray(library.read_bytes())
    data[-1] ^= 0xFF
    library.write_bytes(bytes(data))
    os.utime(library, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    report = probe(source, cache)
    assert not took_warm_path(report) and report["value"] == 6.0


def without_library_stamp(record: bytes) -> list[bytes]:
    """The record's netstring fields without the five of the library stamp (after the digest)."""
    fields, rest = [], record
    while rest:
        length, rest = rest.split(b":", 1)
        fields.append(rest[: int(length)])
        rest = rest[int(length) + 1 :]
    return fields[:4] + fields[9:]


def test_a_corrupt_or_foreign_index_record_is_ignored_and_rewritten(tmp_path):
    source = make_module(tmp_path, 3)
    cache = tmp_path / "cache"
    # Files younger than the 3 s tick guard are recorded without a stamp and get one on a later
    # rewrite (decision 146a): let them settle first, so every rewrite below is the same record.
    time.sleep(3.2)
    probe(source, cache)
    (record,) = (cache / ".index").iterdir()
    good = record.read_bytes()
    assert good.startswith(FORMAT_FIELD)
    old_format = json.dumps({"format": "jaxcc-warm-index-1", "key": "0" * 64}).encode()
    # Bytes: the record's integers are eight binary bytes each (format 7, decision 265).
    for damage in (b"{not json", old_format, b"", good[:-1], good + b"1:x,"):
        record.write_bytes(damage)
        report = probe(source, cache)
        assert report["hit"] and not took_warm_path(report) and report["value"] == 3.0
        # The same record again, but for the library's stamp: once the library is older than
        # the 3 s tick guard, the full path vouches for its stat too (decision 90).
        assert without_library_stamp(record.read_bytes()) == without_library_stamp(good)
    # A record pointing at an entry that is gone: the full path rebuilds it.
    key = good.split(b",")[1].split(b":")[1]
    assert len(key) == 64
    record.write_bytes(good.replace(key, b"0" * 64))
    report = probe(source, cache)
    assert report["value"] == 3.0 and not took_warm_path(report)


def test_the_full_path_trims_an_index_that_outgrew_its_limit(tmp_path):
    # Records of requests nobody makes again (every edit leaves one) are bounded: past 2048 the
    # full path removes the oldest down to three quarters (pipeline/warm_index.h), its own new
    # record being the newest.
    source = make_module(tmp_path, 4)
    cache = tmp_path / "cache"
    index = cache / ".index"
    index.mkdir(parents=True, mode=0o700)
    cache.chmod(0o700)
    for i in range(2100):
        stale = index / f"{i:064x}"
        stale.write_text("not a record")
        os.utime(stale, (1000 + i, 1000 + i))
    first = probe(source, cache)
    assert not took_warm_path(first) and first["value"] == 4.0
    left = sorted(p.name for p in index.iterdir())
    assert len(left) == 2048 * 3 // 4
    assert f"{0:064x}" not in left and f"{2099:064x}" in left  # the oldest went first
    assert took_warm_path(probe(source, cache))  # the new record was kept

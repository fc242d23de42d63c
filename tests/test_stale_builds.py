"""Issue 37, stale builds: every input that changes what the compiler sees rebuilds (decision
146). Each test is named after the case it guards and was seen failing on the code before the
fix (the old kernel ran, no error)."""

import json
import os
import shutil
import textwrap
import time

import pytest
from conftest import run_python

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
    kwargs = json.loads(sys.argv[2])
    mod = jaxcc.load_cpp_file(sys.argv[1], functions=["add_offset"], **kwargs)
    print(json.dumps({"hit": mod.cache_hit,
                      "value": float(mod.add_offset(jnp.zeros(2, jnp.float32))[0])}))
    """
)


def probe(source, cache, env=None, **kwargs):
    full_env = {"JAXCC_CACHE_DIR": str(cache), **(env or {})}
    code = PROBE.replace("sys.argv[1]", repr(str(source))).replace(
        "sys.argv[2]", repr(json.dumps(kwargs))
    )
    result = run_python(code, env=full_env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def offset_header(value):
    # The same length for every value below 1000: an edit keeps the header's size.
    return f"#define OFFSET {value:03d}.0f\n"


def settle(*paths):
    """Waits until the paths' ctime is over 3 s old: only a settled stamp is trusted without
    reading the file (decision 146a), and these tests exercise that path."""
    youngest = max(os.stat(p).st_ctime for p in paths)
    time.sleep(max(0.0, youngest + 3.2 - time.time()))


def test_header_edit_keeping_size_and_mtime_rebuilds(tmp_path):
    """Bug 1: what `cp -p`, `tar x`, `rsync -t` and `touch -r` do to a header."""
    header = tmp_path / "offset.h"
    header.write_text(offset_header(1))
    source = tmp_path / "kernel.cc"
    source.write_text(SOURCE)
    settle(header, source)
    cache = tmp_path / "cache"
    assert probe(source, cache)["value"] == 1.0
    warm = probe(source, cache)
    assert warm["hit"] and warm["value"] == 1.0
    before = header.stat()
    header.write_text(offset_header(2))
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert header.stat().st_size == before.st_size
    assert header.stat().st_mtime_ns == before.st_mtime_ns
    after = probe(source, cache)
    assert after["value"] == 2.0 and not after["hit"]


@pytest.mark.parametrize("where", ["earlier_include_dir", "source_dir"])
def test_new_shadowing_header_on_earlier_include_dir_rebuilds(tmp_path, where):
    """Bug 2: a header created where the compiler looks before the one the build read."""
    src, vendor, inc = tmp_path / "src", tmp_path / "vendor", tmp_path / "inc"
    for d in (src, vendor, inc):
        d.mkdir()
    (inc / "offset.h").write_text(offset_header(1))
    source = src / "kernel.cc"
    source.write_text(SOURCE)
    cache = tmp_path / "cache"
    paths = {"extra_include_paths": [str(vendor), str(inc)]}
    assert probe(source, cache, **paths)["value"] == 1.0
    assert probe(source, cache, **paths)["hit"]
    shadow_dir = vendor if where == "earlier_include_dir" else src
    (shadow_dir / "offset.h").write_text(offset_header(7))
    after = probe(source, cache, **paths)
    assert after["value"] == 7.0 and not after["hit"]
    # And back: the shadow removed, the original header is read again.
    (shadow_dir / "offset.h").unlink()
    assert probe(source, cache, **paths)["value"] == 1.0


def test_header_saved_during_the_build_is_not_published(tmp_path):
    """Bug 3: an editor saves the header while the module compiles. The compiler read the old
    text; no entry or object may vouch for it under the new one."""
    header = tmp_path / "offset.h"
    header.write_text(offset_header(1))
    source = tmp_path / "kernel.cc"
    source.write_text(SOURCE)
    done = tmp_path / "edited"
    # A compiler that, once, saves the header right after compiling the kernel unit.
    wrapper = tmp_path / "cxx"
    wrapper.write_text(
        "#!/bin/sh\n"
        'g++ "$@"; status=$?\n'
        f'case "$*" in *kernel_0.cc*) if [ ! -e "{done}" ]; then touch "{done}"; '
        f"printf '{offset_header(2)}' > \"{header}\"; fi;; esac\n"
        "exit $status\n"
    )
    wrapper.chmod(0o755)
    cache = tmp_path / "cache"
    env = {"CXX": str(wrapper)}
    first = probe(source, cache, env)
    assert done.exists()
    assert first["value"] == 2.0  # built again from the text on disk now
    # Every later process, and a cleared module, get the header's current text.
    second = probe(source, cache, env)
    assert second["value"] == 2.0
    run_python(
        "import jaxcc; jaxcc.clear_cache('kernel')", env={"JAXCC_CACHE_DIR": str(cache)}
    ).check_returncode()
    assert probe(source, cache, env)["value"] == 2.0


def test_clear_cache_of_a_module_clears_its_objects(tmp_path):
    """Bug 4: `clear_cache(name)` left the module's compiled objects, which the next build
    linked again."""
    (tmp_path / "offset.h").write_text(offset_header(3))
    source = tmp_path / "kernel.cc"
    source.write_text(SOURCE)
    cache = tmp_path / "cache"
    assert probe(source, cache)["value"] == 3.0
    objects = cache / ".objects"
    assert sorted(objects.glob("*.o"))
    result = run_python(
        "import jaxcc; print(jaxcc.clear_cache('kernel'))", env={"JAXCC_CACHE_DIR": str(cache)}
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "1"
    assert sorted(objects.glob("*.o")) == []
    rebuilt = probe(source, cache)
    assert rebuilt["value"] == 3.0 and not rebuilt["hit"]


def test_a_user_build_directory_recompiles_after_a_size_and_mtime_keeping_edit(tmp_path):
    """Bug 1 in a user's build_directory: ninja compares mtimes only."""
    header = tmp_path / "offset.h"
    header.write_text(offset_header(4))
    source = tmp_path / "kernel.cc"
    source.write_text(SOURCE)
    cache = tmp_path / "cache"
    build = tmp_path / "build"
    assert probe(source, cache, build_directory=str(build))["value"] == 4.0
    before = header.stat()
    time.sleep(0.05)
    header.write_text(offset_header(5))
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert probe(source, cache, build_directory=str(build))["value"] == 5.0
    shutil.rmtree(build)


def test_a_header_that_keeps_changing_during_builds_is_loaded_but_never_cached(tmp_path):
    """Bug 3, the fallback: the header changes during the rebuild too. This process runs what
    the second compile read, with a CacheWarning; no entry is published."""
    header = tmp_path / "offset.h"
    header.write_text(offset_header(1))
    source = tmp_path / "kernel.cc"
    source.write_text(SOURCE)
    stop = tmp_path / "stop"
    # Every kernel compile bumps the header it just read (1 -> 2 -> 3), until `stop` exists.
    wrapper = tmp_path / "cxx"
    wrapper.write_text(
        "#!/bin/sh\n"
        'g++ "$@"; status=$?\n'
        f'case "$*" in *kernel_0.cc*) if [ ! -e "{stop}" ]; then '
        f'n=$(sed -n "s/#define OFFSET 0*\\([0-9]*\\).0f/\\1/p" "{header}"); '
        f"printf '#define OFFSET %03d.0f\\n' $((n + 1)) > \"{header}\"; fi;; esac\n"
        "exit $status\n"
    )
    wrapper.chmod(0o755)
    cache = tmp_path / "cache"
    env = {"CXX": str(wrapper), "PYTHONWARNINGS": "always"}
    code = PROBE.replace("sys.argv[1]", repr(str(source))).replace("sys.argv[2]", repr("{}"))
    result = run_python(code, env={"JAXCC_CACHE_DIR": str(cache), **env})
    assert result.returncode == 0, result.stderr[-3000:]
    first = json.loads(result.stdout.strip().splitlines()[-1])
    assert first["value"] == 2.0 and not first["hit"]
    assert "changed while the module compiled" in result.stderr
    assert list(cache.glob("kernel-*/manifest.json")) == []
    stop.touch()
    after = probe(source, cache, env)
    assert after["value"] == 3.0 and not after["hit"]
    assert probe(source, cache, env)["hit"]

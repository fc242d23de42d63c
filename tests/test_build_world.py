"""Issue 49, items 1-8 and 17-19: the cache key covers everything the compiler and linker read
(decisions 170-176). Each test loads in real second processes with the real g++ and asks the
loaded library itself for the value its build saw (an exported `probe_value`, read through
ctypes, so no process needs JAX). Each was seen failing on the code before the fix: the old
library was served (`hit` and the old value), or the load failed or warned wrongly.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import run_python

SOURCE = r"""
#include "jaxcc/jaxcc.h"
{includes}
#ifndef VALUE
#define VALUE 0
#endif
{extra}
extern "C" __attribute__((visibility("default"))) double probe_value() {{ return {value}; }}
void noop(const jaxcc::Tensor x, jaxcc::Tensor out) {{}}
"""

PROBE = textwrap.dedent(
    """
    import ctypes, json, sys, warnings
    import jaxcc
    args = json.loads(ARGS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = jaxcc.load_cpp_file(args["file"], functions=["noop"], **args["kwargs"])
    lib = ctypes.CDLL(mod.path)
    lib.probe_value.restype = ctypes.c_double
    print(json.dumps({"hit": mod.cache_hit, "value": lib.probe_value(), "path": mod.path,
                      "warnings": [str(w.message) for w in caught]}))
    """
)


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One cache for the module's tests (each its own sources, so its own entries): the frame
    runtime and wrapper objects compile once, and each test pays for its kernel unit only."""
    return tmp_path_factory.mktemp("world-cache")


def write_source(directory, includes="", extra="", value="VALUE"):
    path = directory / "kernel.cc"
    path.write_text(SOURCE.format(includes=includes, extra=extra, value=value))
    return path


def probe(source, cache, env=None, expect_ok=True, **kwargs):
    """Loads `source` in a fresh process; returns hit, value, library path, warnings."""
    code = PROBE.replace("ARGS", repr(json.dumps({"file": str(source), "kwargs": kwargs})))
    result = run_python(code, env={"JAXCC_CACHE_DIR": str(cache), **(env or {})})
    if not expect_ok:
        return result
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def manifest_of(loaded):
    with open(os.path.join(os.path.dirname(loaded["path"]), "manifest.json")) as f:
        return json.load(f)


def settle(*paths):
    """Waits until the paths' ctime is over 3 s old, so stamps are trusted (decision 146a) and the
    warm path, not a re-hash, is what these tests exercise."""
    youngest = max(os.stat(p).st_ctime for p in paths)
    time.sleep(max(0.0, youngest + 3.2 - time.time()))


def write_executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_wrapper_script_cxx_rewritten_rebuilds(tmp_path, shared_cache):
    """Item 1: CXX names a wrapper script whose content changes while its path does not."""
    source = write_source(tmp_path)
    wrapper = tmp_path / "cxx-wrapper"
    write_executable(wrapper, '#!/bin/sh\nexec g++ "$@" -DVALUE=1\n')
    cache = shared_cache
    env = {"CXX": str(wrapper)}
    assert probe(source, cache, env)["value"] == 1.0
    write_executable(wrapper, '#!/bin/sh\nexec g++ "$@" -DVALUE=2\n')
    after = probe(source, cache, env)
    assert after["value"] == 2.0 and not after["hit"]


@pytest.mark.parametrize("variable", ["CPATH", "CPLUS_INCLUDE_PATH"])
def test_include_path_variable_switch_rebuilds(tmp_path, shared_cache, variable):
    """Item 2: the environment variables the preprocessor reads are in the key; switched between
    processes, the other header's build runs, with the warm index removed too."""
    for value in (1, 2):
        (tmp_path / f"dir{value}").mkdir()
        (tmp_path / f"dir{value}" / "tuning.h").write_text(f"#define VALUE {value}\n")
    source = write_source(tmp_path, includes="#include <tuning.h>")
    cache = shared_cache
    assert probe(source, cache, {variable: str(tmp_path / "dir1")})["value"] == 1.0
    assert probe(source, cache, {variable: str(tmp_path / "dir2")})["value"] == 2.0
    shutil.rmtree(cache / ".index", ignore_errors=True)
    assert probe(source, cache, {variable: str(tmp_path / "dir1")})["value"] == 1.0


def test_nvcc_and_linker_variables_are_in_the_key(tmp_path, shared_cache):
    """Item 2, the rest of the documented list: LIBRARY_PATH and SOURCE_DATE_EPOCH change the
    key (recorded in the manifest's key inputs) even where this build does not read them."""
    source = write_source(tmp_path)
    cache = shared_cache
    first = probe(source, cache, {"SOURCE_DATE_EPOCH": "1000"})
    second = probe(source, cache, {"SOURCE_DATE_EPOCH": "2000"})
    assert not second["hit"] and first["path"] != second["path"]
    world = manifest_of(second)["inputs"].get("world", [])
    assert "env\tSOURCE_DATE_EPOCH=2000" in world and "env\tLIBRARY_PATH" in " ".join(world)


@pytest.mark.parametrize("how", ["isystem", "pragma_system_header"])
def test_system_header_edit_rebuilds_and_no_stale_object_spreads(tmp_path, shared_cache, how):
    """Item 3: a header under -isystem, or one included from a `#pragma GCC system_header` file,
    edited in place; then a new module name over the same file must not reuse the old object."""
    inc = tmp_path / "inc"
    inc.mkdir()
    if how == "isystem":
        (inc / "tuning.h").write_text("#define VALUE 1\n")
        kwargs = {"extra_cflags": ["-isystem", str(inc)]}
        edited = inc / "tuning.h"
    else:
        (inc / "tuning.h").write_text('#pragma GCC system_header\n#include "inner.h"\n')
        (inc / "inner.h").write_text("#define VALUE 1\n")
        kwargs = {"extra_include_paths": [str(inc)]}
        edited = inc / "inner.h"
    source = write_source(tmp_path, includes="#include <tuning.h>")
    cache = shared_cache
    settle(edited, source)
    assert probe(source, cache, **kwargs)["value"] == 1.0
    edited.write_text("#define VALUE 2\n")
    after = probe(source, cache, **kwargs)
    assert after["value"] == 2.0 and not after["hit"]
    edited.write_text("#define VALUE 3\n")
    assert probe(source, cache, name="renamed_world_module", **kwargs)["value"] == 3.0


def test_has_include_header_created_later_rebuilds(tmp_path, shared_cache):
    """Item 4: a name the preprocessor probed and missed (`__has_include`) created later."""
    inc = tmp_path / "inc"
    inc.mkdir()
    includes = '#if __has_include("tuning.h")\n#include "tuning.h"\n#else\n#define VALUE 1\n#endif'
    source = write_source(tmp_path, includes=includes)
    cache = shared_cache
    kwargs = {"extra_include_paths": [str(inc)]}
    assert probe(source, cache, **kwargs)["value"] == 1.0
    assert probe(source, cache, **kwargs)["hit"]
    (inc / "tuning.h").write_text("#define VALUE 2\n")
    after = probe(source, cache, **kwargs)
    assert after["value"] == 2.0 and not after["hit"]
    # And the shared object of the old build is not handed to another module name.
    (inc / "tuning.h").unlink()
    assert probe(source, cache, name="other_name_world", **kwargs)["value"] == 1.0


@pytest.mark.parametrize("nested", [False, True])
def test_response_file_edit_rebuilds(tmp_path, shared_cache, nested):
    """Item 5: `@flags.rsp` (and a response file it names) is read, not keyed as text."""
    rsp = tmp_path / "flags.rsp"
    inner = tmp_path / "inner.rsp"
    target = inner if nested else rsp
    if nested:
        rsp.write_text(f"-O2 @{inner}\n")
    target.write_text("-DVALUE=1\n")
    source = write_source(tmp_path)
    cache = shared_cache
    kwargs = {"extra_cflags": [f"@{rsp}"]}
    assert probe(source, cache, **kwargs)["value"] == 1.0
    target.write_text("-DVALUE=2\n")
    after = probe(source, cache, **kwargs)
    assert after["value"] == 2.0 and not after["hit"]


def test_specs_style_flag_file_edit_rebuilds(tmp_path, shared_cache):
    """Item 5, a file a flag names by `=`: a linker version script edited keeps the text of the
    flag; the key follows its bytes (the library's exports change)."""
    script = tmp_path / "exports.map"
    script.write_text("{ global: probe_value; jaxcc_*; local: *; };\n")
    source = write_source(tmp_path, extra='extern "C" double other_value() { return 7; }')
    cache = shared_cache
    kwargs = {"extra_ldflags": [f"-Wl,--version-script={script}"]}
    first = probe(source, cache, **kwargs)
    script.write_text("{ global: probe_value; other_value; jaxcc_*; local: *; };\n")
    second = probe(source, cache, **kwargs)
    assert not second["hit"] and second["path"] != first["path"]


def build_archive(directory, value):
    src = directory / "k.cc"
    src.write_text(f'extern "C" double k_value() {{ return {value}; }}\n')
    subprocess.run(["g++", "-fPIC", "-c", str(src), "-o", str(directory / "k.o")], check=True)
    archive = directory / "libk.a"
    archive.unlink(missing_ok=True)
    subprocess.run(["ar", "rcs", str(archive), str(directory / "k.o")], check=True)
    return archive


@pytest.mark.parametrize("by", ["dash_l", "path"])
def test_rebuilt_static_library_relinks(tmp_path, shared_cache, by):
    """Item 6: a static library the link read, rebuilt with other code."""
    lib = tmp_path / "lib"
    lib.mkdir()
    archive = build_archive(lib, 1)
    source = write_source(tmp_path, extra='extern "C" double k_value();', value="k_value()")
    cache = shared_cache
    flags = ["-L", str(lib), "-lk"] if by == "dash_l" else [str(archive)]
    kwargs = {"extra_ldflags": flags}
    assert probe(source, cache, **kwargs)["value"] == 1.0
    build_archive(lib, 2)
    after = probe(source, cache, **kwargs)
    assert after["value"] == 2.0 and not after["hit"]


def test_march_native_is_resolved_in_the_key(tmp_path, shared_cache):
    """Item 7: `-march=native` is keyed by the target the compiler chose on this CPU, not by its
    text (a cache shared by two CPU models would otherwise hand one's build to the other)."""
    source = write_source(tmp_path)
    cache = shared_cache
    loaded = probe(source, cache, extra_cflags=["-march=native"])
    native = [
        line
        for line in manifest_of(loaded)["inputs"].get("world", [])
        if line.startswith("native\t")
    ]
    assert native and "-march=native" not in native[0] and "-march=" in native[0]


def test_force_rebuild_is_not_undone_by_the_next_plain_load(tmp_path, shared_cache):
    """Item 8: after force_rebuild=True gave the new result, the next process is served it too,
    not the old library the warm index record still names."""
    value_file = tmp_path / "value"
    value_file.write_text("1")
    wrapper = tmp_path / "cxx"
    # What the compiler reads that no key can know: the escape hatch's own case.
    write_executable(wrapper, f'#!/bin/sh\nexec g++ "$@" -DVALUE=$(cat {value_file})\n')
    source = write_source(tmp_path)
    cache = shared_cache
    env = {"CXX": str(wrapper)}
    assert probe(source, cache, env)["value"] == 1.0
    assert probe(source, cache, env)["hit"]
    value_file.write_text("2")
    assert probe(source, cache, env, force_rebuild=True)["value"] == 2.0
    after = probe(source, cache, env)
    assert after["value"] == 2.0


def test_entry_cleared_between_verification_and_dlopen_is_a_miss(tmp_path):
    """Item 17: `cache clear` in another process while a load on the full path sits between the
    entry's verification and dlopen: a rebuild, not a LoadError about the loader path."""
    source = write_source(tmp_path)
    cache = tmp_path / "cache"
    assert probe(source, cache)["value"] == 0.0
    shutil.rmtree(cache / ".index")  # the full path, whose dlopen is not lazy
    code = PROBE.replace("ARGS", repr(json.dumps({"file": str(source), "kwargs": {}})))
    env = dict(os.environ, JAXCC_CACHE_DIR=str(cache), JAXCC_FAULT_STALL="load:4")
    loading = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    line = ""
    while "jaxcc-fault-stall:load" not in line and time.time() < deadline:
        line = loading.stderr.readline()
    cleared = run_python("import jaxcc; jaxcc.clear_cache()", env={"JAXCC_CACHE_DIR": str(cache)})
    assert cleared.returncode == 0, cleared.stderr
    out, err = loading.communicate(timeout=120)
    assert loading.returncode == 0, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1])["value"] == 0.0


def test_header_with_future_mtime_is_cached(tmp_path, shared_cache):
    """Item 18: a header whose mtime lies a day ahead (a checkout from a host whose clock runs
    ahead) is cached like any other: no "changed while the module compiled" warning, and the
    next process hits."""
    header = tmp_path / "tuning.h"
    header.write_text("#define VALUE 5\n")
    ahead = time.time_ns() + 86_400 * 10**9
    os.utime(header, ns=(ahead, ahead))
    source = write_source(tmp_path, includes='#include "tuning.h"')
    cache = shared_cache
    first = probe(source, cache)
    assert first["value"] == 5.0
    assert not any("changed while" in w for w in first["warnings"]), first["warnings"]
    second = probe(source, cache)
    assert second["hit"] and second["value"] == 5.0
    header.write_text("#define VALUE 6\n")  # an edit is still seen
    os.utime(header, ns=(ahead, ahead))
    assert probe(source, cache)["value"] == 6.0


def test_native_bundle_is_refused_on_a_cpu_without_its_features(tmp_path):
    """Item 7, bundles: a bundle built with -march=native records the features its target
    enabled; a CPU without one of them is refused with a typed error naming the feature and
    the target (it died with SIGILL before). Here the recorded list gets one this CPU lacks."""
    source = write_source(tmp_path)
    out = tmp_path / "bundle"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxcc",
            "build",
            str(source),
            "--functions",
            "noop",
            "--cflags=-march=native",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, JAXCC_CACHE_DIR=str(tmp_path / "c")),
    )
    assert built.returncode == 0, built.stderr[-3000:]
    manifest_path = next(out.rglob("jaxcc-bundle.json"))
    manifest = json.loads(manifest_path.read_text())
    assert manifest["cpu_target"].startswith("-march=") and manifest["cpu_features"]
    manifest["cpu_features"].append("avx9000_fake")
    manifest_path.write_text(json.dumps(manifest))
    loaded = run_python(
        "import jaxcc\n"
        "try:\n"
        f"    jaxcc.load_library({str(manifest_path.parent)!r})\n"
        "except jaxcc.errors.JaxccError as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    assert "avx9000_fake" in loaded.stdout and "-march=" in loaded.stdout, (
        loaded.stdout + loaded.stderr
    )

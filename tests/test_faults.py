"""Faults a shared cache must survive: SIGKILL at each step, damaged libraries, unwritable or full
cache directories, orphaned build directories, clear_cache racing a build, foreign entries."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import run_python

LOADER = textwrap.dedent(
    """
    import sys, warnings, jaxcc, jax.numpy as jnp
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        m = jaxcc.load_cpp_inline(sys.argv[2], sys.argv[1], ["triple"])
    out = m.triple(jnp.arange(4, dtype=jnp.float32))
    state = "HIT" if m.cache_hit else "BUILT"
    warned = any(issubclass(w.category, jaxcc.CacheWarning) for w in caught)
    print(state, "WARNED" if warned else "QUIET", " ".join(str(float(v)) for v in out))
    for w in caught:
        print("warning:", w.message, file=sys.stderr)
    """
)


def triple_source(tag: str, salt: str = "0.5f") -> str:
    return (
        f"// {tag}\n"
        "void triple(const jaxcc::Tensor x, jaxcc::Tensor out) {\n"
        "  for (int64_t i = 0; i < x.numel(); ++i)\n"
        f"    out.data_ptr<float>()[i] = 3 * x.data_ptr<float>()[i] + {salt};\n"
        "}\n"
    )


EXPECTED = "0.5 3.5 6.5 9.5"


def spawn(source, name, env=None, **kwargs):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.Popen(
        [sys.executable, "-c", LOADER, source, name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        start_new_session=True,
        **kwargs,
    )


def load_in_new_process(source, name, env=None, **kwargs):
    proc = spawn(source, name, env, **kwargs)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return out.strip(), err


def wait_for_stall(proc, point, timeout=180):
    """Reads stderr until the process reports it reached fault point `point`."""
    deadline = time.time() + timeout
    for line in proc.stderr:
        if line.strip() == f"jaxcc-fault-stall:{point}":
            return
        assert time.time() < deadline, f"never reached {point}"
    raise AssertionError(f"process exited before reaching {point}: rc={proc.wait()}")


def entries(cache_dir):
    return [p for p in cache_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]


def assert_no_half_written_entry(cache_dir):
    """Every entry directory either has a manifest whose library exists with the recorded size
    of content, or is about to be rebuilt; none pairs a manifest with a missing library."""
    for entry in entries(cache_dir):
        manifest = entry / "manifest.json"
        if manifest.exists():
            data = json.loads(manifest.read_text())
            assert (entry / data["library_file"]).exists(), f"{entry}: manifest without library"


@pytest.mark.slow
@pytest.mark.parametrize("point", ["build", "publish", "load"])
def test_sigkill_at_each_step_leaves_a_cache_the_next_load_uses(fresh_cache, unique_name, point):
    source = triple_source(unique_name)
    if point == "load":
        # Killing on the way to dlopen needs a published entry first.
        assert load_in_new_process(source, unique_name)[0].startswith("BUILT")
    victim = spawn(source, unique_name, {"JAXCC_FAULT_STALL": f"{point}:60"})
    wait_for_stall(victim, point)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert_no_half_written_entry(fresh_cache)

    begin = time.time()
    out, _ = load_in_new_process(source, unique_name)
    # No stale lock: the survivor did not wait out any timeout.
    assert time.time() - begin < 60
    assert out.endswith(EXPECTED), out
    assert out.startswith("HIT" if point == "load" else "BUILT"), out
    assert len(entries(fresh_cache)) == 1


@pytest.mark.parametrize("damage", ["truncate", "tamper"])
def test_a_damaged_library_is_rebuilt_never_loaded(fresh_cache, unique_name, damage):
    source = triple_source(unique_name)
    assert load_in_new_process(source, unique_name)[0].startswith("BUILT")
    (entry,) = entries(fresh_cache)
    library = entry / json.loads((entry / "manifest.json").read_text())["library_file"]
    data = library.read_bytes()
    if damage == "truncate":
        library.write_bytes(data[: len(data) // 2])
    else:
        # Same size, one byte changed in the middle: only the hash can tell.
        middle = len(data) // 2
        library.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    out, _ = load_in_new_process(source, unique_name, {"JAXCC_LOG": "1"})
    assert out.startswith("BUILT"), out
    assert out.endswith(EXPECTED)
    data_after = json.loads((entry / "manifest.json").read_text())
    rebuilt = entry / data_after["library_file"]
    import hashlib

    assert hashlib.sha256(rebuilt.read_bytes()).hexdigest() == data_after["library_sha256"]


def test_a_foreign_or_world_writable_entry_is_refused_with_the_fix(fresh_cache, unique_name):
    source = triple_source(unique_name)
    assert load_in_new_process(source, unique_name)[0].startswith("BUILT")
    (entry,) = entries(fresh_cache)
    entry.chmod(0o777)
    result = run_python(
        "import sys, jaxcc\n"
        "try:\n"
        f"    jaxcc.load_cpp_inline({unique_name!r}, {source!r}, ['triple'])\n"
        "except jaxcc.CacheError as e:\n"
        "    print('REFUSED', e)\n"
    )
    assert result.returncode == 0, result.stderr
    assert "REFUSED" in result.stdout
    assert "0777" in result.stdout and f"jaxcc cache clear {unique_name}" in result.stdout


def test_the_cache_root_is_created_private(tmp_path, unique_name):
    cache = tmp_path / "new" / "cache"
    out, _ = load_in_new_process(
        triple_source(unique_name), unique_name, {"JAXCC_CACHE_DIR": str(cache)}
    )
    assert out.startswith("BUILT")
    assert (cache.stat().st_mode & 0o777) == 0o700


def _mount_tmpfs(mount_point, options):
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount_point)], capture_output=True
    )
    return done.returncode == 0


@pytest.fixture
def read_only_cache(tmp_path):
    """A cache directory this process cannot write: chmod 0500 for a normal user; for root, who
    ignores modes, a read-only tmpfs mounted there."""
    cache = tmp_path / "ro-cache"
    cache.mkdir(mode=0o700)
    if os.geteuid() != 0:
        cache.chmod(0o500)
        yield cache
        cache.chmod(0o700)
        return
    if not _mount_tmpfs(cache, "ro,size=64k,mode=0700"):
        pytest.skip("root cannot be denied writes here: no read-only tmpfs (needs CAP_SYS_ADMIN)")
    yield cache
    subprocess.run(["umount", "-l", str(cache)], check=False)


def test_a_read_only_cache_falls_back_to_a_private_build(read_only_cache, tmp_path, unique_name):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {"JAXCC_CACHE_DIR": str(read_only_cache), "TMPDIR": str(scratch)}
    out, err = load_in_new_process(triple_source(unique_name), unique_name, env)
    assert out.startswith("BUILT WARNED"), (out, err)
    assert out.endswith(EXPECTED)
    assert "not cached" in err and str(read_only_cache) in err
    assert list(read_only_cache.iterdir()) == []  # nothing half-written
    assert [p for p in scratch.iterdir() if p.name.startswith("jaxcc-")] == []  # temp removed


@pytest.fixture
def tiny_filesystem(tmp_path):
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    if not _mount_tmpfs(mount_point, "size=256k,mode=0700"):
        pytest.skip("cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_a_full_disk_never_leaves_a_half_written_entry(tiny_filesystem, unique_name):
    cache = tiny_filesystem / "cache"
    out, err = load_in_new_process(
        triple_source(unique_name), unique_name, {"JAXCC_CACHE_DIR": str(cache)}
    )
    # 256 KiB holds neither the object files nor the library: the module is built privately.
    assert out.startswith("BUILT WARNED"), (out, err)
    assert out.endswith(EXPECTED)
    assert "No space left on device" in err or "not cached" in err
    assert_no_half_written_entry(cache)
    assert not any((cache / ".build").iterdir()) if (cache / ".build").exists() else True


def test_orphaned_build_directories_are_swept_by_the_next_build(fresh_cache, unique_name):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = fresh_cache / ".build" / f"someone-{dead.pid}-0a1b2c3d"
    orphan.mkdir(parents=True)
    (orphan / "half.o").write_text("x")
    out, _ = load_in_new_process(triple_source(unique_name), unique_name)
    assert out.startswith("BUILT")
    assert not orphan.exists()


@pytest.mark.slow
def test_clear_cache_while_another_process_builds_does_not_break_that_build(
    fresh_cache, unique_name
):
    source = triple_source(unique_name)
    builder = spawn(source, unique_name, {"JAXCC_FAULT_STALL": "build:4"})
    wait_for_stall(builder, "build")
    cleared = run_python("import jaxcc; print(jaxcc.clear_cache())")
    assert cleared.returncode == 0, cleared.stderr
    out, err = builder.communicate(timeout=300)
    assert builder.returncode == 0, err
    assert out.strip().startswith("BUILT") and out.strip().endswith(EXPECTED)
    # The published entry survived the clear and serves the next process.
    assert load_in_new_process(source, unique_name)[0].startswith("HIT")

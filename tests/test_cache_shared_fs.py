"""A cache shared by several hosts (NFS): lock files that name host, boot id and pid. Hosts are
simulated with $JAXCC_TEST_HOST / $JAXCC_TEST_BOOT_ID in real processes on one real cache."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

import jaxcc

LOADER = textwrap.dedent(
    """
    import sys, jaxcc, jax.numpy as jnp
    m = jaxcc.load_cpp_inline(sys.argv[2], sys.argv[1], ["triple"])
    out = m.triple(jnp.arange(4, dtype=jnp.float32))
    print("HIT" if m.cache_hit else "BUILT", " ".join(str(float(v)) for v in out))
    """
)

TRIPLE = (
    "void triple(const jaxcc::Tensor x, jaxcc::Tensor out) { for (int64_t i = 0; i < x.numel(); "
    "++i) out.data_ptr<float>()[i] = 3 * x.data_ptr<float>()[i] + SALT; }\n"
)
EXPECTED = "0.5 3.5 6.5 9.5"


def host_env(host, boot="boot-1", **extra):
    env = dict(os.environ)
    env.update(JAXCC_CACHE_LOCK="lockfile", JAXCC_TEST_HOST=host, JAXCC_TEST_BOOT_ID=boot)
    env.update(extra)
    return env


def spawn(source, name, env):
    return subprocess.Popen(
        [sys.executable, "-c", LOADER, source, name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish(proc, timeout=300):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out.strip()


def source_for(name):
    return f"#define SALT 0.5f\n// {name}\n" + TRIPLE


def built_entry(cache, source, name):
    """Builds the module once (as host_a) and returns its entry directory name."""
    assert finish(spawn(source, name, host_env("host_a"))).startswith("BUILT")
    entries = [p.name for p in cache.iterdir() if p.name.startswith(name + "-")]
    assert len(entries) == 1, entries
    return entries[0]


def dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def plant_lock(cache, entry, host, boot, pid, age_seconds=0):
    lock = cache / ".locks" / f"{entry}.lock"
    lock.parent.mkdir(mode=0o700, exist_ok=True)
    lock.write_text(f"jaxcc-lock 1\nhost={host}\nboot={boot}\npid={pid}\nnonce=00\n")
    if age_seconds:
        then = time.time() - age_seconds
        os.utime(lock, (then, then))
    return lock


@pytest.mark.slow
def test_two_hosts_contend_for_one_entry_and_exactly_one_builds(fresh_cache, tmp_path, unique_name):
    # A compiler that takes a second longer, so the second host really waits on the lock file.
    wrapper = tmp_path / "slow-g++"
    wrapper.write_text('#!/bin/sh\n[ "$1" = "--version" ] || sleep 1\nexec g++ "$@"\n')
    wrapper.chmod(0o755)
    source = source_for(unique_name)
    procs = [
        spawn(source, unique_name, host_env(host, boot, CXX=str(wrapper)))
        for host, boot in (("host_a", "boot-a"), ("host_b", "boot-b"))
    ]
    lines = [finish(p) for p in procs]
    assert sum(line.startswith("BUILT") for line in lines) == 1, lines
    assert all(line.endswith(EXPECTED) for line in lines), lines
    # The entry is whole (a third host hits it), and nothing temporary or held stays behind.
    third = host_env("host_c", CXX=str(wrapper))
    assert finish(spawn(source, unique_name, third)) == "HIT " + EXPECTED
    leftovers = [p.name for p in fresh_cache.rglob("*") if ".tmp-" in p.name]
    assert leftovers == []
    assert list((fresh_cache / ".locks").glob("*.lock")) == []


@pytest.mark.slow
def test_a_stale_lock_of_a_dead_pid_on_this_host_is_broken(fresh_cache, unique_name):
    source = source_for(unique_name)
    entry = built_entry(fresh_cache, source, unique_name)
    assert jaxcc.clear_cache(unique_name) == 1
    lock = plant_lock(fresh_cache, entry, "host_a", "boot-1", dead_pid())
    begin = time.time()
    # A waiter that did not break the lock would wait 180 s (build timeout plus a minute).
    line = finish(spawn(source, unique_name, host_env("host_a", JAXCC_BUILD_TIMEOUT="120")))
    assert line == "BUILT " + EXPECTED
    assert time.time() - begin < 150
    assert not lock.exists()


@pytest.mark.slow
def test_another_hosts_lock_is_not_broken_by_pid_only_by_age(fresh_cache, unique_name):
    source = source_for(unique_name)
    entry = built_entry(fresh_cache, source, unique_name)
    # host_b's pid is dead here, but pids of another host mean nothing: the entry counts as being
    # rebuilt by host_b, so host_a's `cache clear` leaves it alone.
    lock = plant_lock(fresh_cache, entry, "host_b", "boot-b", dead_pid())
    clear = f"import jaxcc; print(jaxcc.clear_cache({unique_name!r}))"
    run = subprocess.run(
        [sys.executable, "-c", clear], capture_output=True, text=True, env=host_env("host_a")
    )
    assert run.stdout.strip() == "0", run.stderr
    assert lock.exists()
    # The same lock seen from host_b itself, where that pid is dead: broken, entry cleared.
    run = subprocess.run(
        [sys.executable, "-c", clear],
        capture_output=True,
        text=True,
        env=host_env("host_b", "boot-b"),
    )
    assert run.stdout.strip() == "1", run.stderr
    # An old lock of another host (older than the build timeout plus a minute) is broken by age.
    lock = plant_lock(fresh_cache, entry, "host_b", "boot-b", 4242, age_seconds=7200)
    line = finish(spawn(source, unique_name, host_env("host_a", JAXCC_BUILD_TIMEOUT="120")))
    assert line == "BUILT " + EXPECTED
    assert not lock.exists()


def test_a_bad_lock_mode_is_a_spec_error(monkeypatch, unique_name):
    monkeypatch.setenv("JAXCC_CACHE_LOCK", "nfs")
    with pytest.raises(jaxcc.errors.SpecError, match="JAXCC_CACHE_LOCK='nfs'.*lockfile"):
        jaxcc.load_cpp_inline(unique_name, source_for(unique_name), ["triple"])

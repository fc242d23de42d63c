"""Real processes racing on one cache, and a build killed with SIGKILL."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

LOADER = textwrap.dedent(
    """
    import sys, jaxcc, jax.numpy as jnp
    src = sys.argv[1]
    m = jaxcc.load_cpp_inline(sys.argv[2], src, ["triple"])
    out = m.triple(jnp.arange(4, dtype=jnp.float32))
    print("HIT" if m.cache_hit else "BUILT", " ".join(str(float(v)) for v in out))
    """
)

TRIPLE = "void triple(const jaxcc::Tensor x, jaxcc::Tensor out) { for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = 3 * x.data_ptr<float>()[i] + SALT; }\n"


def spawn(source, name, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.Popen(
        [sys.executable, "-c", LOADER, source, name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        start_new_session=True,
    )


@pytest.mark.slow
def test_eight_processes_compile_once_and_all_get_correct_results(fresh_cache, unique_name):
    source = f"#define SALT 0.5f\n// {unique_name}\n" + TRIPLE
    procs = [spawn(source, unique_name) for _ in range(8)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
    lines = [out.strip() for out, _ in results]
    assert sum(line.startswith("BUILT") for line in lines) == 1, lines
    assert all(line.endswith("0.5 3.5 6.5 9.5") for line in lines), lines


@pytest.mark.slow
def test_a_build_killed_with_sigkill_leaves_nothing_that_blocks_the_next_load(
    fresh_cache, tmp_path, unique_name
):
    # A compiler wrapper that stalls while a marker file exists, so the build can be killed
    # mid-compile with the cache lock held.
    marker = tmp_path / "stall"
    started = tmp_path / "started"
    wrapper = tmp_path / "slow-g++"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{marker}" ] && [ "$1" != "--version" ]; then touch "{started}"; sleep 60; fi\n'
        'exec g++ "$@"\n'
    )
    wrapper.chmod(0o755)
    marker.touch()
    env = {"CXX": str(wrapper)}
    source = f"#define SALT 1.0f\n// {unique_name}\n" + TRIPLE
    victim = spawn(source, unique_name, env)
    deadline = time.time() + 120
    while not started.exists():
        assert victim.poll() is None, victim.communicate()
        assert time.time() < deadline, "the build never started"
        time.sleep(0.05)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    marker.unlink()

    begin = time.time()
    survivor = spawn(source, unique_name, env)
    out, err = survivor.communicate(timeout=120)
    assert survivor.returncode == 0, err
    assert out.strip() == "BUILT 1.0 4.0 7.0 10.0"
    assert time.time() - begin < 60  # not stuck behind the killed builder's lock
    try:
        os.killpg(victim.pid, signal.SIGKILL)  # the orphaned ninja/sleep of the killed build
    except ProcessLookupError:
        pass
    # No half-written entry: every entry directory has its manifest.
    for entry in fresh_cache.iterdir():
        if not entry.name.startswith("."):
            assert (entry / "manifest.json").exists(), entry


def test_threads_of_one_process_share_one_build(fresh_cache, unique_name):
    import threading

    import jax.numpy as jnp

    import jaxcc

    source = f"#define SALT 2.0f\n// {unique_name}\n" + TRIPLE
    results, errors = [], []

    def load():
        try:
            module = jaxcc.load_cpp_inline(unique_name, source, ["triple"])
            results.append((module.cache_hit, float(module.triple(jnp.ones(1))[0])))
        except Exception as e:  # collected: an exception in a thread would otherwise be lost
            errors.append(e)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(results) == [(False, 5.0), (True, 5.0), (True, 5.0), (True, 5.0)]

"""JAX's persistent compilation cache with jaxcc kernels: a fresh process that loads the module
(built from source, or a prebuilt bundle with no compiler on PATH) first and then calls the
jitted function gets the executable from JAX's cache (seen in JAX's monitoring events) and the
right answer. Every run is a real, separate interpreter."""

import json

import numpy as np
from conftest import run_python
from test_bundle import jaxcc_cli, no_compiler_env

SOURCE = r"""
#include "jaxcc/jaxcc.h"
void add_k(const jaxcc::Tensor x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + K;
}
"""

SETUP = r"""
import json, os, shutil
import jax, jax.numpy as jnp, numpy as np, jaxcc

jax.config.update("jax_compilation_cache_dir", os.environ["TEST_JAX_CACHE"])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
events = []
jax.monitoring.register_event_listener(lambda name, **kwargs: events.append(name))
"""

# Each loads the module before CALL jits anything: loading registers the targets it calls.
FROM_SOURCE = f"""
SOURCE = {SOURCE!r}.replace("K", os.environ["TEST_CONSTANT"])
ops = jaxcc.load_cpp_inline("persistent_cache_ops", SOURCE, ["add_k"])
"""

FROM_BUNDLE = """
assert not any(shutil.which(t) for t in ("g++", "c++", "clang++", "nvcc", "ninja"))
ops = jaxcc.load_library(os.environ["TEST_BUNDLE"])
"""

CALL = r"""
x = np.arange(4, dtype=np.float32)
y = jax.jit(lambda v: jnp.cos(ops.add_k(v)) * 2.0)(x)
print("REPORT=" + json.dumps({
    "y": np.asarray(y).tolist(),
    "hits": events.count("/jax/compilation_cache/cache_hits"),
    "misses": events.count("/jax/compilation_cache/cache_misses"),
}))
"""


def run(cache_dir, constant: str) -> dict:
    env = {"TEST_JAX_CACHE": str(cache_dir), "TEST_CONSTANT": constant}
    return report_of(run_python(SETUP + FROM_SOURCE + CALL, env=env))


def run_bundle(cache_dir, bundle, no_compiler: dict) -> dict:
    env = {"TEST_JAX_CACHE": str(cache_dir), "TEST_BUNDLE": str(bundle), **no_compiler}
    return report_of(run_python(SETUP + FROM_BUNDLE + CALL, env=env))


def report_of(done) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("REPORT=")][-1]
    return json.loads(line[len("REPORT=") :])


def expected(k: float):
    return np.cos(np.arange(4, dtype=np.float32) + k) * 2.0


def test_a_fresh_process_hits_jaxs_persistent_cache_and_computes_the_right_answer(tmp_path):
    cache_dir = tmp_path / "jax-cache"
    first = run(cache_dir, "1.0f")
    assert first["hits"] == 0 and first["misses"] >= 1
    entries = sorted(p.name for p in cache_dir.iterdir())
    assert entries, "the first process should have written JAX's cache"
    np.testing.assert_allclose(first["y"], expected(1.0), rtol=1e-6)

    second = run(cache_dir, "1.0f")
    assert second["hits"] >= 1 and second["misses"] == 0, second
    np.testing.assert_allclose(second["y"], expected(1.0), rtol=1e-6)
    assert sorted(p.name for p in cache_dir.iterdir()) == entries  # nothing new was compiled


def test_a_cached_executable_calls_the_kernel_registered_now(tmp_path):
    """The executable names its kernel by target: a process that registers changed code under
    the same name hits the cache and runs the changed code, not a stale copy."""
    cache_dir = tmp_path / "jax-cache"
    run(cache_dir, "1.0f")
    changed = run(cache_dir, "5.0f")
    assert changed["hits"] >= 1, changed
    np.testing.assert_allclose(changed["y"], expected(5.0), rtol=1e-6)


def test_a_prebuilt_bundle_hits_jaxs_persistent_cache_with_no_compiler(tmp_path):
    """The deployment case: every process loads a `jaxcc build` bundle on a machine with no
    compiler; the second gets its executable from JAX's cache as a load_* process does."""
    source = tmp_path / "add_k.cc"
    source.write_text(SOURCE.replace("K", "3.0f"))
    bundle = tmp_path / "bundle"
    built = jaxcc_cli(
        "build",
        str(source),
        "--name",
        "persistent_cache_bundle",
        "--functions",
        "add_k",
        "--out",
        str(bundle),
    )
    assert built.returncode == 0, built.stderr
    cache_dir = tmp_path / "jax-cache"
    no_compiler = no_compiler_env(tmp_path)

    first = run_bundle(cache_dir, bundle, no_compiler)
    assert first["hits"] == 0 and first["misses"] >= 1, first
    entries = sorted(p.name for p in cache_dir.iterdir())
    assert entries, "the first process should have written JAX's cache"
    np.testing.assert_allclose(first["y"], expected(3.0), rtol=1e-6)

    second = run_bundle(cache_dir, bundle, no_compiler)
    assert second["hits"] >= 1 and second["misses"] == 0, second
    np.testing.assert_allclose(second["y"], expected(3.0), rtol=1e-6)
    assert sorted(p.name for p in cache_dir.iterdir()) == entries  # nothing new was compiled

"""JAX's persistent compilation cache with jaxcc kernels: a fresh process that loads the module
first and then calls the jitted function gets the executable from JAX's cache (seen in JAX's
monitoring events) and the right answer. Every run is a real, separate interpreter."""

import json

import numpy as np
from conftest import run_python

PROGRAM = r"""
import json, os
import jax, jax.numpy as jnp, numpy as np, jaxcc

jax.config.update("jax_compilation_cache_dir", os.environ["TEST_JAX_CACHE"])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
events = []
jax.monitoring.register_event_listener(lambda name, **kwargs: events.append(name))

SOURCE = r'''
#include "jaxcc/jaxcc.h"
void add_k(const jaxcc::Tensor x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + K;
}
'''.replace("K", os.environ["TEST_CONSTANT"])
ops = jaxcc.load_cpp_inline("persistent_cache_ops", SOURCE, ["add_k"])  # first: registers
x = np.arange(4, dtype=np.float32)
y = jax.jit(lambda v: jnp.cos(ops.add_k(v)) * 2.0)(x)
print("REPORT=" + json.dumps({
    "y": np.asarray(y).tolist(),
    "hits": events.count("/jax/compilation_cache/cache_hits"),
    "misses": events.count("/jax/compilation_cache/cache_misses"),
}))
"""


def run(cache_dir, constant: str) -> dict:
    done = run_python(PROGRAM, env={"TEST_JAX_CACHE": str(cache_dir), "TEST_CONSTANT": constant})
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

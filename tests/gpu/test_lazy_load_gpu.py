"""Lazy handlers on a real GPU (decision 137): a warm load maps a CUDA module's library at its
first call, and that first call may come inside a jitted loop that XLA runs as a CUDA graph,
with the static runtime and with the shared one (decision 136). The CPU tests
(tests/test_lazy_load.py) cover the stub itself; this covers dlopen of a CUDA library from
inside XLA's GPU execution."""

import subprocess
import sys

import pytest
from graph_probe import first_gpu_arch, probe_process_env

pytestmark = pytest.mark.gpu

# Loads vector_add; reports whether its library is mapped, then makes its first call inside a
# fori_loop that XLA captures as a CUDA graph (or eagerly), and checks the values.
PROBE = r"""
import sys
first = sys.argv[1]
import jax, jax.numpy as jnp, numpy as np, jaxcc
from cuda_sources import VECTOR_ADD
mod = jaxcc.load_cuda_inline(sys.argv[2], VECTOR_ADD, compute_capability=sys.argv[3])
print("HIT", mod.cache_hit, "LOADED", mod.library_loaded)
a = jnp.arange(4096, dtype=jnp.float32)
if first == "graph":
    looped = jax.jit(lambda x: jax.lax.fori_loop(0, 8, lambda i, y: mod.vector_add(y, x), x))
    np.testing.assert_array_equal(np.asarray(looped(a)), 9 * np.arange(4096))
np.testing.assert_array_equal(np.asarray(mod.vector_add(a, a)), 2 * np.arange(4096))
print("AFTER", mod.library_loaded)
"""


@pytest.mark.parametrize("runtime", ["static", "shared"])
@pytest.mark.parametrize("first", ["graph", "eager"])
def test_the_first_call_maps_the_library(unique_name, tmp_path, runtime, first):
    env = probe_process_env(tmp_path, runtime)
    arch = first_gpu_arch()

    def run():
        done = subprocess.run(
            [sys.executable, "-c", PROBE, first, unique_name, arch],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        return done.stdout

    assert "HIT False LOADED True" in run()  # the build maps its library at the load
    warm = run()
    assert "HIT True LOADED False" in warm, warm
    assert "AFTER True" in warm, warm

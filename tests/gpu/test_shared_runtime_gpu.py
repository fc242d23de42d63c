"""$JAXCC_CUDA_RUNTIME=shared on a real GPU (decision 136): a module that links the runtime of JAX's
own nvidia-cuda-runtime wheel runs its kernels right under jit and inside a CUDA graph, and the
process maps exactly one CUDA runtime, the wheel's, whether the module loads before JAX's GPU
backend starts or after. What a GPU session checks before the shared runtime becomes the default
(decision 132)."""

import os
import subprocess
import sys

import pytest
from graph_probe import first_gpu_arch, probe_process_env

pytestmark = pytest.mark.gpu

# Loads vector_add (before or after the backend starts), runs it eagerly, under jit and in a
# fori_loop that XLA captures as a CUDA graph, and prints the runtimes mapped.
PROBE = r"""
import sys
order = sys.argv[1]
import jax, jax.numpy as jnp, numpy as np, jaxcc
from cuda_sources import VECTOR_ADD
if order == "backend-first":
    assert jax.devices("gpu")
# The architecture is named: left to jaxcc, finding it would start JAX's backend first.
mod = jaxcc.load_cuda_inline(sys.argv[2], VECTOR_ADD, compute_capability=sys.argv[3])
def runtimes():
    return sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcudart.so" in l})
print("AT_LOAD", *runtimes())
a = jnp.arange(4096, dtype=jnp.float32)
np.testing.assert_array_equal(np.asarray(mod.vector_add(a, a)), 2 * np.arange(4096))
looped = jax.jit(lambda x: jax.lax.fori_loop(0, 8, lambda i, y: mod.vector_add(y, x), x))
np.testing.assert_array_equal(np.asarray(looped(a)), 9 * np.arange(4096))
print("MAPPED", *runtimes())
"""


@pytest.mark.parametrize("order", ["module-first", "backend-first"])
def test_one_runtime_the_wheels_whichever_starts_first(unique_name, tmp_path, order):
    env = probe_process_env(tmp_path, "shared")  # the fori_loop's body runs as a CUDA graph
    arch = first_gpu_arch()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, order, unique_name, arch],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    mapped = [ln for ln in done.stdout.splitlines() if ln.startswith("MAPPED")][-1].split()[1:]
    assert len(mapped) == 1, mapped
    assert f"{os.sep}nvidia{os.sep}" in mapped[0], mapped  # the wheel's copy, not the toolkit's
    # Module first: the module's own RUNPATH brought that copy, before JAX's backend asked.
    at_load = [ln for ln in done.stdout.splitlines() if ln.startswith("AT_LOAD")][-1].split()[1:]
    assert at_load == mapped, (at_load, mapped)

"""Per-call-site resources on a real GPU (issue 41): a cuBLAS handle in `jaxcc::State` is made
once per call site of a compiled program, not per call, and is shared by every execution of that
site (docs/usage.md, "State"); an XLA-placed `jaxcc::Scratch` workspace and a State-held table
give the same results as their per-call counterparts. One device: what a kernel holding a
per-device resource must do on several is documented there, not run here."""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import gpu_resources_source  # noqa: E402

N = 4096


@pytest.fixture(scope="module")
def mod():
    # No graph trait: the per-call variants allocate and synchronise, which a capture forbids.
    return gpu_resources_source.load("gpu_state_test", allow_cuda_graph=False)


def made(mod):
    """(cuBLAS handles, tables) this process has made so far."""
    out = jax.ShapeDtypeStruct((2,), jnp.int32)
    counts = mod.handles_made(jnp.zeros(1, jnp.float32), outs=out)
    return tuple(int(v) for v in np.asarray(counts))


def test_a_cublas_handle_is_made_once_per_call_site_not_per_call(mod):
    x = jnp.arange(N, dtype=jnp.float32)
    handles, _ = made(mod)

    @jax.jit
    def two_sites(x):
        a = mod.saxpy_state(x, x, outs=jax.ShapeDtypeStruct((N,), jnp.float32), alpha=2.0)
        b = mod.saxpy_state(a, x, outs=jax.ShapeDtypeStruct((N,), jnp.float32), alpha=0.5)
        return a, b

    for _ in range(5):
        a, b = two_sites(x)
    np.testing.assert_allclose(np.asarray(a), 3 * np.arange(N))
    np.testing.assert_allclose(np.asarray(b), 2.5 * np.arange(N))
    assert made(mod)[0] - handles == 2, "one handle per call site, kept across the 5 calls"
    # The handle per call: one more for every call (the cost bench_gpu_resources.py measures).
    per_call = jax.jit(
        lambda x: mod.saxpy_per_call(x, x, outs=jax.ShapeDtypeStruct((N,), jnp.float32), alpha=2.0)
    )
    before = made(mod)[0]
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(per_call(x)), 3 * np.arange(N))
    assert made(mod)[0] - before == 3


def test_scratch_and_state_tables_match_their_per_call_counterparts(mod):
    x = jnp.linspace(-1.0, 1.0, N, dtype=jnp.float32)
    want = (2 * np.asarray(x) + 1)[::-1]
    scratch = jax.jit(lambda x: mod.twopass_scratch(x, scratch_bytes=x.size * 4))(x)
    malloc = jax.jit(mod.twopass_malloc)(x)
    np.testing.assert_allclose(np.asarray(scratch), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(malloc), want, rtol=1e-6)
    idx = jnp.arange(-N, N, 7, dtype=jnp.int32)
    out = jax.ShapeDtypeStruct(idx.shape, jnp.float32)
    tables = made(mod)[1]
    site = jax.jit(lambda i: mod.lookup_state(i, outs=out, table_size=1 << 16))
    for _ in range(4):
        held = site(idx)
    rebuilt = jax.jit(lambda i: mod.lookup_rebuild(i, outs=out, table_size=1 << 16))(idx)
    size = 1 << 16
    want = 0.5 * ((np.asarray(idx) % size) % 1000)
    np.testing.assert_allclose(np.asarray(held), want)
    np.testing.assert_allclose(np.asarray(rebuilt), want)
    assert made(mod)[1] - tables == 2, "one table for the call site, one for the rebuilt call"

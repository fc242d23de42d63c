"""How the two brainevent-operator GPU benchmarks (bench_brainevent_ops_gpu.py, one process per
side, and bench_brainevent_ops_gpu_paired.py, both sides in one) time an operator, so their
figures mean the same thing."""

from __future__ import annotations

import statistics
import time

LOOP = 100  # iterations of the jitted loop of `looped`


def looped(kernel, kw):
    """The operator LOOP times inside one jitted fori_loop, each call depending on the last (its
    first input plus 0 * its outputs' sum), so XLA cannot hoist it: the time per iteration is
    the handler and the kernels, without Python's dispatch."""
    import jax
    import jax.numpy as jnp

    def run(*a):
        def body(i, c):
            out = kernel._call_fn(c, *a[1:], backend="cuda_raw", **kw)
            s = sum(jnp.sum(x.astype(jnp.float32)) for x in jax.tree.leaves(out))
            return c + (s * 0).astype(c.dtype)

        return jax.lax.fori_loop(0, LOOP, body, a[0])

    return jax.jit(run)


def loopable(args) -> bool:
    """Whether `looped` can carry the first argument: one floating-point array."""
    import jax.numpy as jnp

    first = args[0] if args else None
    return hasattr(first, "dtype") and jnp.issubdtype(first.dtype, jnp.floating)


def timed(fn, args, per, batch, samples) -> float:
    """Median microseconds per `per` units of work: `samples` times, `batch` calls then a block,
    after three warm-up calls."""
    import jax

    for _ in range(3):
        jax.block_until_ready(fn(*args))
    out = []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(batch):
            result = fn(*args)
        jax.block_until_ready(result)
        out.append((time.perf_counter() - t) / batch / per * 1e6)
    return statistics.median(out)

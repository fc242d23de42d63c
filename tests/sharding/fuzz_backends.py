"""XLACustomKernels of the differential sharding test: one primitive per rule, with the same
kernel on every CPU backend jaxcc offers (C++, Numba, Pallas in interpret mode, Warp where it is
installed), so a case can pick the backend as it picks the mesh."""

import jax
import jax.numpy as jnp
import numba
import numpy as np

import jaxcc

# kind (index into family.CASES) -> (pallas body on whole refs, numba kernel)
KINDS = {}


@numba.njit
def _affine(x, out):
    flat, o = x.ravel(), out.ravel()
    for i in range(flat.size):
        o[i] = 2 * flat[i] + 1


@numba.njit
def _row_norm(x, out):
    for r in range(x.shape[0]):
        s = 0.0
        for c in range(x.shape[1]):
            s += x[r, c]
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] / s


@numba.njit
def _row_sum(x, out):
    for r in range(x.shape[0]):
        s = 0.0
        for c in range(x.shape[1]):
            s += x[r, c]
        out[r] = s


@numba.njit
def _roll(x, out):
    n = x.shape[1]
    for r in range(x.shape[0]):
        for i in range(n):
            out[r, i] = x[r, (i + 1) % n]


def _pallas(fn):
    def body(x_ref, o_ref):
        o_ref[...] = fn(x_ref[...])

    return body


BODIES = {
    "affine": (_affine, lambda x: 2 * x + 1),
    "row_norm": (_row_norm, lambda x: x / jnp.sum(x, axis=1, keepdims=True)),
    "row_sum": (_row_sum, lambda x: jnp.sum(x, axis=1)),
    "roll": (_roll, lambda x: jnp.roll(x, -1, axis=1)),
}
RULES = {"affine": "... -> ...", "row_norm": "r c -> r c; need_replication: c",
         "row_sum": "r c -> r; reduction: c", "roll": "r i -> r i; permutation: i"}  # fmt: skip


def _warp(kernel):
    """A Warp launcher of the kernel on 2-D float32 arrays, or None without Warp."""
    try:
        import warp as wp
    except ImportError:
        return None
    wp.config.quiet = True
    if kernel == "affine":

        @wp.kernel
        def k(x: wp.array2d(dtype=float), o: wp.array2d(dtype=float)):
            i, j = wp.tid()
            o[i, j] = 2.0 * x[i, j] + 1.0

    elif kernel == "roll":

        @wp.kernel
        def k(x: wp.array2d(dtype=float), o: wp.array2d(dtype=float)):
            i, j = wp.tid()
            o[i, j] = x[i, (j + 1) % x.shape[1]]

    elif kernel == "row_norm":

        @wp.kernel
        def k(x: wp.array2d(dtype=float), o: wp.array2d(dtype=float)):
            i, j = wp.tid()
            s = float(0.0)  # noqa: UP018 - Warp needs float() for a variable it mutates
            for c in range(x.shape[1]):
                s += x[i, c]
            o[i, j] = x[i, j] / s

    else:
        return None  # row_sum: a 1-D output launched over 2-D, left to the other backends
    return wp.jax_kernel(k)


WARP_KINDS = ("affine", "roll", "row_norm")


def make(plain):
    """kernel name -> XLACustomKernel with every backend that runs here; and the backends."""
    prims = {}
    backends = ["cpp", "numba", "pallas"]
    for kernel, rule in RULES.items():
        prim = jaxcc.XLACustomKernel(f"fuzz_backends_{kernel}", sharding=rule)
        fn = plain[kernel]
        prim.def_cpp_kernel(lambda fn=fn, **p: fn)
        nb, body = BODIES[kernel]
        prim.def_numba_kernel(lambda outs, nb=nb, **p: jaxcc.numba_kernel(nb, outs))

        def pallas(outs, body=body, **p):
            from jax.experimental import pallas as pl

            return pl.pallas_call(_pallas(body), out_shape=outs[0], interpret=True)

        prim.def_kernel("pallas", "cpu", pallas)
        launcher = _warp(kernel)
        if launcher is not None:
            prim.def_warp_kernel(lambda launcher=launcher, **p: launcher, platform="cpu")
        prims[kernel] = prim
    if any(_warp(k) is not None for k in ("affine",)):
        backends.append("warp")
    return prims, backends


def shapes(kernel, n):
    x = (n, 2 * n)
    return [x], [x if kernel != "row_sum" else x[:1]]


def has(prim, backend):
    return prim.kernel_table.has_backend(backend)


def reference(kernel, x):
    return np.asarray(BODIES[kernel][1](jnp.asarray(x)))


__all__ = ["make", "shapes", "has", "reference", "RULES", "jax"]

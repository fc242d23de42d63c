"""brainevent 0.3.0's own operators for `jaxcc check brainevent_on_jaxcc.check_ops` (test-only;
tests/test_check_kernel_brainevent.py): imported with this directory's parent on sys.path, it
installs the shim first (so every operator below is a jaxcc XLACustomKernel with brainevent's
Numba and JAX kernels, JVP, transpose and batching rules), then declares sample inputs the way
brainevent's own `*_p_call` functions build them. A right operator must pass every row that
applies: any failure is a false alarm of check_kernel (or a bug brainevent's tests missed)."""

import brainevent_on_jaxcc.plugin  # noqa: F401  # isort: skip  (installs the shim first)

import jax
import numpy as np
from brainevent._dense.binary import binary_densemm_p, binary_densemv_p
from brainevent._jit_uniform.float import jitumv_p

rng = np.random.default_rng(7)
W = rng.standard_normal((5, 6)).astype(np.float32)
SPIKES_6 = rng.random(6) < 0.5
SPIKES_5 = rng.random(5) < 0.5
SPIKES_6x3 = rng.random((6, 3)) < 0.5
SPIKES_5x3 = rng.random((5, 3)) < 0.5


def _dense(primitive, weights, spikes, out_shape, transpose):
    params = {
        "outs": [jax.ShapeDtypeStruct(out_shape, weights.dtype)],
        "transpose": transpose,
        "weighted": False,
        "spk_info": jax.ShapeDtypeStruct(spikes.shape, spikes.dtype),
        "weight_info": jax.ShapeDtypeStruct(weights.shape, weights.dtype),
    }
    return primitive, (weights, spikes), params


def _jitumv(transpose: bool):
    shape = (5, 6)
    w_low, w_high = np.asarray([-0.5], np.float32), np.asarray([1.5], np.float32)
    clen, seed = np.asarray([3.0], np.float32), np.asarray([42], np.int32)
    vector = rng.standard_normal(shape[0] if transpose else shape[1]).astype(np.float32)
    out = jax.ShapeDtypeStruct([shape[1] if transpose else shape[0]], np.float32)
    args = (w_low, w_high, clen, vector, seed)
    info = {f"{n}_info": jax.ShapeDtypeStruct(a.shape, a.dtype)
            for n, a in zip(("w_low", "w_high", "clen", "vector", "seed"), args, strict=True)}  # fmt: skip
    params = {"outs": [out], **info, "out_info": out, "shape": shape, "transpose": transpose,
              "corder": True}  # fmt: skip
    return jitumv_p, args, params


JAXCC_CHECKS = {
    "binary_densemv": lambda: _dense(binary_densemv_p, W, SPIKES_6, (5,), False),
    "binary_densemv_transpose": lambda: _dense(binary_densemv_p, W, SPIKES_5, (6,), True),
    "binary_densemm": lambda: _dense(binary_densemm_p, W, SPIKES_6x3, (5, 3), False),
    "binary_densemm_transpose": lambda: _dense(binary_densemm_p, W, SPIKES_5x3, (6, 3), True),
    "jitumv": lambda: _jitumv(False),
    "jitumv_transpose": lambda: _jitumv(True),
}

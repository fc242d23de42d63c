"""jaxcc demo: inline C++ kernels compiled, cached and called from jitted JAX code.

Run: ./scripts/demo.sh   (or python examples/demo.py once jaxcc is installed)
"""

import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxcc

SOURCE = r"""
#include "brainevent/common.h"

// Inferred from the signature: const Tensor -> input, Tensor -> output.
void add_one(const BE::Tensor x, BE::Tensor out) {
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
}

// A scalar attribute, typed float32 in the spec below.
void scale_by(const BE::Tensor x, BE::Tensor out, float factor) {
    BE_DISPATCH_FLOATING(x.dtype(), T, {
        const T* in = x.data_ptr<T>();
        T* o = out.data_ptr<T>();
        for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * static_cast<T>(factor);
    });
}

// @BE saxpy
void saxpy(const BE::Tensor x, const BE::Tensor y, BE::Tensor out, float a) {
    BE_CHECK(x.numel() == y.numel()) << "x has " << x.numel() << " elements, y has " << y.numel();
    const float* px = x.data_ptr<float>();
    const float* py = y.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = a * px[i] + py[i];
}
"""


def timed(label, fn):
    start = time.perf_counter()
    result = fn()
    print(f"  {label:<42} {1e3 * (time.perf_counter() - start):9.2f} ms")
    return result


def per_call_us(fn, *args, repeats=2000):
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    jax.block_until_ready(out)
    return 1e6 * (time.perf_counter() - start) / repeats


def main():
    print(f"jaxcc {jaxcc.__version__}, jax {jax.__version__}, cache: {jaxcc.get_cache_dir()}")
    print("loading:")
    functions = {"add_one": None, "scale_by": ["arg", "ret", "attr.factor:float32"], "saxpy": None}
    mod = timed(
        "load_cpp_inline (first load in this process)",
        lambda: jaxcc.load_cpp_inline("jaxcc_demo", SOURCE, functions),
    )
    status = "hit" if mod.cache_hit else f"miss: built in {mod.build_seconds:.2f} s"
    print(f"    cache {status}")
    timed(
        "load_cpp_inline again (in-process reload)",
        lambda: jaxcc.load_cpp_inline("jaxcc_demo", SOURCE, functions),
    )
    print(f"    functions: {mod.function_names} -> targets {list(mod.targets.values())}")

    x = jnp.arange(8, dtype=jnp.float32)
    y = jnp.ones(8, dtype=jnp.float32)

    @jax.jit
    def pipeline(x, y):
        return mod.saxpy(mod.scale_by(mod.add_one(x), factor=10.0), y, a=0.5)

    print("results:")
    print("  add_one(x)             =", np.asarray(jax.jit(mod.add_one)(x)))
    print("  scale_by(x, factor=10) =", np.asarray(mod.scale_by(x, factor=10.0)))
    print("  jit(saxpy∘scale∘add)   =", np.asarray(pipeline(x, y)))
    expected = 0.5 * (np.arange(8) + 1) * 10 + 1
    assert np.allclose(pipeline(x, y), expected), "demo produced a wrong answer"
    print(
        "  raw jax.ffi.ffi_call   =",
        np.asarray(
            jax.ffi.ffi_call("jaxcc_demo.add_one", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        ),
    )

    print("errors are Python exceptions:")
    try:
        mod.saxpy(x, jnp.ones(3, jnp.float32), outs=jax.ShapeDtypeStruct(x.shape, x.dtype), a=1.0)
    except Exception as e:  # JaxRuntimeError carrying the BE_CHECK message
        print("  ", str(e).splitlines()[0][:110])

    print("per-call time (jitted, 1024 floats):")
    big = jnp.ones(1024, jnp.float32)
    jitted = jax.jit(mod.add_one)
    reference = jax.jit(lambda v: v + 1)
    kernel_us, jnp_us = per_call_us(jitted, big), per_call_us(reference, big)
    print(
        f"  jaxcc add_one {kernel_us:7.2f} us   jnp x+1 {jnp_us:7.2f} us   "
        f"ratio {kernel_us / jnp_us:.2f}"
    )

    cuda_demo()


CUDA_SRC = r"""
#include <cuda_runtime.h>
#include "brainevent/common.h"

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// @BE vector_add arg arg ret stream
void vector_add(const BE::Tensor a, const BE::Tensor b, BE::Tensor out, int64_t stream) {
    int n = a.numel();
    add_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(
        static_cast<const float*>(a.data_ptr()), static_cast<const float*>(b.data_ptr()),
        static_cast<float*>(out.data_ptr()), n);
    BE_CHECK_KERNEL_LAUNCH();
}
"""


def cuda_demo() -> None:
    """Builds a CUDA kernel (for the GPUs JAX sees, or sm_80 + sm_90 without one) and runs it
    where a GPU exists; without nvcc it says so and stops."""
    import os
    import shutil

    if not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")):
        print("CUDA: nvcc not found, skipping the CUDA part")
        return
    if not shutil.which("nvcc"):
        os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")
    try:
        has_gpu = bool(jax.devices("gpu"))
    except RuntimeError:
        has_gpu = False
    start = time.perf_counter()
    mod = jaxcc.load_cuda_inline(
        "jaxcc_demo_cuda", CUDA_SRC, compute_capability=None if has_gpu else ["8.0", "9.0"]
    )
    seconds = time.perf_counter() - start
    state = "cache hit" if mod.cache_hit else "built"
    archs = ", ".join(f"sm_{a}" for a in mod.cuda_archs)
    print(f"CUDA: vector_add {state} in {seconds:.2f} s for {archs}")
    if not has_gpu:
        print(
            "  no GPU here: the module is built and registered; calling it would raise "
            "jaxcc.DeviceError"
        )
        return
    a = jnp.ones(1 << 20, jnp.float32)
    out = jax.jit(mod.vector_add)(a, a)
    assert float(out[0]) == 2.0, "CUDA demo produced a wrong answer"
    print("  jit(vector_add)(1, 1)[:4] =", np.asarray(out[:4]))


if __name__ == "__main__":
    main()

"""One primitive, four GPU backends: a jaxcc CUDA kernel, Triton, Numba-CUDA and Pallas compute
`out = x * y + 1` behind one `XLACustomKernel`. On a GPU the script checks that they agree, runs
them under jit and vmap, and benchmarks them side by side (table + PNG). Without a GPU,
`--build-only` compiles everything a GPU run needs for `--arch` (nvcc, Triton, numba-cuda and the
launchers) and reports what it built, so the build side is checked on any machine.

Run:  python examples/gpu_backends.py [--n 1048576] [--png gpu_backends.png]
      python examples/gpu_backends.py --build-only [--arch 9.0]
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxcc

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include "jaxcc/jaxcc.h"

__global__ void fma_kernel(const float* x, const float* y, float* out, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = x[i] * y[i] + 1.0f;
}

void mul_add_one(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out,
                 int64_t stream) {
  const int64_t n = out.numel();
  if (n == 0) return;
  fma_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), n);
}
"""


def triton_parts():
    import triton
    import triton.language as tl

    @triton.jit
    def mul_add_one(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(o_ptr + offsets, x * y + 1.0, mask=mask)

    return triton, mul_add_one


def numba_cuda_parts():
    from numba import cuda

    def mul_add_one(x, y, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = x[i] * y[i] + 1.0

    return mul_add_one


def pallas_mul_add_one(outs, **params):
    from jax.experimental import pallas as pl

    n = outs[0].shape[0]
    block = min(1024, n)

    def body(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] * y_ref[...] + 1.0

    spec = pl.BlockSpec((block,), lambda i: (i,))
    return pl.pallas_call(
        body, out_shape=outs[0], grid=(pl.cdiv(n, block),), in_specs=[spec, spec], out_specs=spec
    )


def make_primitive(arch=None) -> jaxcc.XLACustomKernel:
    cuda_module = jaxcc.load_cuda_inline(
        "example_mul_add_one", CUDA_SOURCE, ["mul_add_one"], compute_capability=arch
    )
    triton, triton_kernel = triton_parts()
    numba_kernel = numba_cuda_parts()

    def triton_generator(outs, **params):
        n = outs[0].shape[0]
        return jaxcc.triton_kernel(
            triton_kernel, outs[0], grid=(triton.cdiv(n, 1024),), n=n, BLOCK=1024,
            compute_capability=arch,
        )  # fmt: skip

    def numba_cuda_generator(outs, **params):
        n = outs[0].shape[0]
        return jaxcc.numba_cuda_kernel(
            numba_kernel, outs[0], grid=(n + 255) // 256, block=256, compute_capability=arch
        )

    primitive = jaxcc.XLACustomKernel("example_mul_add_one")
    primitive.def_cuda_raw_kernel(lambda **params: cuda_module.mul_add_one)  # gpu default
    primitive.def_triton_kernel(triton_generator)
    primitive.def_numba_cuda_kernel(numba_cuda_generator)
    primitive.def_pallas_kernel("gpu", pallas_mul_add_one)

    def call(x, y, **kwargs):
        return primitive(x, y, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), **kwargs)

    primitive.def_call(call)
    return primitive


def build_only(arch: str, n: int) -> int:
    """Everything a GPU run compiles, for `arch`, on a machine without a GPU."""
    from jaxcc.custom_kernel.bridges import numba_cuda as numba_cuda_bridge
    from jaxcc.custom_kernel.bridges import triton as triton_bridge
    from jaxcc.custom_kernel.bridges.numba_cuda_launcher import launcher_module as numba_launcher
    from jaxcc.custom_kernel.bridges.triton_launcher import launcher_module as triton_launcher

    start = time.perf_counter()
    make_primitive(arch)
    print(f"jaxcc CUDA module for sm_{arch.replace('.', '')}: built and cached")
    major, minor = (int(p) for p in arch.split("."))
    cc = (major, minor)
    _, kernel = triton_parts()
    buffer_types = ["*fp32"] * 3
    signature, constexprs, scalars, _ = triton_bridge.bind_parameters(
        kernel, 3, buffer_types, {"n": n, "BLOCK": 1024}
    )
    compiled = triton_bridge.compile_kernel(kernel, signature, constexprs, 3, 4, 3, cc, False)
    triton_bridge.build_plan(compiled, 3, scalars, "mul_add_one")
    print(f"Triton kernel: {len(bytes(compiled.binary))} byte cubin, launch plan checked")
    ptx, entry = numba_cuda_bridge.compile_ptx(numba_cuda_parts(), (("<f4", 1),) * 3, cc)
    print(f"Numba-CUDA kernel: {len(ptx)} characters of PTX, entry {entry[:40]}...")
    triton_launcher(2, 1, arch)
    numba_launcher(2, 1, arch)
    print("launchers (Triton, Numba-CUDA) for 2 inputs and 1 output: built and cached")
    print(f"build-only done in {time.perf_counter() - start:.1f} s")
    return 0


def run_on_gpu(n: int, png: str | None) -> int:
    primitive = make_primitive()
    gpu = jax.devices("gpu")[0]
    print(f"device: {gpu.device_kind}; backends: {primitive.available_backends('gpu')}")
    x = jax.device_put(jnp.linspace(-1, 1, n, dtype=jnp.float32), gpu)
    y = jax.device_put(jnp.linspace(2, 3, n, dtype=jnp.float32), gpu)
    expected = np.asarray(x) * np.asarray(y) + 1.0
    rows, row = x[: 4 * 64].reshape(4, 64), y[:64]
    rows_expected = np.asarray(rows) * np.asarray(row) + 1.0
    for backend in primitive.available_backends("gpu"):
        got = jax.jit(lambda a, b, be=backend: primitive.call(a, b, backend=be))(x, y)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-6)
        batched = jax.vmap(lambda a, be=backend: primitive.call(a, row, backend=be))(rows)
        np.testing.assert_allclose(np.asarray(batched), rows_expected, rtol=1e-6, atol=1e-6)
        print(f"{backend:>10}: agrees with NumPy under jit and vmap")
    primitive.def_benchmark_data(
        lambda *, platform: [
            jaxcc.BenchmarkConfig(f"n={size}", (jnp.ones(size, jnp.float32),) * 2, {}, {"n": size})
            for size in (4096, n)
        ]
    )
    result = primitive.benchmark(platform="gpu", n_warmup=10, n_runs=50, n_batch_per_run=10)
    result.print()
    if png:
        result.plot(png)
        print(f"plot: {png}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 20)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--arch", default="9.0")
    parser.add_argument("--png", default=None)
    args = parser.parse_args()
    if args.build_only:
        return build_only(args.arch, args.n)
    try:
        jax.devices("gpu")
    except RuntimeError:
        print("JAX sees no GPU: run with --build-only to compile everything for --arch instead")
        return 0
    return run_on_gpu(args.n, args.png)


if __name__ == "__main__":
    sys.exit(main())

"""A CPU library kernel: single-precision matrix product through OpenBLAS's cblas_sgemm.

Linking a system library is one keyword (`extra_ldflags=["-lopenblas"]`). Two spellings:
`sgemm` makes one BLAS call (OpenBLAS may use its own threads); `sgemm_pool` splits the rows of
the product into blocks on XLA's intra-op pool (`jaxcc::ThreadPool&`), one single-threaded BLAS
call per block, so the cores are XLA's and nothing oversubscribes them when XLA runs other ops
at the same time. Set OPENBLAS_NUM_THREADS=1 for the pool spelling (OpenBLAS's own threads
would multiply with XLA's); this script does so before OpenBLAS loads.

Needs libopenblas-dev (Debian; scripts/setup.sh installs it). Run: python examples/cpu_blas.py
"""

import ctypes.util
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

SOURCE = r"""
#include <cblas.h>

// c[m, n] = a[m, k] @ b[k, n], row-major float32.
static void Sgemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(k), b, static_cast<int>(n), 0.0f, c,
              static_cast<int>(n));
}

static void CheckShapes(const jaxcc::Tensor& a, const jaxcc::Tensor& b, const jaxcc::Tensor& c) {
  JAXCC_CHECK(a.ndim() == 2 && b.ndim() == 2 && c.ndim() == 2) << "sgemm takes matrices";
  JAXCC_CHECK(a.size(1) == b.size(0) && c.size(0) == a.size(0) && c.size(1) == b.size(1))
      << "shapes do not chain: a " << a.size(0) << "x" << a.size(1) << ", b " << b.size(0) << "x"
      << b.size(1);
  JAXCC_CHECK(a.size(0) < (int64_t{1} << 31) && a.size(1) < (int64_t{1} << 31) &&
              b.size(1) < (int64_t{1} << 31)) << "BLAS takes int dimensions";
}

void sgemm(const jaxcc::Tensor& a, const jaxcc::Tensor& b, jaxcc::Tensor& c) {
  CheckShapes(a, b, c);
  Sgemm(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), b.size(1),
        a.size(1));
}

// Row blocks of c on XLA's pool, one BLAS call each (at least 64 rows per block).
void sgemm_pool(const jaxcc::Tensor& a, const jaxcc::Tensor& b, jaxcc::Tensor& c,
                jaxcc::ThreadPool& pool) {
  CheckShapes(a, b, c);
  const int64_t n = b.size(1), k = a.size(1);
  pool.parallel_for(0, a.size(0), 64, [&](int64_t lo, int64_t hi) {
    Sgemm(a.data_ptr<float>() + lo * k, b.data_ptr<float>(), c.data_ptr<float>() + lo * n, hi - lo,
          n, k);
  });
}
"""


def blas_available() -> bool:
    """OpenBLAS's library and its cblas.h are installed (Debian: libopenblas-dev)."""
    headers = ("/usr/include/cblas.h", "/usr/include/x86_64-linux-gnu/cblas.h",
               "/usr/include/aarch64-linux-gnu/cblas.h")  # fmt: skip
    return ctypes.util.find_library("openblas") is not None and any(map(os.path.exists, headers))


def build():
    import jaxcc

    return jaxcc.load_cpp_inline(
        "example_cpu_blas", SOURCE, functions=["sgemm", "sgemm_pool"], extra_ldflags=["-lopenblas"]
    )


def main() -> int:
    if not blas_available():
        print("OpenBLAS not found: install libopenblas-dev (apt-get install -y libopenblas-dev)")
        return 0
    import jax
    import jax.numpy as jnp
    import numpy as np

    mod = build()
    a = jax.random.normal(jax.random.key(0), (512, 256), jnp.float32)
    b = jax.random.normal(jax.random.key(1), (256, 384), jnp.float32)
    out = jax.ShapeDtypeStruct((512, 384), jnp.float32)
    reference = np.asarray(jnp.dot(a, b, precision="highest"))
    for name in ("sgemm", "sgemm_pool"):
        kernel = getattr(mod, name)
        fn = jax.jit(lambda a, b, f=kernel: f(a, b, outs=out))
        got = np.asarray(fn(a, b))
        np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-3)
        start = time.perf_counter()
        for _ in range(20):
            fn(a, b).block_until_ready()
        ms = (time.perf_counter() - start) / 20 * 1e3
        print(f"{name}: matches jnp.dot, {ms:.2f} ms per 512x256 @ 256x384 call")
    return 0


if __name__ == "__main__":
    sys.exit(main())

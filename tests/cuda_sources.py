"""CUDA sources shared by the no-GPU build tests and the GPU tests: the seeds' tutorial kernels
verbatim, plus kernels for dtypes, several outputs and error paths."""

VECTOR_ADD = r"""
#include <cuda_runtime.h>
#include "brainevent/common.h"

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) out[idx] = a[idx] + b[idx];
}

// @BE vector_add arg arg ret stream
void vector_add(const BE::Tensor a, const BE::Tensor b,
                BE::Tensor out, int64_t stream) {
    int n = a.numel();
    add_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(
        static_cast<const float*>(a.data_ptr()),
        static_cast<const float*>(b.data_ptr()),
        static_cast<float*>(out.data_ptr()), n);
}
"""

SCALE_BY = r"""
#include <cuda_runtime.h>
#include "brainevent/common.h"

__global__ void scale_kernel(const float* x, float* out, int n, float factor) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) out[idx] = x[idx] * factor;
}

// @BE scale_by arg ret attr.scale_factor:float32 stream
void scale_by(const BE::Tensor x, BE::Tensor out,
              float scale_factor, int64_t stream) {
    int n = x.numel();
    scale_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(
        static_cast<const float*>(x.data_ptr()),
        static_cast<float*>(out.data_ptr()), n, scale_factor);
    BE_CHECK_KERNEL_LAUNCH();
}
"""

# One templated kernel dispatched on the runtime dtype; two outputs; a launch that fails on
# purpose; an explicit BE_CUDA_CHECK of a failing runtime call.
MIXED = r"""
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include "brainevent/common.h"

template <typename T>
__global__ void affine_kernel(const T* x, T* y, T* twice, int64_t n, float a, float b) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        float v = static_cast<float>(x[i]);
        y[i] = static_cast<T>(a * v + b);
        twice[i] = static_cast<T>(2.0f * v);
    }
}

// @BE affine arg ret ret attr.a:float32 attr.b:float32 stream
void affine(const BE::Tensor x, BE::Tensor y, BE::Tensor twice, float a, float b, int64_t stream) {
    int64_t n = x.numel();
    if (n == 0) return;
    unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    auto s = (cudaStream_t)stream;
    switch (x.dtype()) {
        case BE::DType::Float32:
            affine_kernel<<<blocks, 256, 0, s>>>(x.data_ptr<float>(), y.data_ptr<float>(), twice.data_ptr<float>(), n, a, b);
            break;
        case BE::DType::Float64:
            affine_kernel<<<blocks, 256, 0, s>>>(x.data_ptr<double>(), y.data_ptr<double>(), twice.data_ptr<double>(), n, a, b);
            break;
        case BE::DType::Int32:
            affine_kernel<<<blocks, 256, 0, s>>>(x.data_ptr<int32_t>(), y.data_ptr<int32_t>(), twice.data_ptr<int32_t>(), n, a, b);
            break;
        case BE::DType::Float16:
            affine_kernel<<<blocks, 256, 0, s>>>(static_cast<const __half*>(x.data_ptr()), static_cast<__half*>(y.data_ptr()), static_cast<__half*>(twice.data_ptr()), n, a, b);
            break;
        default:
            BE_CHECK(false) << "affine: unsupported dtype";
    }
    BE_CHECK_KERNEL_LAUNCH();
}

__global__ void noop_kernel() {}

// @BE bad_launch arg ret stream
void bad_launch(const BE::Tensor x, BE::Tensor out, int64_t stream) {
    // 4096 threads per block exceeds every GPU's limit: the launch itself fails.
    noop_kernel<<<1, 4096, 0, (cudaStream_t)stream>>>();
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE bad_memcpy arg ret stream
void bad_memcpy(const BE::Tensor x, BE::Tensor out, int64_t stream) {
    BE_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr(), reinterpret_cast<void*>(0x10), 4, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    BE_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream));
}
"""

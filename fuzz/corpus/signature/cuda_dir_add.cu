#include <cuda_runtime.h>
#include "brainevent/common.h"
#include "common.cuh"

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

// @BE add_vec arg arg ret stream
void add_vec(const BE::Tensor a, const BE::Tensor b, BE::Tensor out, int64_t stream) {
  int n = static_cast<int>(a.numel());
  add_kernel<<<(n + CUDA_DIR_BLOCK - 1) / CUDA_DIR_BLOCK, CUDA_DIR_BLOCK, 0, (cudaStream_t)stream>>>(
      static_cast<const float*>(a.data_ptr()), static_cast<const float*>(b.data_ptr()),
      static_cast<float*>(out.data_ptr()), n);
  BE_CHECK_KERNEL_LAUNCH();
}

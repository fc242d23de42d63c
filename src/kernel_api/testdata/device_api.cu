// The jaxcc kernel API used from device code and nvcc host code: Tensor accessors inside a
// __global__ kernel, JAXCC_CHECK in device and host-device functions, every dispatch macro
// instantiating device kernels (half and complex included), the CUDA checks and StreamHandle.
// Compiled with `nvcc -c` (no GPU needed) by nvcc_compile_test.cc.
#include "jaxcc/jaxcc.h"

namespace {

JAXCC_HOST_DEVICE inline std::int64_t LastDim(const jaxcc::Tensor& t) {
  JAXCC_CHECK(t.ndim() > 0) << "need at least one dimension, got " << t.ndim();
  return t.ndim() > 0 ? t.size(-1) : 1;
}

__global__ void RowSumKernel(jaxcc::Tensor x, jaxcc::Tensor out) {
  const std::int64_t cols = LastDim(x);
  const std::int64_t rows = x.numel() / (cols > 0 ? cols : 1);
  const std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  JAXCC_CHECK(x.dtype() == jaxcc::DType::Float32) << "float32 only";
  if (row >= rows) return;
  const float* in = x.data_ptr<const float>();
  float total = 0.0f;
  for (std::int64_t c = 0; c < cols; ++c) total += in[row * x.stride(0) + c * x.stride(-1)];
  out.data_ptr<float>()[row] = total;
  (void)x.shape(0);
  (void)x.shape_ptr();
  (void)x.strides_ptr();
  (void)x.element_size();
  (void)x.nbytes();
  (void)x.is_contiguous();
  (void)x.numel_checked_int();
  (void)x.data();
  (void)jaxcc::dtype_size(x.dtype());
  (void)jaxcc::dtype_name(x.dtype());
}

template <class T>
__global__ void CopyKernel(const T* in, T* out, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

template <class T>
__global__ void AddKernel(const T* a, const T* b, T* out, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

__global__ void BuildTensorOnDevice(float* data, std::int64_t* result) {
  const std::int64_t shape[2] = {3, 4};
  jaxcc::Tensor t(data, shape, 2, jaxcc::DType::Float32);
  result[0] = t.numel();
}

}  // namespace

void RowSum(jaxcc::Tensor x, jaxcc::Tensor out, cudaStream_t stream) {
  JAXCC_CHECK(x.ndim() == 2) << "x must be 2-D, got shape rank " << x.ndim() << " and "
                              << x.dtype();
  const std::int64_t rows = x.size(0);
  if (rows == 0) return;
  RowSumKernel<<<static_cast<unsigned>((rows + 255) / 256), 256, 0, stream>>>(x, out);
  JAXCC_CHECK_KERNEL_LAUNCH();
}

void CopyAny(jaxcc::Tensor x, jaxcc::Tensor out, std::int64_t stream) {
  const std::int64_t n = x.numel();
  const cudaStream_t s = jaxcc::detail::StreamHandle{stream};
  JAXCC_DISPATCH_ALL(x.dtype(), T, {
    CopyKernel<T><<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(
        x.data_ptr<const T>(), out.data_ptr<T>(), n);
  });
  JAXCC_CHECK_KERNEL_LAUNCH_SYNC();
}

void AddFloating(jaxcc::Tensor a, jaxcc::Tensor b, jaxcc::Tensor out, cudaStream_t stream) {
  const std::int64_t n = a.numel();
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  JAXCC_DISPATCH_FLOATING_AND_HALF(a.dtype(), T, {
    AddKernel<T><<<blocks, 256, 0, stream>>>(a.data_ptr<const T>(), b.data_ptr<const T>(),
                                             out.data_ptr<T>(), n);
  });
  JAXCC_DISPATCH_FLOATING(a.dtype(), T, {
    AddKernel<T><<<blocks, 256, 0, stream>>>(a.data_ptr<const T>(), b.data_ptr<const T>(),
                                             out.data_ptr<T>(), n);
  });
  JAXCC_DISPATCH_ALL_TYPES(a.dtype(), T, {
    AddKernel<T><<<blocks, 256, 0, stream>>>(a.data_ptr<const T>(), b.data_ptr<const T>(),
                                             out.data_ptr<T>(), n);
  });
  JAXCC_DISPATCH_INTEGRAL(a.dtype(), T, {
    AddKernel<T><<<blocks, 256, 0, stream>>>(a.data_ptr<const T>(), b.data_ptr<const T>(),
                                             out.data_ptr<T>(), n);
  });
  // std::complex arithmetic is host-only, so complex kernels here only copy.
  JAXCC_DISPATCH_COMPLEX(a.dtype(), T, {
    CopyKernel<T><<<blocks, 256, 0, stream>>>(a.data_ptr<const T>(), out.data_ptr<T>(), n);
  });
  JAXCC_CHECK_KERNEL_LAUNCH();
}

void DeviceConstruction(float* data, std::int64_t* result) {
  BuildTensorOnDevice<<<1, 1>>>(data, result);
  JAXCC_CUDA_CHECK(cudaGetLastError());
  JAXCC_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(std::int64_t), nullptr));
}

// Every macro, type and helper of brainevent 0.3's kernel-header API in one CUDA source, in the
// shapes brainevent 0.3's operators use them (device kernels on BE types, host entry points with
// the dispatch and check macros). Compiled by nvcc in nvcc_compile_test.cc; with
// -DWITH_XLA_HEADERS also the XLA-facing dtypes.h and ffi_compat.h.
#include <cuda_runtime.h>

#include <cstdint>

#include "brainevent/common.h"
#include "brainevent/dispatch.h"
#ifdef WITH_XLA_HEADERS
#include "brainevent/dtypes.h"
#include "brainevent/ffi_compat.h"
#include "xla/ffi/api/ffi.h"
#endif

template <typename IndptrT, typename ValueT>
__global__ void csr_row_sum_kernel(const ValueT* w, const IndptrT* indptr, ValueT* y, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  ValueT sum = ValueT(0);
  for (IndptrT k = indptr[row]; k < indptr[row + 1]; ++k) sum += w[k];
  y[row] = sum;
}

// Device-side use of the checks and the Tensor accessors.
__global__ void tensor_on_device(BE::Tensor x) {
  BE_CHECK(x.ndim() == 1) << "rank";
  if (threadIdx.x == 0 && x.numel() > 0) x.data_ptr<float>()[0] = float(x.size(0) + x.stride(0));
}

template <typename IndexT, typename OffsetT>
__global__ void pair_kernel(const IndexT* a, const OffsetT* b, OffsetT* out) {
  out[threadIdx.x] = static_cast<OffsetT>(a[threadIdx.x]) + b[threadIdx.x];
}

template <typename T>
__global__ void half_kernel(T* x) {
  x[threadIdx.x] = x[threadIdx.x];
}

void csr_row_sum(const BE::Tensor w, const BE::Tensor indices, const BE::Tensor indptr,
                 BE::Tensor y, int64_t stream) {
  BE_CHECK_CSR_INDICES_INT32(indices);
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  int rows = static_cast<int>(y.numel());
  BE_DISPATCH_FLOATING(w.dtype(), ValueT, {
    BE_DISPATCH_CSR_INDPTR(indptr.dtype(), IndptrT, {
      csr_row_sum_kernel<IndptrT, ValueT><<<(rows + 127) / 128, 128, 0, s>>>(
          w.data_ptr<const ValueT>(), indptr.data_ptr<const IndptrT>(), y.data_ptr<ValueT>(), rows);
      BE_CHECK_KERNEL_LAUNCH();
    });
  });
}

void pair_sum(const BE::Tensor a, const BE::Tensor b, BE::Tensor out, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  BE_DISPATCH_SIGNED_INDEX_PAIR(a.dtype(), b.dtype(), IndexT, OffsetT, {
    pair_kernel<IndexT, OffsetT><<<1, 32, 0, s>>>(
        a.data_ptr<const IndexT>(), b.data_ptr<const OffsetT>(), out.data_ptr<OffsetT>());
  });
  BE_DISPATCH_SIGNED_INDEX(a.dtype(), IndexT, { BE_CHECK(sizeof(IndexT) >= 4); });
  BE_CUDA_CHECK(cudaGetLastError());
}

void every_dtype(BE::Tensor x, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  BE_DISPATCH_FLOATING_AND_HALF(x.dtype(), T,
                                { half_kernel<T><<<1, 32, 0, s>>>(x.data_ptr<T>()); });
  BE_DISPATCH_ALL(x.dtype(), T, { half_kernel<T><<<1, 32, 0, s>>>(x.data_ptr<T>()); });
  BE_DISPATCH_ALL_TYPES(x.dtype(), T, { half_kernel<T><<<1, 32, 0, s>>>(x.data_ptr<T>()); });
  BE_DISPATCH_INTEGRAL(x.dtype(), T, { half_kernel<T><<<1, 32, 0, s>>>(x.data_ptr<T>()); });
  BE_DISPATCH_COMPLEX(x.dtype(), T, { BE_CHECK(sizeof(T) >= 8) << BE::dtype_name(x.dtype()); });
  tensor_on_device<<<1, 1, 0, s>>>(x);
  BE_CHECK_KERNEL_LAUNCH_SYNC();
  static_assert(sizeof(BE::float16_t) == 2 && sizeof(BE::bfloat16_t) == 2, "half types");
  static_assert(sizeof(BE::complex64_t) == 8 && sizeof(BE::complex128_t) == 16, "complex");
  static_assert(BE::kMaxDim == 8, "kMaxDim");
  BE_CHECK(BE::dtype_size(x.dtype()) == x.element_size());
}

#ifdef WITH_XLA_HEADERS
// A hand-written typed XLA handler, as brainevent 0.3's hybrid CSR sources write their own
// ffi::Error paths.
xla::ffi::Error typed_handler(xla::ffi::AnyBuffer in) {
  BE::Tensor t = BE::internal::buffer_to_tensor(in);
  if (BE::xla_to_jkb_dtype(in.element_type()) != t.dtype()) {
    return xla::ffi::Error::Internal("dtype mismatch");
  }
  return xla::ffi::Error::Success();
}
#endif

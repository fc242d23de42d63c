// brainevent compatibility: the BE_DISPATCH_* macros of brainevent 0.3 (and BE::float16_t,
// bfloat16_t, complex64_t, complex128_t through the BE = jaxcc alias).
//
// Same contract as jaxcc/dispatch.h: the body runs inside an immediately invoked [&] lambda with
// `using T = <type>;` in scope, and a dtype outside the set throws BE::DTypeError (a
// BE::CheckError in brainevent; both reach Python as an exception naming the dtype).
#pragma once

#include "brainevent/check.h"
#include "brainevent/tensor.h"
#include "jaxcc/dispatch.h"

#define BE_DISPATCH_FLOATING(...) JAXCC_DISPATCH_FLOATING(__VA_ARGS__)
#define BE_DISPATCH_INTEGRAL(...) JAXCC_DISPATCH_INTEGRAL(__VA_ARGS__)
#define BE_DISPATCH_ALL_TYPES(...) JAXCC_DISPATCH_ALL_TYPES(__VA_ARGS__)
#define BE_DISPATCH_ALL(...) JAXCC_DISPATCH_ALL(__VA_ARGS__)
#define BE_DISPATCH_COMPLEX(...) JAXCC_DISPATCH_COMPLEX(__VA_ARGS__)

#if JAXCC_HAS_CUDA_HALF
#define BE_DISPATCH_FLOATING_AND_HALF(...) JAXCC_DISPATCH_FLOATING_AND_HALF(__VA_ARGS__)
#else
// brainevent dispatched float16/bfloat16 only under CUDA and made this an alias of FLOATING
// elsewhere; keep that, so host bodies that do arithmetic on the type still compile (a half
// input now throws BE::DTypeError instead of aborting).
#define BE_DISPATCH_FLOATING_AND_HALF(...) JAXCC_DISPATCH_FLOATING(__VA_ARGS__)
#endif

// The index macros of brainevent 0.3's sparse kernels. They are spelled out here (not forwarded
// to JAXCC_DISPATCH_INDEX) so that the error names the macro the kernel source actually used.

/// Signed index arrays (CSR indices, offsets): int32 → std::int32_t, int64 → std::int64_t.
#define BE_DISPATCH_SIGNED_INDEX(DTYPE_, TYPE_, ...)                  \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)                                 \
  JAXCC_DETAIL_DISPATCH_CASE(Int32, std::int32_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(Int64, std::int64_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_END("BE_DISPATCH_SIGNED_INDEX", "int32, int64")

/// CSR row pointers (indptr): int32 → std::int32_t, int64 → std::int64_t. brainevent's CUDA CSR
/// kernels keep the column indices int32 (BE_CHECK_CSR_INDICES_INT32) and let indptr vary.
#define BE_DISPATCH_CSR_INDPTR(DTYPE_, TYPE_, ...)                    \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)                                 \
  JAXCC_DETAIL_DISPATCH_CASE(Int32, std::int32_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(Int64, std::int64_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_END("BE_DISPATCH_CSR_INDPTR", "int32, int64")

/// Two signed index dtypes at once (e.g. indices and offsets): the body sees both aliases, one
/// of the four int32/int64 combinations. The first dtype is checked first.
#define BE_DISPATCH_SIGNED_INDEX_PAIR(INDEX_DTYPE_, OFFSET_DTYPE_, INDEX_TYPE_, OFFSET_TYPE_, ...) \
  BE_DISPATCH_SIGNED_INDEX(INDEX_DTYPE_, INDEX_TYPE_, {                                            \
    BE_DISPATCH_SIGNED_INDEX(OFFSET_DTYPE_, OFFSET_TYPE_, __VA_ARGS__);                            \
  })

/// Throws BE::CheckError unless the tensor's dtype is int32 (brainevent's CUDA CSR kernels read
/// column indices as int32 only); the message names the dtype it got.
#define BE_CHECK_CSR_INDICES_INT32(TENSOR_)                            \
  do {                                                                 \
    const ::jaxcc::DType jaxcc_csr_indices_dtype_ = (TENSOR_).dtype(); \
    BE_CHECK(jaxcc_csr_indices_dtype_ == ::jaxcc::DType::Int32)        \
        << "CSR CUDA kernels require int32 indices, got "              \
        << ::jaxcc::dtype_name(jaxcc_csr_indices_dtype_);              \
  } while (0)

// C++ types bound by the dispatch macros for the 16-bit float and complex dtypes.
#pragma once

#include <cstdint>

#include "jaxcc/macros.h"

// Native CUDA half types whenever the CUDA runtime is visible (nvcc, or <cuda_runtime.h> already
// included), so kernels can do arithmetic on them; otherwise 16-bit storage-only structs.
#if JAXCC_HAS_CUDA_RUNTIME && __has_include(<cuda_fp16.h>) && __has_include(<cuda_bf16.h>)
#define JAXCC_HAS_CUDA_HALF 1
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#else
#define JAXCC_HAS_CUDA_HALF 0
#endif

// std::complex everywhere, as XLA's own headers use for C64/C128. Under nvcc its operators are
// host-only; device code can reinterpret the data as cuda::std::complex or thrust::complex (same
// layout). libcu++'s <cuda/std/complex> is not included here: it adds ~3 s to every nvcc compile.
// A generated kernel unit whose source names no complex type or all-types dispatch defines
// JAXCC_DETAIL_NO_STD_COMPLEX (codegen/kernel_unit.cc): std::complex is then only declared, as
// libstdc++ declares it itself, so the aliases below name it without parsing <complex> (and the
// <sstream> it pulls) once per architecture and once for the host (decision 108). Any later
// #include <complex> completes the same template.
#if defined(JAXCC_DETAIL_NO_STD_COMPLEX) && defined(__GLIBCXX__) && \
    defined(_GLIBCXX_BEGIN_NAMESPACE_VERSION)
#define JAXCC_DETAIL_STD_COMPLEX_DECLARED_ONLY 1
// clang-format off
namespace std _GLIBCXX_VISIBILITY(default) {
_GLIBCXX_BEGIN_NAMESPACE_VERSION
template <typename _Tp>
class complex;
_GLIBCXX_END_NAMESPACE_VERSION
}  // namespace std
// clang-format on
#else
#define JAXCC_DETAIL_STD_COMPLEX_DECLARED_ONLY 0
#include <complex>
#endif

namespace jaxcc {

/// IEEE binary16 storage when no CUDA half type is available: the raw bits, no arithmetic.
struct Float16Bits {
  std::uint16_t bits;
};

/// bfloat16 storage when no CUDA bfloat16 type is available: the raw bits, no arithmetic.
struct BFloat16Bits {
  std::uint16_t bits;
};

#if JAXCC_HAS_CUDA_HALF
/// Element type of DType::Float16: `__half` under CUDA.
using float16_t = __half;
/// Element type of DType::BFloat16: `__nv_bfloat16` under CUDA.
using bfloat16_t = __nv_bfloat16;
#else
/// Element type of DType::Float16: raw bits (jaxcc::Float16Bits) without CUDA.
using float16_t = Float16Bits;
/// Element type of DType::BFloat16: raw bits (jaxcc::BFloat16Bits) without CUDA.
using bfloat16_t = BFloat16Bits;
#endif

/// Element type of DType::Complex64.
using complex64_t = std::complex<float>;
/// Element type of DType::Complex128.
using complex128_t = std::complex<double>;

static_assert(sizeof(float16_t) == 2 && sizeof(bfloat16_t) == 2, "16-bit float types");
#if !JAXCC_DETAIL_STD_COMPLEX_DECLARED_ONLY
static_assert(sizeof(complex64_t) == 8 && sizeof(complex128_t) == 16, "complex types");
#endif

}  // namespace jaxcc

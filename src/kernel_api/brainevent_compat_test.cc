// Kernel code written against brainevent's headers compiles and behaves the same against jaxcc.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "brainevent/common.h"

namespace {

// Shaped like brainevent's CPU tutorial kernels: BE::Tensor by value, raw data_ptr() casts.
void vector_add(const BE::Tensor a, const BE::Tensor b, BE::Tensor out, int64_t stream) {
  (void)stream;
  BE_CHECK(a.numel() == b.numel()) << "size mismatch: " << a.numel() << " vs " << b.numel();
  int n = a.numel();
  const float* pa = static_cast<const float*>(a.data_ptr());
  const float* pb = static_cast<const float*>(b.data_ptr());
  float* po = static_cast<float*>(out.data_ptr());
  for (int i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
}

template <class T>
void Twice(BE::Tensor x) {
  T* p = x.data_ptr<T>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<T>(p[i] * 2);
}

TEST(BraineventCompatTest, NamespaceAliasesJaxcc) {
  static_assert(std::is_same_v<BE::Tensor, jaxcc::Tensor>);
  static_assert(std::is_same_v<BE::CheckError, jaxcc::CheckError>);
  static_assert(std::is_same_v<BE::CudaError, jaxcc::CudaError>);
  static_assert(std::is_same_v<BE::float16_t, jaxcc::float16_t>);
  static_assert(std::is_same_v<BE::bfloat16_t, jaxcc::bfloat16_t>);
  static_assert(std::is_same_v<BE::complex64_t, jaxcc::complex64_t>);
  static_assert(BE::kMaxDim == 8);
  static_assert(BE::dtype_size(BE::DType::Float16) == 2);
  EXPECT_STREQ(BE::dtype_name(BE::DType::Int8), "int8");
}

TEST(BraineventCompatTest, TutorialKernelRuns) {
  float a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, out[3] = {};
  const int64_t shape[1] = {3};
  vector_add(BE::Tensor(a, shape, 1, BE::DType::Float32),
             BE::Tensor(b, shape, 1, BE::DType::Float32),
             BE::Tensor(out, shape, 1, BE::DType::Float32), 0);
  EXPECT_EQ(out[2], 33.0f);
}

TEST(BraineventCompatTest, BeCheckThrowsCheckError) {
  float a[3] = {}, b[2] = {};
  const int64_t three[1] = {3}, two[1] = {2};
  try {
    vector_add(BE::Tensor(a, three, 1, BE::DType::Float32),
               BE::Tensor(b, two, 1, BE::DType::Float32),
               BE::Tensor(a, three, 1, BE::DType::Float32), 0);
    FAIL() << "BE_CHECK did not throw";
  } catch (const BE::CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("a.numel() == b.numel(): size mismatch: 3 vs 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(BraineventCompatTest, DispatchAliases) {
  double d[2] = {1, 2};
  int32_t i[2] = {3, 4};
  const int64_t shape[1] = {2};
  BE::Tensor x(d, shape, 1, BE::DType::Float64);
  BE::Tensor y(i, shape, 1, BE::DType::Int32);
  BE_DISPATCH_FLOATING(x.dtype(), T, { Twice<T>(x); });
  BE_DISPATCH_ALL_TYPES(y.dtype(), T, { Twice<T>(y); });
  BE_DISPATCH_INTEGRAL(y.dtype(), T, { Twice<T>(y); });
  BE_DISPATCH_ALL(x.dtype(), T, { static_assert(sizeof(T) > 0); });
  EXPECT_EQ(d[1], 4.0);
  EXPECT_EQ(i[1], 16);
  // Without CUDA, brainevent's FLOATING_AND_HALF is FLOATING: arithmetic bodies still compile,
  // and a half input is rejected with an exception instead of abort().
  BE_DISPATCH_FLOATING_AND_HALF(x.dtype(), T, { Twice<T>(x); });
  EXPECT_EQ(d[1], 8.0);
  EXPECT_THROW(BE_DISPATCH_FLOATING_AND_HALF(BE::DType::Float16, T, { Twice<T>(x); }),
               BE::DTypeError);
  EXPECT_THROW(BE_DISPATCH_INTEGRAL(x.dtype(), T, { Twice<T>(x); }), jaxcc::DTypeError);
}

TEST(BraineventCompatTest, CudaMacrosAreOnlyDefinedWithCuda) {
#if defined(JAXCC_CUDA_CHECK) || defined(JAXCC_CHECK_KERNEL_LAUNCH)
  FAIL() << "CUDA macros defined in a host-only build";
#endif
  // The BE_ spellings exist regardless; they expand to the JAXCC_ ones at the point of use.
#if !defined(BE_CUDA_CHECK) || !defined(BE_CHECK_KERNEL_LAUNCH) || \
    !defined(BE_CHECK_KERNEL_LAUNCH_SYNC)
  FAIL() << "brainevent CUDA macro names missing";
#endif
}

}  // namespace

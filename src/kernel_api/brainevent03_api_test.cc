// brainevent 0.3's additions to the kernel-header API: the sparse-index dispatch macros,
// BE_CHECK_CSR_INDICES_INT32, BE_DISPATCH_COMPLEX, and the XLA-facing dtypes.h/ffi_compat.h.
// Kernels shaped like brainevent 0.3's CSR operators run on the CPU against jaxcc's headers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "brainevent/common.h"

namespace {

// y[row] = sum of w over the row's columns, with indptr of either index width: the pattern of
// brainevent 0.3's CSR mat-vec entry points (indices int32 only, indptr dispatched).
void csr_row_sums(const BE::Tensor w, const BE::Tensor indices, const BE::Tensor indptr,
                  BE::Tensor y) {
  BE_CHECK_CSR_INDICES_INT32(indices);
  BE_DISPATCH_CSR_INDPTR(indptr.dtype(), IndptrT, {
    const IndptrT* ptr = indptr.data_ptr<const IndptrT>();
    const float* values = w.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t row = 0; row + 1 < indptr.numel(); ++row) {
      float sum = 0;
      for (IndptrT k = ptr[row]; k < ptr[row + 1]; ++k) sum += values[k];
      out[row] = sum;
    }
  });
}

// Returns sizeof(IndexT) * 10 + sizeof(OffsetT): which pair of types the dispatch chose.
int PairWidths(BE::DType index, BE::DType offset) {
  int widths = 0;
  BE_DISPATCH_SIGNED_INDEX_PAIR(index, offset, IndexT, OffsetT, {
    static_assert(std::is_signed_v<IndexT> && std::is_signed_v<OffsetT>);
    widths = static_cast<int>(sizeof(IndexT)) * 10 + static_cast<int>(sizeof(OffsetT));
  });
  return widths;
}

template <class Fn>
std::string MessageOf(Fn fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Brainevent03ApiTest, CsrIndptrDispatchRunsBothWidths) {
  float w[5] = {1, 2, 3, 4, 5};
  int32_t indices[5] = {0, 1, 0, 1, 2};
  int32_t indptr32[3] = {0, 2, 5};
  int64_t indptr64[3] = {0, 2, 5};
  float y[2] = {};
  const int64_t five[1] = {5}, three[1] = {3}, two[1] = {2};
  BE::Tensor tw(w, five, 1, BE::DType::Float32), ti(indices, five, 1, BE::DType::Int32);
  BE::Tensor ty(y, two, 1, BE::DType::Float32);
  csr_row_sums(tw, ti, BE::Tensor(indptr32, three, 1, BE::DType::Int32), ty);
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], 12.0f);
  y[0] = y[1] = 0;
  csr_row_sums(tw, ti, BE::Tensor(indptr64, three, 1, BE::DType::Int64), ty);
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], 12.0f);

  // An unsigned or floating indptr is refused, naming the macro and the dtype.
  std::string message = MessageOf(
      [&] { csr_row_sums(tw, ti, BE::Tensor(indptr32, three, 1, BE::DType::UInt32), ty); });
  EXPECT_NE(message.find("BE_DISPATCH_CSR_INDPTR"), std::string::npos) << message;
  EXPECT_NE(message.find("uint32"), std::string::npos) << message;
  EXPECT_THROW(csr_row_sums(tw, ti, BE::Tensor(indptr32, three, 1, BE::DType::Float32), ty),
               BE::DTypeError);
}

TEST(Brainevent03ApiTest, CheckCsrIndicesInt32RefusesOtherWidths) {
  int64_t indices[2] = {0, 1};
  const int64_t two[1] = {2};
  BE::Tensor wide(indices, two, 1, BE::DType::Int64);
  std::string message = MessageOf([&] { BE_CHECK_CSR_INDICES_INT32(wide); });
  EXPECT_NE(message.find("require int32 indices, got int64"), std::string::npos) << message;
  EXPECT_THROW(BE_CHECK_CSR_INDICES_INT32(wide), BE::CheckError);
  BE::Tensor narrow(indices, two, 1, BE::DType::Int32);
  EXPECT_NO_THROW(BE_CHECK_CSR_INDICES_INT32(narrow));
  // The tensor expression is evaluated once.
  int evaluations = 0;
  BE_CHECK_CSR_INDICES_INT32((++evaluations, narrow));
  EXPECT_EQ(evaluations, 1);
}

TEST(Brainevent03ApiTest, SignedIndexDispatchesAndPairs) {
  int width = 0;
  BE_DISPATCH_SIGNED_INDEX(BE::DType::Int64, T, { width = sizeof(T); });
  EXPECT_EQ(width, 8);
  BE_DISPATCH_SIGNED_INDEX(BE::DType::Int32, T, { width = sizeof(T); });
  EXPECT_EQ(width, 4);
  EXPECT_EQ(PairWidths(BE::DType::Int32, BE::DType::Int32), 44);
  EXPECT_EQ(PairWidths(BE::DType::Int32, BE::DType::Int64), 48);
  EXPECT_EQ(PairWidths(BE::DType::Int64, BE::DType::Int32), 84);
  EXPECT_EQ(PairWidths(BE::DType::Int64, BE::DType::Int64), 88);
  // Each side is checked: a bad offset dtype is reported by name even when the index is fine.
  std::string message = MessageOf([] { PairWidths(BE::DType::Int32, BE::DType::Int16); });
  EXPECT_NE(message.find("BE_DISPATCH_SIGNED_INDEX"), std::string::npos) << message;
  EXPECT_NE(message.find("int16"), std::string::npos) << message;
  EXPECT_THROW(PairWidths(BE::DType::UInt64, BE::DType::Int32), BE::DTypeError);
}

TEST(Brainevent03ApiTest, ComplexDispatch) {
  int width = 0;
  bool is_complex128 = false;
  BE_DISPATCH_COMPLEX(BE::DType::Complex128, T, {
    is_complex128 = std::is_same_v<T, BE::complex128_t>;
    width = sizeof(T);
  });
  EXPECT_TRUE(is_complex128);
  EXPECT_EQ(width, 16);
  EXPECT_THROW(BE_DISPATCH_COMPLEX(BE::DType::Float32, T, { width = sizeof(T); }), BE::DTypeError);
}

}  // namespace

#if __has_include("xla/ffi/api/ffi.h")
#include "brainevent/dtypes.h"
#include "brainevent/ffi_compat.h"

namespace {

namespace ffi = ::xla::ffi;

TEST(Brainevent03ApiTest, XlaToJkbDtypeMapsLikeBrainevent) {
  EXPECT_EQ(BE::xla_to_jkb_dtype(ffi::DataType::F32), BE::DType::Float32);
  EXPECT_EQ(BE::xla_to_jkb_dtype(ffi::DataType::PRED), BE::DType::Bool);
  EXPECT_EQ(BE::xla_to_jkb_dtype(ffi::DataType::BF16), BE::DType::BFloat16);
  EXPECT_EQ(BE::xla_to_jkb_dtype(ffi::DataType::C128), BE::DType::Complex128);
  EXPECT_EQ(BE::xla_to_jkb_dtype(ffi::DataType::F8E5M2), BE::DType::Invalid);
}

TEST(Brainevent03ApiTest, BufferToTensorViewsXlaBuffers) {
  int32_t data[6] = {};
  int64_t dims[2] = {2, 3};
  XLA_FFI_Buffer raw{};
  raw.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  raw.dtype = XLA_FFI_DataType_S32;
  raw.data = data;
  raw.rank = 2;
  raw.dims = dims;
  BE::Tensor t = BE::internal::buffer_to_tensor(ffi::AnyBuffer(&raw));
  EXPECT_EQ(t.data_ptr(), data);
  EXPECT_EQ(t.dtype(), BE::DType::Int32);
  EXPECT_EQ(t.stride(0), 3);
  BE::Tensor r =
      BE::internal::result_buffer_to_tensor(ffi::Result<ffi::AnyBuffer>(ffi::AnyBuffer(&raw)));
  EXPECT_EQ(r.numel(), 6);
  // brainevent throws std::invalid_argument here; jaxcc's DTypeError is also a std::exception.
  raw.dtype = XLA_FFI_DataType_F8E5M2;
  EXPECT_THROW(BE::internal::buffer_to_tensor(ffi::AnyBuffer(&raw)), BE::DTypeError);
}

}  // namespace
#endif

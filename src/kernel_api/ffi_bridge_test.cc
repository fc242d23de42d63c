// jaxcc/detail/ffi_bridge.h against real XLA FFI headers: buffers built from XLA_FFI_Buffer.
#include <gtest/gtest.h>

#if __has_include("xla/ffi/api/ffi.h")

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "jaxcc/detail/ffi_bridge.h"
#include "xla/ffi/api/ffi.h"

namespace jaxcc::detail {
namespace {

namespace ffi = ::xla::ffi;

XLA_FFI_Buffer MakeBuffer(XLA_FFI_DataType dtype, void* data, std::int64_t* dims,
                          std::int64_t rank) {
  XLA_FFI_Buffer buffer{};
  buffer.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  buffer.extension_start = nullptr;
  buffer.dtype = dtype;
  buffer.data = data;
  buffer.rank = rank;
  buffer.dims = dims;
  return buffer;
}

TEST(FfiBridgeTest, MapsEverySupportedXlaType) {
  EXPECT_EQ(DTypeFromXla(ffi::DataType::F16), DType::Float16);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::F32), DType::Float32);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::F64), DType::Float64);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::BF16), DType::BFloat16);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::S8), DType::Int8);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::S16), DType::Int16);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::S32), DType::Int32);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::S64), DType::Int64);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::U8), DType::UInt8);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::U16), DType::UInt16);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::U32), DType::UInt32);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::U64), DType::UInt64);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::PRED), DType::Bool);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::C64), DType::Complex64);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::C128), DType::Complex128);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::F8E5M2), DType::Invalid);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::S4), DType::Invalid);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::TOKEN), DType::Invalid);
  EXPECT_EQ(DTypeFromXla(ffi::DataType::INVALID), DType::Invalid);
}

TEST(FfiBridgeTest, TensorFromBufferKeepsDataShapeAndType) {
  float data[6] = {};
  std::int64_t dims[2] = {2, 3};
  XLA_FFI_Buffer raw = MakeBuffer(XLA_FFI_DataType_F32, data, dims, 2);
  Tensor t = TensorFromBuffer(ffi::AnyBuffer(&raw));
  EXPECT_EQ(t.data_ptr(), data);
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.ndim(), 2);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(1), 3);
  EXPECT_EQ(t.stride(0), 3);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_TRUE(t.is_contiguous());
}

TEST(FfiBridgeTest, TensorFromBufferHandlesRankZeroAndEmptyArrays) {
  double scalar = 0;
  XLA_FFI_Buffer raw = MakeBuffer(XLA_FFI_DataType_F64, &scalar, nullptr, 0);
  Tensor t = TensorFromBuffer(ffi::AnyBuffer(&raw));
  EXPECT_EQ(t.ndim(), 0);
  EXPECT_EQ(t.numel(), 1);

  std::int64_t dims[2] = {0, 4};
  XLA_FFI_Buffer empty = MakeBuffer(XLA_FFI_DataType_PRED, nullptr, dims, 2);
  Tensor e = TensorFromBuffer(ffi::AnyBuffer(&empty));
  EXPECT_EQ(e.dtype(), DType::Bool);
  EXPECT_EQ(e.numel(), 0);
}

TEST(FfiBridgeTest, TensorFromResultViewsTheOutput) {
  std::int32_t data[4] = {};
  std::int64_t dims[1] = {4};
  XLA_FFI_Buffer raw = MakeBuffer(XLA_FFI_DataType_S32, data, dims, 1);
  ffi::Result<ffi::AnyBuffer> result{ffi::AnyBuffer(&raw)};
  Tensor t = TensorFromResult(result);
  EXPECT_EQ(t.data_ptr(), data);
  EXPECT_EQ(t.dtype(), DType::Int32);
  EXPECT_EQ(t.numel(), 4);
}

TEST(FfiBridgeTest, UnsupportedTypeRaisesDTypeErrorNamingIt) {
  std::int64_t dims[1] = {8};
  XLA_FFI_Buffer raw = MakeBuffer(XLA_FFI_DataType_F8E5M2, nullptr, dims, 1);
  try {
    TensorFromBuffer(ffi::AnyBuffer(&raw), "x");
    FAIL() << "float8 accepted";
  } catch (const DTypeError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("parameter 'x' has element type float8_e5m2"), std::string::npos)
        << message;
    EXPECT_NE(message.find("astype"), std::string::npos) << message;
  }
  XLA_FFI_Buffer int4 = MakeBuffer(XLA_FFI_DataType_S4, nullptr, dims, 1);
  EXPECT_THROW(TensorFromBuffer(ffi::AnyBuffer(&int4)), DTypeError);
}

TEST(FfiBridgeTest, RankAboveLimitRaisesCheckError) {
  std::int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
  XLA_FFI_Buffer raw = MakeBuffer(XLA_FFI_DataType_F32, nullptr, dims, 9);
  try {
    ffi::Result<ffi::AnyBuffer> result{ffi::AnyBuffer(&raw)};
    TensorFromResult(result, "out");
    FAIL() << "rank 9 accepted";
  } catch (const CheckError& e) {
    EXPECT_STREQ(e.what(),
                 "parameter 'out' has rank 9, above the jaxcc::Tensor limit of 8 dimensions "
                 "(jaxcc::kMaxDim); reshape it to at most 8 dimensions before the call");
  }
}

// The message is built out of line (ThrowBufferError) only once a check fails: same text without
// a name, and the element type is still reported before the rank.
TEST(FfiBridgeTest, ErrorTextWithoutANameAndCheckOrderAreUnchanged) {
  std::int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
  XLA_FFI_Buffer deep = MakeBuffer(XLA_FFI_DataType_F32, nullptr, dims, 9);
  try {
    TensorFromBuffer(ffi::AnyBuffer(&deep));
    FAIL() << "rank 9 accepted";
  } catch (const CheckError& e) {
    EXPECT_STREQ(e.what(),
                 "a buffer has rank 9, above the jaxcc::Tensor limit of 8 dimensions "
                 "(jaxcc::kMaxDim); reshape it to at most 8 dimensions before the call");
  }
  XLA_FFI_Buffer both = MakeBuffer(XLA_FFI_DataType_F8E5M2, nullptr, dims, 9);
  try {
    TensorFromBuffer(ffi::AnyBuffer(&both), "y");
    FAIL() << "float8 of rank 9 accepted";
  } catch (const DTypeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("parameter 'y' has element type float8_e5m2, which", 0),
              0u)
        << e.what();
  }
}

// Throws `exception` and returns what ErrorFromCurrentException makes of it.
template <class E>
ffi::Error Classify(E exception) {
  try {
    throw exception;
  } catch (...) {
    return ErrorFromCurrentException("my_kernel");
  }
}

void ExpectError(const ffi::Error& error, ffi::ErrorCode code, const std::string& message) {
  ASSERT_TRUE(error.failure());
  ASSERT_TRUE(error.errc().has_value());
  EXPECT_EQ(static_cast<int>(*error.errc()), static_cast<int>(code)) << error.message();
  EXPECT_EQ(error.message(), message);
}

TEST(FfiBridgeTest, ClassifiesInputErrorsAsInvalidArgument) {
  ExpectError(Classify(CheckError("CHECK failed at k.cc:3: n > 0")),
              ffi::ErrorCode::kInvalidArgument, "my_kernel: CHECK failed at k.cc:3: n > 0");
  ExpectError(Classify(DTypeError("unsupported dtype int8")), ffi::ErrorCode::kInvalidArgument,
              "my_kernel: unsupported dtype int8");
  ExpectError(Classify(std::invalid_argument("bad")), ffi::ErrorCode::kInvalidArgument,
              "my_kernel: bad");
  ExpectError(Classify(std::out_of_range("index")), ffi::ErrorCode::kInvalidArgument,
              "my_kernel: index");
  ExpectError(Classify(std::domain_error("sqrt(-1)")), ffi::ErrorCode::kInvalidArgument,
              "my_kernel: sqrt(-1)");
}

TEST(FfiBridgeTest, ClassifiesKernelFailuresAsInternal) {
  ExpectError(Classify(CudaError("CUDA kernel launch failed", 9)), ffi::ErrorCode::kInternal,
              "my_kernel: CUDA kernel launch failed");
  ExpectError(Classify(Error("plain jaxcc error")), ffi::ErrorCode::kInternal,
              "my_kernel: plain jaxcc error");
  ExpectError(Classify(std::runtime_error("boom")), ffi::ErrorCode::kInternal, "my_kernel: boom");
  ExpectError(Classify(std::overflow_error("big")), ffi::ErrorCode::kInternal, "my_kernel: big");
}

TEST(FfiBridgeTest, ClassifiesOutOfMemoryAndForeignExceptions) {
  const ffi::Error oom = Classify(std::bad_alloc());
  EXPECT_EQ(static_cast<int>(*oom.errc()), static_cast<int>(ffi::ErrorCode::kResourceExhausted));
  EXPECT_EQ(oom.message().rfind("my_kernel: out of host memory", 0), 0u) << oom.message();
  ExpectError(Classify(42), ffi::ErrorCode::kUnknown, "my_kernel: non-standard C++ exception");
  ExpectError(Classify("a C string"), ffi::ErrorCode::kUnknown,
              "my_kernel: non-standard C++ exception");
}

TEST(FfiBridgeTest, OutsideAHandlerReturnsAnErrorInsteadOfTerminating) {
  ExpectError(ErrorFromCurrentException("f"), ffi::ErrorCode::kInternal,
              "f: ErrorFromCurrentException called with no exception being handled");
}

}  // namespace
}  // namespace jaxcc::detail

#else  // no XLA FFI headers

TEST(FfiBridgeTest, SkippedWithoutXlaFfiHeaders) {
  GTEST_SKIP() << "xla/ffi/api/ffi.h not on the include path (jax not installed at configure time)";
}

#endif

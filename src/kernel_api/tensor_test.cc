#include "jaxcc/tensor.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

namespace jaxcc {
namespace {

static_assert(std::is_trivially_copyable_v<Tensor>, "Tensor is passed by value to kernels");
static_assert(std::is_standard_layout_v<Tensor>);
static_assert(Tensor::kMaxDim == 8 && kMaxDim == 8);

// Runs `body`, expecting a CheckError whose message contains `fragment`.
template <class F>
void ExpectCheckError(F body, const std::string& fragment) {
  try {
    body();
    ADD_FAILURE() << "expected jaxcc::CheckError containing: " << fragment;
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TensorTest, DefaultIsAnEmptyInvalidView) {
  Tensor t;
  EXPECT_EQ(t.data_ptr(), nullptr);
  EXPECT_EQ(t.ndim(), 1);
  EXPECT_EQ(t.size(0), 0);
  EXPECT_EQ(t.stride(0), 1);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.dtype(), DType::Invalid);
  EXPECT_EQ(t.element_size(), 0u);
  EXPECT_EQ(t.nbytes(), 0u);
  EXPECT_TRUE(t.is_contiguous());
}

TEST(TensorTest, RankTwoHasCContiguousStrides) {
  float data[6] = {};
  const std::int64_t shape[2] = {2, 3};
  Tensor t(data, shape, 2, DType::Float32);
  EXPECT_EQ(t.data_ptr(), data);
  EXPECT_EQ(t.data(), data);
  EXPECT_EQ(t.data_ptr<float>(), data);
  EXPECT_EQ(t.ndim(), 2);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(1), 3);
  EXPECT_EQ(t.shape(0), 2);
  EXPECT_EQ(t.shape(1), 3);
  EXPECT_EQ(t.stride(0), 3);
  EXPECT_EQ(t.stride(1), 1);
  EXPECT_EQ(t.shape_ptr()[1], 3);
  EXPECT_EQ(t.strides_ptr()[0], 3);
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.element_size(), 4u);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.numel_checked_int(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_TRUE(t.is_contiguous());
}

TEST(TensorTest, CopiesTheShapeArray) {
  std::int64_t shape[1] = {5};
  Tensor t(nullptr, shape, 1, DType::Int8);
  shape[0] = 99;
  EXPECT_EQ(t.size(0), 5);
}

TEST(TensorTest, NegativeIndicesCountFromTheEnd) {
  const std::int64_t shape[3] = {2, 3, 4};
  Tensor t(nullptr, shape, 3, DType::Float64);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.shape(-2), 3);
  EXPECT_EQ(t.size(-3), 2);
  EXPECT_EQ(t.stride(-1), 1);
  EXPECT_EQ(t.stride(-3), 12);
}

TEST(TensorTest, RankZeroHasOneElement) {
  double value = 1.5;
  Tensor t(&value, nullptr, 0, DType::Float64);
  EXPECT_EQ(t.ndim(), 0);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.nbytes(), 8u);
  EXPECT_TRUE(t.is_contiguous());
  ExpectCheckError([&] { (void)t.size(0); }, "a rank-0 tensor has no dimensions");
}

TEST(TensorTest, ZeroExtentMeansNoElements) {
  const std::int64_t shape[3] = {4, 0, 5};
  Tensor t(nullptr, shape, 3, DType::Int32);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.nbytes(), 0u);
  EXPECT_TRUE(t.is_contiguous());
  // As in NumPy, a zero extent does not zero the outer strides.
  EXPECT_EQ(t.stride(2), 1);
  EXPECT_EQ(t.stride(1), 5);
  EXPECT_EQ(t.stride(0), 5);
}

TEST(TensorTest, RankEightIsTheLimit) {
  const std::int64_t shape[8] = {1, 2, 1, 2, 1, 2, 1, 3};
  Tensor t(nullptr, shape, 8, DType::UInt8);
  EXPECT_EQ(t.ndim(), 8);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.stride(7), 1);
  EXPECT_EQ(t.stride(5), 3);
  EXPECT_EQ(t.stride(0), 24);
  EXPECT_EQ(t.size(-8), 1);
}

TEST(TensorTest, RankAboveEightThrows) {
  const std::int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  ExpectCheckError([&] { Tensor t(nullptr, shape, 9, DType::Float32); },
                   "rank 9 is outside the supported range 0..8");
  ExpectCheckError([&] { Tensor t(nullptr, shape, -1, DType::Float32); }, "rank -1");
}

TEST(TensorTest, BadShapesThrow) {
  const std::int64_t negative[2] = {2, -3};
  ExpectCheckError([&] { Tensor t(nullptr, negative, 2, DType::Float32); },
                   "dimension 1 has negative size -3");
  ExpectCheckError([&] { Tensor t(nullptr, nullptr, 2, DType::Float32); }, "shape pointer is null");
}

TEST(TensorTest, OutOfRangeIndexThrowsWithTheValidRange) {
  const std::int64_t shape[2] = {2, 3};
  Tensor t(nullptr, shape, 2, DType::Float32);
  ExpectCheckError([&] { (void)t.size(2); },
                   "jaxcc::Tensor::size(2): dimension index out of range for a rank-2 tensor "
                   "(valid: -2..1)");
  ExpectCheckError([&] { (void)t.shape(-3); }, "shape(-3)");
  ExpectCheckError([&] { (void)t.stride(5); }, "stride(5)");
}

TEST(TensorTest, NumelCheckedIntRejectsHugeCounts) {
  const std::int64_t shape[2] = {1 << 16, 1 << 16};
  Tensor t(nullptr, shape, 2, DType::Bool);
  EXPECT_EQ(t.numel(), std::int64_t{1} << 32);
  ExpectCheckError([&] { (void)t.numel_checked_int(); }, "do not fit in int");
  const std::int64_t fits[1] = {INT_MAX};
  EXPECT_EQ(Tensor(nullptr, fits, 1, DType::Bool).numel_checked_int(), INT_MAX);
}

TEST(TensorTest, ExplicitStridesAreKeptAndCheckedForContiguity) {
  const std::int64_t shape[2] = {3, 2};
  const std::int64_t transposed[2] = {1, 3};
  Tensor t(nullptr, shape, transposed, 2, DType::Float32);
  EXPECT_EQ(t.stride(0), 1);
  EXPECT_EQ(t.stride(1), 3);
  EXPECT_FALSE(t.is_contiguous());
  const std::int64_t dense[2] = {2, 1};
  EXPECT_TRUE(Tensor(nullptr, shape, dense, 2, DType::Float32).is_contiguous());
  // Extent-1 dimensions may carry any stride.
  const std::int64_t column[2] = {3, 1};
  const std::int64_t column_strides[2] = {1, 42};
  EXPECT_TRUE(Tensor(nullptr, column, column_strides, 2, DType::Float32).is_contiguous());
}

TEST(TensorTest, ConstTensorHandsOutItsPointer) {
  int data[3] = {1, 2, 3};
  const std::int64_t shape[1] = {3};
  const Tensor t(data, shape, 1, DType::Int32);
  const int* p = static_cast<const int*>(t.data_ptr());
  EXPECT_EQ(p[2], 3);
  EXPECT_EQ(t.data_ptr<const int>()[1], 2);
}

}  // namespace
}  // namespace jaxcc

// data_ptr<T>()'s dtype check under nvcc: the host side of a .cu throws jaxcc::DTypeError as a
// g++ unit does, with the CUDA half types in the rule; device code compiles unchecked. Built and
// run by nvcc_compile_test.cc (no GPU needed: nothing here touches the device). Exits 0 when every
// expectation holds, else prints the first that did not and exits 1.
#include <cstdio>
#include <cstring>

#include "brainevent/common.h"

__global__ void scale(BE::Tensor x) {
  if (threadIdx.x == 0 && x.numel() > 0) x.data_ptr<float>()[0] *= 2.0f;  // unchecked here
}

template <class T>
bool Throws(const BE::Tensor& t, const char* fragment) {
  try {
    (void)t.data_ptr<T>();
  } catch (const BE::DTypeError& e) {
    if (std::strstr(e.what(), fragment) != nullptr) return true;
    std::printf("message lacks '%s': %s\n", fragment, e.what());
    return false;
  }
  return false;
}

#define EXPECT(condition)                      \
  do {                                         \
    if (!(condition)) {                        \
      std::printf("failed: %s\n", #condition); \
      return 1;                                \
    }                                          \
  } while (0)

int main() {
  std::int64_t shape[1] = {2};
  std::uint16_t bits[2] = {};
  BE::Tensor half(bits, shape, 1, BE::DType::Float16);
  half.set_name("h");
  BE::Tensor bf16(bits, shape, 1, BE::DType::BFloat16);
  bf16.set_name("b");
  EXPECT(half.data_ptr<__half>() == reinterpret_cast<__half*>(bits));
  EXPECT(half.data_ptr<const std::uint16_t>() == bits);
  EXPECT(half.data_ptr<jaxcc::float16_t>() == reinterpret_cast<__half*>(bits));
  EXPECT(bf16.data_ptr<const __nv_bfloat16>() == reinterpret_cast<__nv_bfloat16*>(bits));
  EXPECT(bf16.data_ptr<std::uint16_t>() == bits);
  EXPECT(Throws<__nv_bfloat16>(half, "parameter 'h' is float16"));
  EXPECT(Throws<float>(half, "reads it as float"));
  EXPECT(Throws<__half>(bf16, "parameter 'b' is bfloat16, but the kernel reads it as __half"));
  EXPECT(Throws<std::int16_t>(half, "int16_t"));
  // CUDA's vector types read their element type several at a time, nothing else.
  EXPECT(half.data_ptr<__half2>() == reinterpret_cast<__half2*>(bits));
  EXPECT(Throws<__nv_bfloat162>(half, "reads it as __nv_bfloat162"));
  float floats[4] = {};
  std::int64_t four[1] = {4};
  BE::Tensor f32(floats, four, 1, BE::DType::Float32);
  EXPECT(f32.data_ptr<const float4>() == reinterpret_cast<float4*>(floats));
  EXPECT(f32.data_ptr<float2>() == reinterpret_cast<float2*>(floats));
  EXPECT(Throws<int4>(f32, "reads it as int4"));
  EXPECT(Throws<double2>(f32, "a jaxcc::Tensor is float32"));
  std::printf("ok\n");
  return 0;
}

// Run-time scratch in generated handlers (decision 105): the FrameScratchAllocator of ffi_frame.h
// against a fake XLA_FFI_Api whose device allocator the test controls: blocks freed when the
// call returns (also after an error), refusals reported with the function's name and the size,
// and no allocator for functions that do not take one.
#include <gtest/gtest.h>

#if __has_include("xla/ffi/api/c_api.h")

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "jaxcc/detail/ffi_frame.h"
#include "kernel_api/fake_xla_error_for_test.h"
#include "kernel_api/one_buffer_frame_for_test.h"

namespace jaxcc::detail {
namespace {

// The fake device allocator: refuses requests above `limit`; records every free.
struct Device {
  static inline std::size_t limit = 1 << 20;
  struct Block {
    void* data;
    std::size_t bytes, alignment;
  };
  static inline std::vector<Block> live;
  static inline std::vector<std::size_t> freed;
};

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }
void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  args->message = args->error->message.c_str();
}
XLA_FFI_Error* DeviceAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  if (args->size > Device::limit) return new XLA_FFI_Error{8, "fake device is full"};
  args->data = ::operator new (args->size, std::align_val_t{args->alignment});
  Device::live.push_back({args->data, args->size, args->alignment});
  return nullptr;
}
XLA_FFI_Error* DeviceFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  for (size_t i = 0; i < Device::live.size(); ++i) {
    const Device::Block& block = Device::live[i];
    if (block.data != args->data) continue;
    if (block.bytes != args->size) return new XLA_FFI_Error{3, "wrong size"};
    ::operator delete (args->data, std::align_val_t{block.alignment});
    Device::live.erase(Device::live.begin() + static_cast<std::ptrdiff_t>(i));
    Device::freed.push_back(args->size);
    return nullptr;
  }
  return new XLA_FFI_Error{3, "not allocated"};
}

// One f32[4] argument, one f32[4] result, one int64 attribute `n`, and device memory.
struct Frame : fake_xla::OneBufferFrame {
  Frame() {
    api.XLA_FFI_Error_Destroy = ErrorDestroy;
    api.XLA_FFI_Error_GetMessage = ErrorGetMessage;
    api.XLA_FFI_DeviceMemory_Allocate = DeviceAllocate;
    api.XLA_FFI_DeviceMemory_Free = DeviceFree;
  }
};

constexpr const char* kArgNames[] = {"x"};
constexpr const char* kRetNames[] = {"y"};
constexpr FrameAttr kAttrs[] = {{"n", FrameScalar::kS64, 0}};
constexpr FrameSpec kPlain = {"plain", 1, 1, 1, kArgNames, kRetNames, kAttrs, false, 0};

std::unique_ptr<XLA_FFI_Error> Own(XLA_FFI_Error* e) { return std::unique_ptr<XLA_FFI_Error>(e); }

// What a generated handler does: room for the decoded call on its stack, then the decoder.
XLA_FFI_Error* Handle(XLA_FFI_CallFrame* frame, const FrameSpec& spec, FrameBody body,
                      FrameInstantiate instantiate = nullptr) {
  FrameRoom<1, 1, 1> room;
  return RunFrameWith<NoCallScope>(frame, spec, body, instantiate, room.slots());
}

// Decision 105: a CUDA function's jaxcc::ScratchAllocator takes XLA's device memory and gives
// every block back when the call returns, also when the function failed.
constexpr FrameSpec kDeviceScratch = {"dev",
                                      1,
                                      1,
                                      1,
                                      kArgNames,
                                      kRetNames,
                                      kAttrs,
                                      false,
                                      0,
                                      false,
                                      nullptr,
                                      false,
                                      FrameScratch::kDevice};

TEST(FfiScratch, DeviceScratchIsFreedWhenTheCallReturns) {
  Device::freed.clear();
  Frame f;
  static size_t live_inside;
  ASSERT_EQ(Own(Handle(&f.frame, kDeviceScratch,
                       [](auto& call) {
                         ScratchAllocator& a = *call.context->allocator;
                         float* p = a.allocate_array<float>(100);
                         void* q = a.allocate(4096, 256);
                         EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
                         EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 256, 0u);
                         EXPECT_EQ(a.allocate(0), nullptr);
                         live_inside = Device::live.size();
                       })),
            nullptr);
  EXPECT_EQ(live_inside, 2u);
  EXPECT_TRUE(Device::live.empty());
  EXPECT_EQ(Device::freed, (std::vector<std::size_t>{400, 4096}));
}

TEST(FfiScratch, RefusedDeviceScratchIsAnErrorNamingTheFunctionAndTheSize) {
  Device::freed.clear();
  Frame f;
  auto error = Own(Handle(&f.frame, kDeviceScratch, [](auto& call) {
    call.context->allocator->allocate(1000);
    call.context->allocator->allocate(Device::limit + 1, 64);
  }));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(error->message,
            "dev: jaxcc::ScratchAllocator: allocating 1048577 bytes (alignment 64) failed: "
            "XLA's allocator: fake device is full");
  EXPECT_TRUE(Device::live.empty());  // the first block was still given back
  EXPECT_EQ(Device::freed, (std::vector<std::size_t>{1000}));
  auto cap = Own(Handle(&f.frame, kDeviceScratch, [](auto& call) {
    call.context->allocator->allocate(kMaxScratchBytes + 1);
  }));
  ASSERT_NE(cap, nullptr);
  EXPECT_NE(cap->message.find("dev: jaxcc::ScratchAllocator: 17179869185 bytes asked for, above "
                              "jaxcc.MAX_SCRATCH_BYTES (17179869184)"),
            std::string::npos)
      << cap->message;
}

TEST(FfiScratch, OnlyAFunctionWithAnAllocatorParameterGetsOne) {
  Frame f;
  static ScratchAllocator* seen;
  seen = reinterpret_cast<ScratchAllocator*>(1);
  ASSERT_EQ(Own(Handle(&f.frame, kPlain, [](auto& call) { seen = call.context->allocator; })),
            nullptr);
  EXPECT_EQ(seen, nullptr);
}

}  // namespace
}  // namespace jaxcc::detail

#else
TEST(FfiScratch, SkippedWithoutXlaFfiHeaders) {
  GTEST_SKIP() << "jax.ffi.include_dir() was not found at configure time";
}
#endif

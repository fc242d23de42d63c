// The call frame the decoder tests decode: one f32[4] argument {1, 2, 3, 4}, one f32[4] result
// and, unless asked without, one int64 attribute `n` = 5, over a fake XLA_FFI_Api that only
// creates errors; each test adds the API entry points it exercises. Not copyable: the frame
// points into itself.
#pragma once

#include <cstdint>

#include "kernel_api/fake_xla_error_for_test.h"

namespace jaxcc::detail::fake_xla {

enum class Attribute { kN, kNone };

struct OneBufferFrame {
  XLA_FFI_Api api{};
  std::int64_t dims[1] = {4};
  float data[4] = {1, 2, 3, 4};
  float out[4] = {};
  XLA_FFI_Buffer in{}, result{};
  XLA_FFI_ArgType arg_type = XLA_FFI_ArgType_BUFFER;
  XLA_FFI_RetType ret_type = XLA_FFI_RetType_BUFFER;
  void* args[1] = {&in};
  void* rets[1] = {&result};
  std::int64_t n = 5;
  XLA_FFI_Scalar n_scalar{XLA_FFI_DataType_S64, &n};
  XLA_FFI_ByteSpan n_name{"n", 1};
  XLA_FFI_AttrType attr_type = XLA_FFI_AttrType_SCALAR;
  XLA_FFI_ByteSpan* attr_names[1] = {&n_name};
  void* attrs[1] = {&n_scalar};
  XLA_FFI_CallFrame frame{};

  explicit OneBufferFrame(Attribute attribute = Attribute::kN,
                          XLA_FFI_ExecutionStage stage = XLA_FFI_ExecutionStage_EXECUTE) {
    api.XLA_FFI_Error_Create = ErrorCreate;
    for (XLA_FFI_Buffer* b : {&in, &result}) {
      b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
      b->dtype = XLA_FFI_DataType_F32;
      b->rank = 1;
      b->dims = dims;
    }
    in.data = data;
    result.data = out;
    frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame.api = &api;
    frame.stage = stage;
    frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, 1, &arg_type, args};
    frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 1, &ret_type, rets};
    frame.attrs =
        attribute == Attribute::kN
            ? XLA_FFI_Attrs{XLA_FFI_Attrs_STRUCT_SIZE, nullptr, 1, &attr_type, attr_names, attrs}
            : XLA_FFI_Attrs{XLA_FFI_Attrs_STRUCT_SIZE, nullptr, 0, nullptr, nullptr, nullptr};
  }
  OneBufferFrame(const OneBufferFrame&) = delete;
  OneBufferFrame& operator=(const OneBufferFrame&) = delete;
};

}  // namespace jaxcc::detail::fake_xla

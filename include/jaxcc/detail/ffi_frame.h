// Generated handlers on XLA's FFI C API: decoding a call frame from a per-function descriptor.
//
// Included only by generated ffi_wrapper.cc files. It needs only `xla/ffi/api/c_api.h` (plain C
// structs), not the typed C++ API of `ffi.h`, whose templates took most of a cold build (issue
// 14): the wrapper unit now compiles in a fraction of the time. What XLA's typed binding did per
// handler is done here once, from a FrameSpec: the call frame's struct size, the metadata query
// (API version, command-buffer trait), the execution stage, the number and kind of arguments,
// results and attributes, attribute names and scalar types, the platform stream. Buffers become
// Tensors with the same checks and messages as ffi_bridge.h (both use ffi_common.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>

#include "jaxcc/detail/ffi_common.h"
#include "jaxcc/tensor.h"
#include "xla/ffi/api/c_api.h"

namespace jaxcc::detail {

/// One scalar attribute of a function, in the bridge's (the user's) order.
struct FrameAttr {
  const char* name;
  XLA_FFI_DataType dtype;  ///< the scalar type XLA must pass (bool: PRED, float16 bits: U16)
  int sorted_index;        ///< its place among the function's attributes sorted by name
};

/// What one generated handler expects of its call frame.
struct FrameSpec {
  const char* function;
  int num_args;
  int num_rets;
  int num_attrs;
  const char* const* arg_names;  ///< num_args parameter names (for messages)
  const char* const* ret_names;  ///< num_rets
  const FrameAttr* attrs;        ///< num_attrs, bridge order
  bool stream;                   ///< decode the platform stream (CUDA)
  XLA_FFI_Handler_Traits traits;
};

/// Room for N tensors that the handler builds in place from the frame's buffers. A plain
/// `Tensor[N]` member would zero every Tensor's shape and strides first and then copy over them
/// (about 150 bytes each, a measurable part of a small call). Tensor is trivially copyable and
/// destructible, so the union needs no constructor of its members and copies as bytes.
template <int N>
union TensorSlots {
  static_assert(std::is_trivially_copyable_v<Tensor> && std::is_trivially_destructible_v<Tensor>);
  TensorSlots() {}  // leaves `items` unconstructed on purpose
  Tensor items[N];
  operator Tensor*() { return items; }
  Tensor& operator[](int i) { return items[i]; }
};

/// The decoded call, handed to the bridge. Sized by the generated handler (at least 1 each).
template <int kArgs, int kRets, int kAttrs>
struct FrameCall {
  TensorSlots<kArgs> args;
  TensorSlots<kRets> rets;
  const void* attrs[kAttrs];
  void* stream = nullptr;

  template <typename T>
  T attr(int index) const {
    return *static_cast<const T*>(attrs[index]);
  }
};

JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameError(const XLA_FFI_Api* api, int code,
                                                   const std::string& message) noexcept {
  XLA_FFI_Error_Create_Args args;
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.message = message.c_str();
  args.errc = static_cast<XLA_FFI_Error_Code>(code);
  return api->XLA_FFI_Error_Create(&args);
}

JAXCC_BRIDGE_COLD inline XLA_FFI_Error* InvalidFrame(const XLA_FFI_Api* api,
                                                     const std::string& message) noexcept {
  try {
    return FrameError(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, message);
  } catch (...) {
    return FrameError(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  }
}

/// The metadata XLA asks a handler for at registration: API version of these headers, traits.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* PopulateFrameMetadata(XLA_FFI_CallFrame* frame,
                                                              const FrameSpec& spec) noexcept {
  auto* extension = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
  if (extension->extension_base.struct_size < XLA_FFI_Metadata_Extension_STRUCT_SIZE ||
      extension->metadata == nullptr ||
      extension->metadata->struct_size < XLA_FFI_Metadata_STRUCT_SIZE) {
    return InvalidFrame(frame->api, "Unexpected XLA_FFI_Metadata struct size");
  }
  extension->metadata->api_version = XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr,
                                                         XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  extension->metadata->traits = spec.traits;
#ifdef XLA_FFI_UNKNOWN_TYPE_ID
  extension->metadata->state_type_id = XLA_FFI_UNKNOWN_TYPE_ID;
#endif
  return nullptr;
}

/// Why a call frame does not fit `spec`, in the words of XLA's typed binding; nullptr if it fits.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameMismatch(XLA_FFI_CallFrame* frame,
                                                      const FrameSpec& spec) noexcept {
  const XLA_FFI_Api* api = frame->api;
  try {
    const std::string stage = "[" + std::to_string(static_cast<int>(frame->stage)) + "] ";
    if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) {
      return InvalidFrame(api, "Wrong execution stage: expected `3` but got `" +
                                   std::to_string(static_cast<int>(frame->stage)) + "`");
    }
    if (frame->args.size != spec.num_args && spec.num_args > 0) {
      return InvalidFrame(api, stage + "Wrong number of arguments: expected " +
                                   std::to_string(spec.num_args) + " but got " +
                                   std::to_string(frame->args.size));
    }
    if (frame->rets.size != spec.num_rets && spec.num_rets > 0) {
      return InvalidFrame(api, stage + "Wrong number of results: expected " +
                                   std::to_string(spec.num_rets) + " but got " +
                                   std::to_string(frame->rets.size));
    }
    if (spec.num_attrs > 0 && frame->attrs.size != spec.num_attrs) {
      std::string message = stage + "Wrong number of attributes: expected " +
                            std::to_string(spec.num_attrs) + " but got " +
                            std::to_string(frame->attrs.size);
      for (int64_t i = 0; i < frame->attrs.size; ++i) {
        message += i == 0 ? " with name(s): " : ", ";
        message.append(frame->attrs.names[i]->ptr, frame->attrs.names[i]->len);
      }
      return InvalidFrame(api, message);
    }
    for (int i = 0; i < spec.num_args; ++i) {
      if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER) {
        return InvalidFrame(api, std::string(spec.function) + ": argument '" + spec.arg_names[i] +
                                     "' is not a buffer");
      }
    }
    for (int i = 0; i < spec.num_rets; ++i) {
      if (frame->rets.types[i] != XLA_FFI_RetType_BUFFER) {
        return InvalidFrame(api, std::string(spec.function) + ": result '" + spec.ret_names[i] +
                                     "' is not a buffer");
      }
    }
    for (int i = 0; i < spec.num_attrs; ++i) {
      const FrameAttr& attr = spec.attrs[i];
      const XLA_FFI_ByteSpan* name = frame->attrs.names[attr.sorted_index];
      if (std::string(name->ptr, name->len) != attr.name) {
        return InvalidFrame(api, "Attribute name mismatch: " + std::string(name->ptr, name->len) +
                                     " vs " + attr.name);
      }
      if (frame->attrs.types[attr.sorted_index] != XLA_FFI_AttrType_SCALAR) {
        return InvalidFrame(api, "Wrong attribute type: expected scalar for attribute '" +
                                     std::string(attr.name) + "'");
      }
      auto* scalar = static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[attr.sorted_index]);
      if (scalar->dtype != attr.dtype) {
        return InvalidFrame(
            api, "Wrong scalar data type: expected " + XlaTypeNameOfCode(attr.dtype) + " but got " +
                     XlaTypeNameOfCode(scalar->dtype) + " for attribute '" + attr.name + "'");
      }
    }
    return nullptr;
  } catch (...) {
    return FrameError(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  }
}

/// Cheap checks of every call: true when the frame fits `spec` (the common case).
JAXCC_BRIDGE_HOT_INLINE bool FrameFits(const XLA_FFI_CallFrame* frame,
                                       const FrameSpec& spec) noexcept {
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return false;
  if (frame->args.size != spec.num_args && spec.num_args > 0) return false;
  if (frame->rets.size != spec.num_rets && spec.num_rets > 0) return false;
  if (spec.num_attrs > 0 && frame->attrs.size != spec.num_attrs) return false;
  for (int i = 0; i < spec.num_args; ++i) {
    if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER) return false;
  }
  for (int i = 0; i < spec.num_rets; ++i) {
    if (frame->rets.types[i] != XLA_FFI_RetType_BUFFER) return false;
  }
  for (int i = 0; i < spec.num_attrs; ++i) {
    const FrameAttr& attr = spec.attrs[i];
    const XLA_FFI_ByteSpan* name = frame->attrs.names[attr.sorted_index];
    if (frame->attrs.types[attr.sorted_index] != XLA_FFI_AttrType_SCALAR) return false;
    if (static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[attr.sorted_index])->dtype !=
        attr.dtype) {
      return false;
    }
    for (size_t c = 0; c < name->len; ++c) {
      if (attr.name[c] != name->ptr[c] || attr.name[c] == '\0') return false;
    }
    if (attr.name[name->len] != '\0') return false;
  }
  return true;
}

/// Views an XLA buffer as a Tensor at `where`, with TensorFromBuffer's checks and messages.
JAXCC_BRIDGE_HOT_INLINE void TensorFromFrameBuffer(const void* raw, const char* name,
                                                   Tensor* where) {
  const auto* buffer = static_cast<const XLA_FFI_Buffer*>(raw);
  const DType dtype = DTypeFromXlaCode(static_cast<int>(buffer->dtype));
  if (JAXCC_BRIDGE_UNLIKELY(dtype == DType::Invalid || buffer->rank > kMaxDim)) {
    ThrowBufferErrorCode(static_cast<int>(buffer->dtype), static_cast<std::size_t>(buffer->rank),
                         name);
  }
  new (where) Tensor(buffer->data, buffer->dims, static_cast<int>(buffer->rank), dtype);
}

/// One generated handler: checks the frame against `spec`, decodes it into a FrameCall and runs
/// `body` (which calls the bridge); every exception becomes an XLA error naming the function.
template <int kArgs, int kRets, int kAttrs, typename Body>
JAXCC_BRIDGE_HOT_INLINE XLA_FFI_Error* HandleFrame(XLA_FFI_CallFrame* frame, const FrameSpec& spec,
                                                   Body body) noexcept {
  if (JAXCC_BRIDGE_UNLIKELY(frame->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE)) {
    return InvalidFrame(frame->api, "Unexpected XLA_FFI_CallFrame struct size");
  }
  if (JAXCC_BRIDGE_UNLIKELY(frame->extension_start != nullptr &&
                            frame->extension_start->type == XLA_FFI_Extension_Metadata)) {
    return PopulateFrameMetadata(frame, spec);
  }
  if (JAXCC_BRIDGE_UNLIKELY(!FrameFits(frame, spec))) return FrameMismatch(frame, spec);
  FrameCall<kArgs, kRets, kAttrs> call;
  if (spec.stream) {
    XLA_FFI_Stream_Get_Args get;
    get.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
    get.extension_start = nullptr;
    get.ctx = frame->ctx;
    get.stream = nullptr;
    if (XLA_FFI_Error* error = frame->api->XLA_FFI_Stream_Get(&get)) return error;
    call.stream = get.stream;
  }
  for (int i = 0; i < spec.num_attrs; ++i) {
    call.attrs[i] =
        static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[spec.attrs[i].sorted_index])->value;
  }
  try {
    for (int i = 0; i < spec.num_args; ++i) {
      TensorFromFrameBuffer(frame->args.args[i], spec.arg_names[i], &call.args[i]);
    }
    for (int i = 0; i < spec.num_rets; ++i) {
      TensorFromFrameBuffer(frame->rets.rets[i], spec.ret_names[i], &call.rets[i]);
    }
    body(call);
    return nullptr;
  } catch (...) {
    ExceptionReport report = ReportCurrentException(spec.function);
    return FrameError(frame->api, report.code, report.message);
  }
}

}  // namespace jaxcc::detail

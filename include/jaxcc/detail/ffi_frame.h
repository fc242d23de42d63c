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

#include "jaxcc/detail/call_context.h"
#include "jaxcc/detail/ffi_common.h"
#include "jaxcc/detail/ffi_context.h"
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
  // What the function takes beyond buffers and attributes (its jaxcc::ThreadPool&,
  // jaxcc::State<T>&, jaxcc::Async parameters); the handler asks XLA only for these.
  bool pool = false;                                 ///< XLA's intra-op thread pool
  const FrameStateType* state = nullptr;             ///< per-call-site state, built at instantiate
  bool async = false;                                ///< run on the pool, return an FFI Future
  FrameScratch scratch_alloc = FrameScratch::kNone;  ///< run-time scratch (ScratchAllocator&)
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
  CallContext context;

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
  extension->metadata->state_type_id = XLA_FFI_UNKNOWN_TYPE_ID;
  if (spec.state != nullptr) {
    if (XLA_FFI_Error* error = EnsureStateType(frame->api, spec.function, *spec.state)) {
      return error;
    }
    extension->metadata->state_type_id = *spec.state->id;
  }
  return nullptr;
}

/// Why a call frame does not fit `spec`, in the words of XLA's typed binding; nullptr if it fits.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameMismatch(XLA_FFI_CallFrame* frame,
                                                      const FrameSpec& spec) noexcept {
  const XLA_FFI_Api* api = frame->api;
  try {
    const std::string stage = "[" + std::to_string(static_cast<int>(frame->stage)) + "] ";
    const bool instantiate =
        spec.state != nullptr && frame->stage == XLA_FFI_ExecutionStage_INSTANTIATE;
    if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE && !instantiate) {
      return InvalidFrame(api, "Wrong execution stage: expected `3` but got `" +
                                   std::to_string(static_cast<int>(frame->stage)) + "`");
    }
    if (frame->args.size != spec.num_args && spec.num_args > 0 && !instantiate) {
      return InvalidFrame(api, stage + "Wrong number of arguments: expected " +
                                   std::to_string(spec.num_args) + " but got " +
                                   std::to_string(frame->args.size));
    }
    if (frame->rets.size != spec.num_rets && spec.num_rets > 0 && !instantiate) {
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
    for (int i = 0; i < spec.num_args && !instantiate; ++i) {
      if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER) {
        return InvalidFrame(api, std::string(spec.function) + ": argument '" + spec.arg_names[i] +
                                     "' is not a buffer");
      }
    }
    for (int i = 0; i < spec.num_rets && !instantiate; ++i) {
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

/// The attributes' names and scalar types match `spec`.
JAXCC_BRIDGE_HOT_INLINE bool FrameAttrsFit(const XLA_FFI_CallFrame* frame,
                                           const FrameSpec& spec) noexcept {
  if (spec.num_attrs > 0 && frame->attrs.size != spec.num_attrs) return false;
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

/// Cheap checks of every call: true when the frame fits `spec` (the common case).
JAXCC_BRIDGE_HOT_INLINE bool FrameFits(const XLA_FFI_CallFrame* frame,
                                       const FrameSpec& spec) noexcept {
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return false;
  if (frame->args.size != spec.num_args && spec.num_args > 0) return false;
  if (frame->rets.size != spec.num_rets && spec.num_rets > 0) return false;
  for (int i = 0; i < spec.num_args; ++i) {
    if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER) return false;
  }
  for (int i = 0; i < spec.num_rets; ++i) {
    if (frame->rets.types[i] != XLA_FFI_RetType_BUFFER) return false;
  }
  return FrameAttrsFit(frame, spec);
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

/// The decoded call of an asynchronous function, owned by the pool task that runs it.
template <typename Call, typename Body>
struct AsyncFrameCall {
  Call call;
  Body body;
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  const char* function;

  static void Run(void* data) noexcept {
    auto* self = static_cast<AsyncFrameCall*>(data);
    const XLA_FFI_Api* api = self->api;
    XLA_FFI_Error* error = nullptr;
    try {
      self->body(self->call);
    } catch (...) {
      ExceptionReport report = ReportCurrentException(self->function);
      error = FrameError(api, report.code, report.message);
    }
    XLA_FFI_Error* signal = nullptr;
    if (error != nullptr) {
      XLA_FFI_Future_SetError_Args args;
      args.struct_size = XLA_FFI_Future_SetError_Args_STRUCT_SIZE;
      args.extension_start = nullptr;
      args.future = self->future;
      args.error = error;  // XLA owns it from here
      signal = api->XLA_FFI_Future_SetError(&args);
    } else {
      XLA_FFI_Future_SetAvailable_Args args;
      args.struct_size = XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE;
      args.extension_start = nullptr;
      args.future = self->future;
      signal = api->XLA_FFI_Future_SetAvailable(&args);
    }
    // Completing a Future fails only on an XLA/FFI version mismatch, which registration rules
    // out; nothing is left to report to, so the error is dropped rather than leaked.
    if (signal != nullptr) DestroyFrameError(api, signal);
    delete self;
  }
};

/// Starts `body(call)` on XLA's thread pool and hands XLA a Future that completes when it
/// returns (runs it in place when the pool refuses the task; the Future is then complete).
template <typename Call, typename Body>
JAXCC_BRIDGE_COLD XLA_FFI_Error* StartAsyncFrame(XLA_FFI_CallFrame* frame, const FrameSpec& spec,
                                                 const Call& call, Body body) noexcept {
  const XLA_FFI_Api* api = frame->api;
  XLA_FFI_Future_Create_Args create;
  create.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  create.extension_start = nullptr;
  create.future = nullptr;
  if (XLA_FFI_Error* error = api->XLA_FFI_Future_Create(&create)) return error;
  auto* job =
      new (std::nothrow) AsyncFrameCall<Call, Body>{call, body, api, create.future, spec.function};
  if (job == nullptr) {
    return FrameError(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                      std::string(spec.function) + ": out of host memory");
  }
  frame->future = create.future;
  XlaThreadPool pool(api, frame->ctx);
  if (!pool.schedule(&AsyncFrameCall<Call, Body>::Run, job)) AsyncFrameCall<Call, Body>::Run(job);
  return nullptr;
}

/// The instantiate stage of a function with state: its attributes are decoded and the
/// kernel unit's factory builds the State<T> that XLA keeps for the call site.
template <int kArgs, int kRets, int kAttrs, typename Instantiate>
JAXCC_BRIDGE_COLD XLA_FFI_Error* InstantiateFrame(XLA_FFI_CallFrame* frame, const FrameSpec& spec,
                                                  Instantiate instantiate) noexcept {
  if (!FrameAttrsFit(frame, spec)) return FrameMismatch(frame, spec);
  if (XLA_FFI_Error* error = EnsureStateType(frame->api, spec.function, *spec.state)) {
    return error;
  }
  FrameCall<kArgs, kRets, kAttrs> call;
  for (int i = 0; i < spec.num_attrs; ++i) {
    call.attrs[i] =
        static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[spec.attrs[i].sorted_index])->value;
  }
  void* state = nullptr;
  try {
    state = instantiate(call);
  } catch (...) {
    ExceptionReport report = ReportCurrentException(spec.function);
    return FrameError(frame->api, report.code,
                      report.message +
                          " (while building the function's jaxcc::State at XLA's "
                          "instantiate stage)");
  }
  return SetFrameState(frame, *spec.state, state);
}

/// No state: the instantiate stage is never registered for the function.
struct NoInstantiate {
  template <typename Call>
  void* operator()(Call&) const {
    return nullptr;
  }
};

/// One generated handler: checks the frame against `spec`, decodes it into a FrameCall and runs
/// `body` (which calls the bridge); every exception becomes an XLA error naming the function.
/// The lifecycle XLA drives through it: the metadata query at registration (traits, state type),
/// the instantiate stage (functions with state: `instantiate` builds it), then each execution
/// (pool, state and Future as the function asks).
template <int kArgs, int kRets, int kAttrs, typename Body, typename Instantiate = NoInstantiate>
JAXCC_BRIDGE_HOT_INLINE XLA_FFI_Error* HandleFrame(XLA_FFI_CallFrame* frame, const FrameSpec& spec,
                                                   Body body,
                                                   Instantiate instantiate = {}) noexcept {
  if (JAXCC_BRIDGE_UNLIKELY(frame->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE)) {
    return InvalidFrame(frame->api, "Unexpected XLA_FFI_CallFrame struct size");
  }
  if (JAXCC_BRIDGE_UNLIKELY(frame->extension_start != nullptr &&
                            frame->extension_start->type == XLA_FFI_Extension_Metadata)) {
    return PopulateFrameMetadata(frame, spec);
  }
  if (spec.state != nullptr && frame->stage == XLA_FFI_ExecutionStage_INSTANTIATE) {
    return InstantiateFrame<kArgs, kRets, kAttrs>(frame, spec, instantiate);
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
  if (spec.state != nullptr) {
    if (XLA_FFI_Error* error = GetFrameState(frame, *spec.state, &call.context.state)) {
      return error;
    }
  }
  for (int i = 0; i < spec.num_attrs; ++i) {
    call.attrs[i] =
        static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[spec.attrs[i].sorted_index])->value;
  }
  XlaThreadPool pool(frame->api, frame->ctx);
  if (spec.pool) call.context.pool = &pool;
  try {
    for (int i = 0; i < spec.num_args; ++i) {
      TensorFromFrameBuffer(frame->args.args[i], spec.arg_names[i], &call.args[i]);
    }
    for (int i = 0; i < spec.num_rets; ++i) {
      TensorFromFrameBuffer(frame->rets.rets[i], spec.ret_names[i], &call.rets[i]);
    }
    if (spec.async) return StartAsyncFrame(frame, spec, call, body);
    if (spec.scratch_alloc != FrameScratch::kNone) {
      FrameScratchAllocator allocator(frame->api, frame->ctx, spec.scratch_alloc);
      call.context.allocator = &allocator;
      body(call);
      return nullptr;  // the allocator frees its blocks here, after the function returned
    }
    body(call);
    return nullptr;
  } catch (...) {
    ExceptionReport report = ReportCurrentException(spec.function);
    return FrameError(frame->api, report.code, report.message);
  }
}

}  // namespace jaxcc::detail

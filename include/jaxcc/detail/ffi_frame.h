// The frame decoder behind every generated handler, on XLA's FFI C API.
//
// Included by a module's frame runtime unit (codegen::FrameRuntimeSource), which defines
// frame_entry.h's RunFrame with RunFrameWith, and by tests; generated wrappers include only
// frame_entry.h. It needs only `xla/ffi/api/c_api.h` (plain C structs), not the typed C++ API of
// `ffi.h`, whose templates took most of a cold build (issue 14). What XLA's typed binding did
// per handler is done here once, from a FrameSpec: the call frame's struct size, the metadata
// query (API version, command-buffer trait), the execution stage, the number and kind of
// arguments, results and attributes, attribute names and scalar types, the platform stream.
// Buffers become Tensors with the same checks and messages as ffi_bridge.h (both use
// ffi_common.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "jaxcc/detail/ffi_common.h"
#include "jaxcc/detail/ffi_context.h"
#include "jaxcc/detail/ffi_frame_async.h"
#include "jaxcc/detail/frame_context.h"
#include "jaxcc/detail/frame_dtypes.h"
#include "jaxcc/detail/frame_entry.h"
#include "jaxcc/detail/frame_features.h"
#include "jaxcc/detail/frame_text.h"
#include "jaxcc/tensor.h"
#include "xla/ffi/api/c_api.h"
#if defined(JAXCC_DEBUG_GUARDS)
#include "jaxcc/detail/debug_guards.h"
#endif

namespace jaxcc::detail {

// frame_entry.h mirrors these of XLA's header and of jaxcc::Tensor for the wrappers that include
// only it; every mirror is checked here, where both sides are visible.
static_assert(static_cast<int>(FrameScalar::kInvalid) == XLA_FFI_DataType_INVALID &&
              static_cast<int>(FrameScalar::kPred) == XLA_FFI_DataType_PRED &&
              static_cast<int>(FrameScalar::kS8) == XLA_FFI_DataType_S8 &&
              static_cast<int>(FrameScalar::kS16) == XLA_FFI_DataType_S16 &&
              static_cast<int>(FrameScalar::kS32) == XLA_FFI_DataType_S32 &&
              static_cast<int>(FrameScalar::kS64) == XLA_FFI_DataType_S64 &&
              static_cast<int>(FrameScalar::kU8) == XLA_FFI_DataType_U8 &&
              static_cast<int>(FrameScalar::kU16) == XLA_FFI_DataType_U16 &&
              static_cast<int>(FrameScalar::kU32) == XLA_FFI_DataType_U32 &&
              static_cast<int>(FrameScalar::kU64) == XLA_FFI_DataType_U64 &&
              static_cast<int>(FrameScalar::kF32) == XLA_FFI_DataType_F32 &&
              static_cast<int>(FrameScalar::kF64) == XLA_FFI_DataType_F64);
static_assert(kFrameCommandBufferCompatible == XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);
static_assert(sizeof(Tensor) == kFrameTensorBytes && alignof(Tensor) <= alignof(FrameTensorSlot));
static_assert(std::is_trivially_copyable_v<Tensor> && std::is_trivially_destructible_v<Tensor>,
              "the decoder builds Tensors in raw slots and copies them as bytes");

/// The metadata XLA asks a handler for at registration: API version of these headers, traits.
template <unsigned Features>
JAXCC_BRIDGE_COLD XLA_FFI_Error* PopulateFrameMetadata(XLA_FFI_CallFrame* frame,
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
  if constexpr ((Features & kFrameState) != 0) {
    if (spec.state != nullptr) {
      if (XLA_FFI_Error* error = EnsureStateType(frame->api, spec.function, *spec.state)) {
        return error;
      }
      extension->metadata->state_type_id = *XlaTypeId(*spec.state);
    }
  }
  return nullptr;
}

/// FrameMismatch's checks of each argument, result and attribute: the message of the first that
/// does not fit, into `message` (left empty when all fit).
JAXCC_BRIDGE_COLD inline void FrameArgumentMismatch(const XLA_FFI_CallFrame* frame,
                                                    const FrameSpec& spec, bool instantiate,
                                                    FrameText* message) noexcept {
  for (int i = 0; i < spec.num_args && !instantiate; ++i) {
    if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER) {
      message->AddFormat("%s: argument '%s' is not a buffer", spec.function, spec.arg_names[i]);
      return;
    }
  }
  for (int i = 0; i < spec.num_rets && !instantiate; ++i) {
    if (frame->rets.types[i] != XLA_FFI_RetType_BUFFER) {
      message->AddFormat("%s: result '%s' is not a buffer", spec.function, spec.ret_names[i]);
      return;
    }
  }
  for (int i = 0; i < spec.num_attrs; ++i) {
    const FrameAttr& attr = spec.attrs[i];
    const XLA_FFI_ByteSpan* name = frame->attrs.names[attr.sorted_index];
    if (std::strlen(attr.name) != name->len || std::memcmp(name->ptr, attr.name, name->len) != 0) {
      message->Add("Attribute name mismatch: ").Add(name->ptr, name->len);
      message->Add(" vs ").Add(attr.name);
      return;
    }
    if (frame->attrs.types[attr.sorted_index] != XLA_FFI_AttrType_SCALAR) {
      message->AddFormat("Wrong attribute type: expected scalar for attribute '%s'", attr.name);
      return;
    }
    auto* scalar = static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[attr.sorted_index]);
    if (static_cast<int>(scalar->dtype) != static_cast<int>(attr.dtype)) {
      XlaTypeNameRoom expected, got;
      message->AddFormat("Wrong scalar data type: expected %s but got %s for attribute '%s'",
                         XlaTypeName(static_cast<int>(attr.dtype), expected),
                         XlaTypeName(static_cast<int>(scalar->dtype), got), attr.name);
      return;
    }
  }
}

/// Why a call frame does not fit `spec`, in the words of XLA's typed binding; nullptr if it fits.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameMismatch(XLA_FFI_CallFrame* frame,
                                                      const FrameSpec& spec) noexcept {
  const int stage = static_cast<int>(frame->stage);
  FrameText message;
  const bool instantiate =
      spec.state != nullptr && frame->stage == XLA_FFI_ExecutionStage_INSTANTIATE;
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE && !instantiate) {
    message.AddFormat("Wrong execution stage: expected `3` but got `%d`", stage);
  } else if (frame->args.size != spec.num_args && spec.num_args > 0 && !instantiate) {
    message.AddFormat("[%d] Wrong number of arguments: expected %d but got %lld", stage,
                      spec.num_args, static_cast<long long>(frame->args.size));
  } else if (frame->rets.size != spec.num_rets && spec.num_rets > 0 && !instantiate) {
    message.AddFormat("[%d] Wrong number of results: expected %d but got %lld", stage,
                      spec.num_rets, static_cast<long long>(frame->rets.size));
  } else if (spec.num_attrs > 0 && frame->attrs.size != spec.num_attrs) {
    message.AddFormat("[%d] Wrong number of attributes: expected %d but got %lld", stage,
                      spec.num_attrs, static_cast<long long>(frame->attrs.size));
    for (int64_t i = 0; i < frame->attrs.size; ++i) {
      message.Add(i == 0 ? " with name(s): " : ", ");
      message.Add(frame->attrs.names[i]->ptr, frame->attrs.names[i]->len);
    }
  } else {
    FrameArgumentMismatch(frame, spec, instantiate, &message);
  }
  return message.size() > 0 ? InvalidFrame(frame->api, message) : nullptr;
}

/// The attributes' names and scalar types match `spec`.
JAXCC_BRIDGE_HOT_INLINE bool FrameAttrsFit(const XLA_FFI_CallFrame* frame,
                                           const FrameSpec& spec) noexcept {
  if (spec.num_attrs > 0 && frame->attrs.size != spec.num_attrs) return false;
  for (int i = 0; i < spec.num_attrs; ++i) {
    const FrameAttr& attr = spec.attrs[i];
    const XLA_FFI_ByteSpan* name = frame->attrs.names[attr.sorted_index];
    if (frame->attrs.types[attr.sorted_index] != XLA_FFI_AttrType_SCALAR) return false;
    if (static_cast<int>(
            static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[attr.sorted_index])->dtype) !=
        static_cast<int>(attr.dtype)) {
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
  where->set_name(name);  // for data_ptr<T>()'s message; a pointer to the handler's static text
}

/// Points `slots.attrs` at the attributes' values, in the bridge's order.
JAXCC_BRIDGE_HOT_INLINE void DecodeFrameAttrs(const XLA_FFI_CallFrame* frame, const FrameSpec& spec,
                                              const void** attrs) noexcept {
  for (int i = 0; i < spec.num_attrs; ++i) {
    attrs[i] =
        static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[spec.attrs[i].sorted_index])->value;
  }
}

/// The instantiate stage of a function with state: its attributes are decoded and the
/// kernel unit's factory builds the State<T> that XLA keeps for the call site.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* InstantiateFrame(XLA_FFI_CallFrame* frame,
                                                         const FrameSpec& spec,
                                                         FrameInstantiate instantiate,
                                                         FrameSlots slots) noexcept {
  if (!FrameAttrsFit(frame, spec)) return FrameMismatch(frame, spec);
  if (XLA_FFI_Error* error = EnsureStateType(frame->api, spec.function, *spec.state)) {
    return error;
  }
  DecodeFrameAttrs(frame, spec, slots.attrs);
  CallContext context;
  const FrameView view{nullptr, nullptr, slots.attrs, nullptr, &context};
  void* state = nullptr;
  try {
    state = instantiate(view);
  } catch (...) {
    return FrameErrorOfCurrentException(
        frame->api, spec.function,
        " (while building the function's jaxcc::State at XLA's instantiate stage)");
  }
  return SetFrameState(frame, *spec.state, state);
}

/// What runs around each call of a body: nothing on the CPU; cuda_call.h's CudaCallScope for
/// CUDA functions that take a stream (the stream's device made current, a launch error the
/// function left raised with its name).
struct NoCallScope {
  NoCallScope(void*, const char*) noexcept {}
  void Check() const noexcept {}
};

template <typename CallScope>
JAXCC_BRIDGE_HOT_INLINE void RunFrameBody(const FrameSpec& spec, FrameBody body,
                                          const FrameView& view) {
#if defined(JAXCC_DEBUG_GUARDS)
  // The debug profile (debug_guards.h): host inputs and outputs on guarded copies, the outputs'
  // guards checked after the call (the inputs' fill varied by check_kernel's `bounds` row).
  if constexpr (std::is_same_v<CallScope, NoCallScope>) {
    GuardedCall guards(spec, view.args, view.rets);
    body(view);
    guards.CheckAndCopyBack();
    return;
  }
#endif
  if (spec.stream) {
    CallScope scope(view.stream, spec.function);
    body(view);
    scope.Check();
  } else {
    body(view);
  }
}

/// Stands in for XlaThreadPool in a runtime without the pool: nothing to build.
struct NoFramePool {
  NoFramePool(const XLA_FFI_Api*, XLA_FFI_ExecutionContext*) noexcept {}
};

/// RunFrame (frame_entry.h), for one call scope and the FrameFeature set a module's runtime
/// carries (frame_features.h; every feature by default). A module's frame runtime unit defines
/// RunFrame with it; nothing else calls it but tests.
template <typename CallScope, unsigned Features = kFrameAllFeatures>
XLA_FFI_Error* RunFrameWith(XLA_FFI_CallFrame* frame, const FrameSpec& spec, FrameBody body,
                            FrameInstantiate instantiate, FrameSlots slots) noexcept {
  constexpr bool kState = (Features & kFrameState) != 0, kPool = (Features & kFramePool) != 0;
  constexpr bool kAsync = (Features & kFrameAsync) != 0;
  constexpr bool kScratchAllocator = (Features & kFrameScratchAllocator) != 0;
  if (JAXCC_BRIDGE_UNLIKELY(frame->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE)) {
    return InvalidFrame(frame->api, "Unexpected XLA_FFI_CallFrame struct size");
  }
  if constexpr (Features != kFrameAllFeatures) {
    if (JAXCC_BRIDGE_UNLIKELY(FrameSpecLacksFeature(spec, Features))) {
      return FrameLacksFeature(frame, spec, Features);
    }
  }
  if (JAXCC_BRIDGE_UNLIKELY(frame->extension_start != nullptr &&
                            frame->extension_start->type == XLA_FFI_Extension_Metadata)) {
    return PopulateFrameMetadata<Features>(frame, spec);
  }
  if constexpr (kState) {
    if (spec.state != nullptr && frame->stage == XLA_FFI_ExecutionStage_INSTANTIATE) {
      return InstantiateFrame(frame, spec, instantiate, slots);
    }
  } else {
    (void)instantiate;
  }
  if (JAXCC_BRIDGE_UNLIKELY(!FrameFits(frame, spec))) return FrameMismatch(frame, spec);
  auto* args = reinterpret_cast<Tensor*>(slots.args);
  auto* rets = reinterpret_cast<Tensor*>(slots.rets);
  CallContext context;
  FrameView view{args, rets, slots.attrs, nullptr, &context};
  if (spec.stream) {
    XLA_FFI_Stream_Get_Args get;
    get.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
    get.extension_start = nullptr;
    get.ctx = frame->ctx;
    get.stream = nullptr;
    if (XLA_FFI_Error* error = frame->api->XLA_FFI_Stream_Get(&get)) return error;
    view.stream = get.stream;
  }
  if constexpr (kState) {
    if (spec.state != nullptr) {
      if (XLA_FFI_Error* error = GetFrameState(frame, *spec.state, &context.state)) {
        return error;
      }
    }
  }
  DecodeFrameAttrs(frame, spec, slots.attrs);
  std::conditional_t<kPool, XlaThreadPool, NoFramePool> pool(frame->api, frame->ctx);
  if constexpr (kPool) {
    if (spec.pool) context.pool = &pool;
  }
  try {
    // The undeclared function's cost: this one test (decision 180).
    if (spec.dtypes != nullptr) CheckDeclaredDTypes(frame, spec);
    for (int i = 0; i < spec.num_args; ++i) {
      TensorFromFrameBuffer(frame->args.args[i], spec.arg_names[i], &args[i]);
    }
    for (int i = 0; i < spec.num_rets; ++i) {
      TensorFromFrameBuffer(frame->rets.rets[i], spec.ret_names[i], &rets[i]);
    }
    if constexpr (kAsync) {
      if (spec.async) return StartAsyncFrame(frame, spec, view, body);
    }
    if constexpr (kScratchAllocator) {
      if (spec.scratch_alloc != FrameScratch::kNone) {
        FrameScratchAllocator allocator(frame->api, frame->ctx, spec.scratch_alloc);
        context.allocator = &allocator;
        RunFrameBody<CallScope>(spec, body, view);
#if defined(JAXCC_DEBUG_GUARDS)
        allocator.CheckGuards(spec.function);
#endif
        return nullptr;  // the allocator frees its blocks here, after the function returned
      }
    }
    RunFrameBody<CallScope>(spec, body, view);
    return nullptr;
  } catch (...) {
    // Built here rather than in FrameErrorOfCurrentException: the call there moved the hot
    // path's blocks and cost ~2 ns a call in a C++ loop of this decoder (decision 161c).
    FrameText message;
    const int code = ReportCurrentExceptionTo(spec.function, &message);
    return FrameError(frame->api, code, message);
  }
}

/// Room for a decoded call of A arguments, R results and T attributes, for code that calls
/// RunFrameWith itself (tests); generated handlers declare their own arrays.
template <int A, int R, int T>
struct FrameRoom {
  FrameTensorSlot args[A];
  FrameTensorSlot rets[R];
  const void* attrs[T];
  FrameSlots slots() { return {args, rets, attrs}; }
};

}  // namespace jaxcc::detail

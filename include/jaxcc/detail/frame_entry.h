// What a generated FFI wrapper declares its handlers with: one descriptor per function and the
// decoder every handler of a module calls.
//
// The decoder (`RunFrame`) is defined once per module by its frame runtime unit
// (codegen::FrameRuntimeSource, which instantiates ffi_frame.h's `RunFrameWith`). That unit's
// text is the same for every module of a platform, so the shared object cache compiles it once
// per cache; the wrapper itself includes only this header: no XLA header, no standard library
// beyond <cstddef>/<cstdint>, a few tens of milliseconds of the host compiler per module
// (decision 128). ffi_frame.h checks every mirrored constant and layout here against XLA's
// `c_api.h` and jaxcc::Tensor, so a change on either side is a compile error, not a wrong call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jaxcc/detail/crash_site.h"

struct XLA_FFI_CallFrame;
struct XLA_FFI_Error;

namespace jaxcc {
class Tensor;
}  // namespace jaxcc

namespace jaxcc::detail {

struct CallContext;

/// The scalar types XLA passes attributes as, with the values of XLA's `XLA_FFI_DataType`.
enum class FrameScalar : int {
  kInvalid = 0,  ///< never generated for a valid attribute
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,  ///< also float16/bfloat16 attributes, which travel as their bits
  kU32 = 8,
  kU64 = 9,
  kF32 = 11,
  kF64 = 12,
};

/// A buffer's element type as XLA passes it (the values of `XLA_FFI_DataType`), for the dtypes an
/// arg_spec declares (`arg:float32`); kAny where it declares none (a bare `arg`/`ret`).
enum class FrameElement : unsigned char {
  kAny = 0,
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kC64 = 15,
  kBF16 = 16,
  kC128 = 18,
};

/// XLA's `XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE`.
inline constexpr std::uint32_t kFrameCommandBufferCompatible = 1u;

/// One scalar attribute of a function, in the bridge's (the user's) order.
struct FrameAttr {
  const char* name;
  FrameScalar dtype;  ///< the scalar type XLA must pass
  int sorted_index;   ///< its place among the function's attributes sorted by name
};

/// XLA's `XLA_FFI_TypeId` and `XLA_FFI_TypeInfo`, spelled without XLA's header.
struct FrameTypeId {
  std::int64_t type_id;  ///< 0 until XLA registered the type
};
struct FrameTypeInfo {
  std::size_t struct_size;  ///< sizeof(FrameTypeInfo), which is XLA_FFI_TypeInfo_STRUCT_SIZE
  void* extension_start;
  void (*deleter)(void* object);
};

/// What the wrapper knows of one function's state type: the XLA type id (registered once per
/// process, on first need) and the deleter from the kernel unit.
struct FrameStateType {
  FrameTypeId* id;            ///< a per-function variable of the wrapper
  const FrameTypeInfo* info;  ///< deleter: jaxcc_state_delete_<f> of the kernel unit
};

/// Where a function's run-time scratch (`jaxcc::ScratchAllocator&`) comes from.
enum class FrameScratch : unsigned char {
  kNone,    ///< the function takes no allocator
  kHost,    ///< CPU: aligned host memory (XLA:CPU lends no device allocator)
  kDevice,  ///< CUDA: XLA_FFI_DeviceMemory_Allocate on the call's device
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
  std::uint32_t traits;          ///< XLA_FFI_Handler_Traits
  // What the function takes beyond buffers and attributes (its jaxcc::ThreadPool&,
  // jaxcc::State<T>&, jaxcc::Async parameters); the handler asks XLA only for these.
  bool pool = false;                                 ///< XLA's intra-op thread pool
  const FrameStateType* state = nullptr;             ///< per-call-site state, built at instantiate
  bool async = false;                                ///< run on the pool, return an FFI Future
  FrameScratch scratch_alloc = FrameScratch::kNone;  ///< run-time scratch (ScratchAllocator&)
  /// The declared element type of each argument, then each result (num_args + num_rets), which
  /// the decoder checks before the function runs (decision 180); nullptr when the spec declares
  /// none, which costs the call one test.
  const FrameElement* dtypes = nullptr;
};

/// Room for one Tensor, which the decoder builds in place: the handler's arrays of these are
/// left uninitialised (zeroing a Tensor's shape and strides first was a measurable part of a
/// small call). ffi_frame.h checks the size and alignment against jaxcc::Tensor.
inline constexpr std::size_t kFrameTensorBytes = 160;
struct alignas(8) FrameTensorSlot {
  unsigned char bytes[kFrameTensorBytes];
};

/// The handler's room for the decoded call, sized by it (at least 1 each).
struct FrameSlots {
  FrameTensorSlot* args;
  FrameTensorSlot* rets;
  const void** attrs;
};

/// The decoded call, as the generated body hands it to the bridge.
struct FrameView {
  Tensor* args;
  Tensor* rets;
  const void* const* attrs;  ///< each points at the attribute's value in XLA's frame
  void* stream;              ///< the platform stream (CUDA functions that take one)
  const CallContext* context;

  template <typename T>
  T attr(int index) const {
    return *static_cast<const T*>(attrs[index]);
  }
};

/// Calls the bridge with the decoded call; generated per function.
using FrameBody = void (*)(const FrameView& call);
/// Builds the function's State<T> from its attributes at XLA's instantiate stage.
using FrameInstantiate = void* (*)(const FrameView& call);

/// Checks `frame` against `spec`, decodes it into `slots` and runs `body` (which calls the
/// bridge); every exception becomes an XLA error naming the function. The lifecycle XLA drives
/// through it: the metadata query at registration (traits, state type), the instantiate stage
/// (functions with state: `instantiate` builds it), then each execution (pool, state, scratch
/// and Future as the function asks). Defined by the module's frame runtime unit.
XLA_FFI_Error* RunFrame(XLA_FFI_CallFrame* frame, const FrameSpec& spec, FrameBody body,
                        FrameInstantiate instantiate, FrameSlots slots) noexcept;

}  // namespace jaxcc::detail

// The FFI lifecycle behind a generated handler, on XLA's C API: the intra-op thread pool, the
// per-call-site state (type registration, instantiate stage, lookup per execution) and the
// Future of an asynchronous call. Included only by generated ffi_wrapper.cc files (through
// ffi_frame.h); the kernel unit sees the standard-C++ interfaces of call_context.h.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "jaxcc/detail/ffi_common.h"
#include "jaxcc/detail/frame_context.h"
#include "jaxcc/detail/frame_entry.h"
#include "jaxcc/scratch.h"
#include "jaxcc/thread_pool.h"
#include "xla/ffi/api/c_api.h"
#if defined(JAXCC_DEBUG_GUARDS)
#include "jaxcc/detail/debug_guards.h"
#endif

namespace jaxcc::detail {

inline void DestroyFrameError(const XLA_FFI_Api* api, XLA_FFI_Error* error) noexcept {
  XLA_FFI_Error_Destroy_Args args;
  args.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.error = error;
  api->XLA_FFI_Error_Destroy(&args);
}

/// jaxcc::ThreadPool over the FFI ThreadPool of one call. Valid while the handler runs (the
/// execution context is XLA's, per call): an asynchronous function therefore gets no pool.
class XlaThreadPool final : public ThreadPool {
 public:
  XlaThreadPool(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx) noexcept
      : api_(api), ctx_(ctx) {}

  int64_t num_threads() const noexcept override {
    if (threads_ > 0) return threads_;
    int64_t n = 0;
    XLA_FFI_ThreadPool_NumThreads_Args args;
    args.struct_size = XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx_;
    args.num_threads = &n;
    if (XLA_FFI_Error* error = api_->XLA_FFI_ThreadPool_NumThreads(&args)) {
      DestroyFrameError(api_, error);  // no pool in this context: run serially
      n = 1;
    }
    threads_ = n > 0 ? n : 1;
    return threads_;
  }

  bool schedule(void (*task)(void*), void* data) noexcept override {
    XLA_FFI_ThreadPool_Schedule_Args args;
    args.struct_size = XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx_;
    args.task = task;
    args.data = data;
    if (XLA_FFI_Error* error = api_->XLA_FFI_ThreadPool_Schedule(&args)) {
      DestroyFrameError(api_, error);
      return false;
    }
    return true;
  }

 private:
  const XLA_FFI_Api* api_;
  XLA_FFI_ExecutionContext* ctx_;
  mutable int64_t threads_ = 0;
};

// XLA renamed the call that reads an error's message: FFI API 0.3 (jaxlib 0.10) has
// XLA_FFI_Error_GetMessage, later versions XLA_FFI_Error_GetDetails (same fields plus the code).
// The API table's member decides, so one header compiles against either set of XLA headers; the
// argument struct is named through the member's type, never spelled, because only one exists.
template <typename Api, typename = void>
struct HasErrorGetDetails : std::false_type {};
template <typename Api>
struct HasErrorGetDetails<Api, std::void_t<decltype(&Api::XLA_FFI_Error_GetDetails)>>
    : std::true_type {};

template <typename Fn>
struct PointeeArgument;
template <typename Args>
struct PointeeArgument<void (*)(Args*)> {
  using type = Args;
};

template <typename Args, typename Fn>
const char* ReadFrameErrorMessage(Fn read, XLA_FFI_Error* error) {
  Args args{};
  args.struct_size = sizeof(Args);  // XLA accepts any size at least its own
  args.extension_start = nullptr;
  args.error = error;
  args.message = nullptr;
  read(&args);
  return args.message;
}

template <typename Api>
const char* FrameErrorMessage(const Api* api, XLA_FFI_Error* error) {
  if constexpr (HasErrorGetDetails<Api>::value) {
    using Args = typename PointeeArgument<decltype(api->XLA_FFI_Error_GetDetails)>::type;
    return ReadFrameErrorMessage<Args>(api->XLA_FFI_Error_GetDetails, error);
  } else {
    using Args = typename PointeeArgument<decltype(api->XLA_FFI_Error_GetMessage)>::type;
    return ReadFrameErrorMessage<Args>(api->XLA_FFI_Error_GetMessage, error);
  }
}

/// jaxcc::ScratchAllocator of one call: every block is freed when the handler's call returns
/// (this object's destructor), as XLA's own ffi::ScratchAllocator does. Device memory freed then
/// may be reused by XLA's later work on the same stream, which runs after the kernel's.
class FrameScratchAllocator final : public ScratchAllocator {
 public:
  FrameScratchAllocator(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                        FrameScratch where) noexcept
      : api_(api), ctx_(ctx), where_(where) {}
  FrameScratchAllocator(const FrameScratchAllocator&) = delete;
  FrameScratchAllocator& operator=(const FrameScratchAllocator&) = delete;

  ~FrameScratchAllocator() {
    for (std::size_t k = 0; k < count_; ++k) {
      const Block& block = blocks_[k];
      if (where_ == FrameScratch::kHost) {
        ::operator delete (block.data, std::align_val_t{block.alignment});
        continue;
      }
      XLA_FFI_DeviceMemory_Free_Args args;
      args.struct_size = XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE;
      args.extension_start = nullptr;
      args.ctx = ctx_;
      args.size = block.bytes;
      args.data = block.data;
      // A failed free leaves XLA's allocator as it was; the call's result stands.
      if (XLA_FFI_Error* error = api_->XLA_FFI_DeviceMemory_Free(&args)) {
        DestroyFrameError(api_, error);
      }
    }
    std::free(blocks_);
  }

#if defined(JAXCC_DEBUG_GUARDS)
  /// The debug profile: throws GuardZoneError naming `function` for the first host block whose
  /// guard zone was written (called after the function returned, before the blocks are freed).
  void CheckGuards(const char* function) const {
    for (std::size_t k = 0; k < count_; ++k) {
      if (where_ != FrameScratch::kHost) continue;
      const GuardDamage d =
          FindGuardDamage(static_cast<const unsigned char*>(blocks_[k].data) + blocks_[k].bytes);
      if (d.first < 0) continue;
      throw GuardZoneError("jaxcc debug profile: function '" + std::string(function) +
                           "' wrote past the end of jaxcc::ScratchAllocator block " +
                           std::to_string(k) + " (" + std::to_string(blocks_[k].bytes) +
                           " bytes): bytes " + std::to_string(d.first) + " to " +
                           std::to_string(d.last) + " past the end were changed");
    }
  }
#endif

 private:
  struct Block {
    void* data;
    std::size_t bytes;
    std::size_t alignment;
  };
#if defined(JAXCC_DEBUG_GUARDS)
  static constexpr std::size_t kHostTail = kGuardBytes;  // the debug profile's guard zone
#else
  static constexpr std::size_t kHostTail = 0;
#endif

  void* allocate_bytes(std::size_t bytes, std::size_t alignment, std::string* why) override {
    ReserveBlock();  // so that recording the block below cannot throw
    void* data = nullptr;
    if (where_ == FrameScratch::kHost) {
      data = ::operator new (bytes + kHostTail, std::align_val_t{alignment}, std::nothrow);
      if (data == nullptr) *why = "out of host memory";
#if defined(JAXCC_DEBUG_GUARDS)
      if (data != nullptr) std::memset(static_cast<char*>(data) + bytes, kGuardByte, kHostTail);
#endif
    } else {
      XLA_FFI_DeviceMemory_Allocate_Args args;
      args.struct_size = XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE;
      args.extension_start = nullptr;
      args.ctx = ctx_;
      args.size = bytes;
      args.alignment = alignment;
      args.data = nullptr;
      if (XLA_FFI_Error* error = api_->XLA_FFI_DeviceMemory_Allocate(&args)) {
        const char* text = FrameErrorMessage(api_, error);
        why->assign("XLA's allocator: ").append(text != nullptr ? text : "");
        DestroyFrameError(api_, error);
        return nullptr;
      }
      data = args.data;
      if (data == nullptr) *why = "XLA's allocator returned no memory";
    }
    if (data != nullptr) blocks_[count_++] = Block{data, bytes, alignment};
    return data;
  }

  /// Room for one more block; throws std::bad_alloc as a full std::vector's growth would.
  void ReserveBlock() {
    if (count_ < capacity_) return;
    const std::size_t capacity = capacity_ == 0 ? 4 : capacity_ * 2;
    void* grown = std::realloc(blocks_, capacity * sizeof(Block));
    if (grown == nullptr) throw std::bad_alloc();
    blocks_ = static_cast<Block*>(grown);
    capacity_ = capacity;
  }

  const XLA_FFI_Api* api_;
  XLA_FFI_ExecutionContext* ctx_;
  FrameScratch where_;
  // A plain growing array: std::vector's instantiations were a measurable part of the frame
  // runtime's compile (decision 161c).
  Block* blocks_ = nullptr;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
};

JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameError(const XLA_FFI_Api* api, int code,
                                                   const char* message) noexcept {
  XLA_FFI_Error_Create_Args args;
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.message = message;
  args.errc = static_cast<XLA_FFI_Error_Code>(code);
  return api->XLA_FFI_Error_Create(&args);
}

/// The error of a message built in a FrameText: RESOURCE_EXHAUSTED "out of memory" when the
/// text found no memory.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameError(const XLA_FFI_Api* api, int code,
                                                   const FrameText& message) noexcept {
  if (!message.ok()) return FrameError(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  return FrameError(api, code, message.c_str());
}

JAXCC_BRIDGE_COLD inline XLA_FFI_Error* InvalidFrame(const XLA_FFI_Api* api,
                                                     const char* message) noexcept {
  return FrameError(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, message);
}

JAXCC_BRIDGE_COLD inline XLA_FFI_Error* InvalidFrame(const XLA_FFI_Api* api,
                                                     const FrameText& message) noexcept {
  return FrameError(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, message);
}

/// The XLA error of the exception being handled (ReportCurrentExceptionTo's code and message,
/// then `suffix`). Call it only inside `catch (...)`.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameErrorOfCurrentException(
    const XLA_FFI_Api* api, const char* function, const char* suffix = "") noexcept {
  FrameText message;
  const int code = ReportCurrentExceptionTo(function, &message);
  return FrameError(api, code, message.Add(suffix));
}

// The wrapper spells XLA's type id and type info without XLA's header (frame_entry.h); they are
// the same structs.
static_assert(sizeof(FrameTypeId) == sizeof(XLA_FFI_TypeId) &&
              offsetof(FrameTypeId, type_id) == offsetof(XLA_FFI_TypeId, type_id));
static_assert(sizeof(FrameTypeInfo) == XLA_FFI_TypeInfo_STRUCT_SIZE &&
              offsetof(FrameTypeInfo, deleter) == offsetof(XLA_FFI_TypeInfo, deleter));

inline XLA_FFI_TypeId* XlaTypeId(const FrameStateType& type) noexcept {
  return reinterpret_cast<XLA_FFI_TypeId*>(type.id);
}

/// Registers the state type with XLA the first time it is needed (the metadata query at handler
/// registration, or the instantiate stage). The name is unique per loaded library and function.
inline XLA_FFI_Error* EnsureStateType(const XLA_FFI_Api* api, const char* function,
                                      const FrameStateType& type) noexcept {
  // A registration-time lock; pthread's keeps <mutex> out of the frame runtime's parse.
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  struct Unlock {
    ~Unlock() { pthread_mutex_unlock(&mutex); }
  } unlock_at_exit;
  pthread_mutex_lock(&mutex);
  if (type.id->type_id != 0) return nullptr;
  char name[160];
  std::snprintf(name, sizeof(name), "jaxcc.state.%.100s@%p", function, static_cast<void*>(type.id));
  XLA_FFI_Type_Register_Args args;
  args.struct_size = XLA_FFI_Type_Register_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.name = XLA_FFI_ByteSpan{name, std::char_traits<char>::length(name)};
  args.type_id = XlaTypeId(type);
  args.type_info = reinterpret_cast<const XLA_FFI_TypeInfo*>(type.info);
  return api->XLA_FFI_Type_Register(&args);
}

/// Hands a freshly built state to XLA at the instantiate stage; XLA owns it from here (the
/// deleter runs when the executable is destroyed). On failure the state is deleted here.
inline XLA_FFI_Error* SetFrameState(XLA_FFI_CallFrame* frame, const FrameStateType& type,
                                    void* state) noexcept {
  XLA_FFI_State_Set_Args args;
  args.struct_size = XLA_FFI_State_Set_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.ctx = frame->ctx;
  args.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  args.type_id = XlaTypeId(type);
  args.state = state;
  XLA_FFI_Error* error = frame->api->XLA_FFI_State_Set(&args);
  if (error != nullptr) type.info->deleter(state);
  return error;
}

/// The call site's state at the execute stage (set at instantiate).
inline XLA_FFI_Error* GetFrameState(XLA_FFI_CallFrame* frame, const FrameStateType& type,
                                    void** state) noexcept {
  XLA_FFI_State_Get_Args args;
  args.struct_size = XLA_FFI_State_Get_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.ctx = frame->ctx;
  args.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  args.type_id = XlaTypeId(type);
  args.state = nullptr;
  XLA_FFI_Error* error = frame->api->XLA_FFI_State_Get(&args);
  *state = args.state;
  return error;
}

}  // namespace jaxcc::detail

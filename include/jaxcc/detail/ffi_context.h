// The FFI lifecycle behind a generated handler, on XLA's C API: the intra-op thread pool, the
// per-call-site state (type registration, instantiate stage, lookup per execution) and the
// Future of an asynchronous call. Included only by generated ffi_wrapper.cc files (through
// ffi_frame.h); the kernel unit sees the standard-C++ interfaces of call_context.h.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "jaxcc/detail/call_context.h"
#include "jaxcc/detail/ffi_common.h"
#include "xla/ffi/api/c_api.h"

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

/// What the wrapper knows of one function's state type: the XLA type id (registered once per
/// process, on first need) and the deleter from the kernel unit.
struct FrameStateType {
  XLA_FFI_TypeId* id;            ///< a per-function variable of the wrapper, 0 until registered
  const XLA_FFI_TypeInfo* info;  ///< deleter: jaxcc_state_delete_<f> of the kernel unit
};

/// Registers the state type with XLA the first time it is needed (the metadata query at handler
/// registration, or the instantiate stage). The name is unique per loaded library and function.
inline XLA_FFI_Error* EnsureStateType(const XLA_FFI_Api* api, const char* function,
                                      const FrameStateType& type) noexcept {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (type.id->type_id != 0) return nullptr;
  char name[160];
  std::snprintf(name, sizeof(name), "jaxcc.state.%.100s@%p", function, static_cast<void*>(type.id));
  XLA_FFI_Type_Register_Args args;
  args.struct_size = XLA_FFI_Type_Register_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.name = XLA_FFI_ByteSpan{name, std::char_traits<char>::length(name)};
  args.type_id = type.id;
  args.type_info = type.info;
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
  args.type_id = type.id;
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
  args.type_id = type.id;
  args.state = nullptr;
  XLA_FFI_Error* error = frame->api->XLA_FFI_State_Get(&args);
  *state = args.state;
  return error;
}

}  // namespace jaxcc::detail

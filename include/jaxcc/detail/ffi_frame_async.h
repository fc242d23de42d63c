// The asynchronous side of the frame decoder (ffi_frame.h): a `jaxcc::Async` function's decoded
// call is copied behind a task of XLA's thread pool, and the Future XLA waits on completes when
// the function returns (decision 94; the copy since decision 128, as the handler's room for the
// decoded call dies when it returns). A debug build guards the body's inputs and outputs as it
// does a synchronous body's (debug_guards.h; async functions are CPU only).
#pragma once

#include <cstddef>
#include <cstring>
#include <new>

#include "jaxcc/detail/ffi_common.h"
#include "jaxcc/detail/ffi_context.h"
#include "jaxcc/detail/frame_context.h"
#include "jaxcc/detail/frame_entry.h"
#include "jaxcc/tensor.h"
#include "xla/ffi/api/c_api.h"
#if defined(JAXCC_DEBUG_GUARDS)
#include "jaxcc/detail/debug_guards.h"
#endif

namespace jaxcc::detail {

/// The decoded call of an asynchronous function, owned by the pool task that runs it: the view's
/// tensors and attribute pointers are copied behind it (the handler's slots die when it returns;
/// the attribute values live in XLA's frame, which outlives the call).
struct AsyncFrameJob {
  FrameView view;
  CallContext context;
  FrameBody body;
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  const char* function;
  const FrameSpec* spec;  // static in the module's wrapper unit: outlives every call

  static AsyncFrameJob* Copy(const FrameSpec& spec, const FrameView& view, FrameBody body,
                             const XLA_FFI_Api* api, XLA_FFI_Future* future) noexcept {
    const std::size_t tensors = static_cast<std::size_t>(spec.num_args + spec.num_rets);
    const std::size_t bytes = sizeof(AsyncFrameJob) + tensors * sizeof(Tensor) +
                              static_cast<std::size_t>(spec.num_attrs) * sizeof(const void*);
    void* raw = ::operator new(bytes, std::nothrow);
    if (raw == nullptr) return nullptr;
    auto* job =
        new (raw) AsyncFrameJob{view, *view.context, body, api, future, spec.function, &spec};
    auto* tensor_room = reinterpret_cast<Tensor*>(job + 1);
    std::memcpy(static_cast<void*>(tensor_room), view.args, spec.num_args * sizeof(Tensor));
    std::memcpy(static_cast<void*>(tensor_room + spec.num_args), view.rets,
                spec.num_rets * sizeof(Tensor));
    auto* attr_room = reinterpret_cast<const void**>(tensor_room + tensors);
    if (spec.num_attrs > 0) {
      std::memcpy(static_cast<void*>(attr_room), view.attrs, spec.num_attrs * sizeof(void*));
    }
    job->view.args = tensor_room;
    job->view.rets = tensor_room + spec.num_args;
    job->view.attrs = attr_room;
    job->view.context = &job->context;
    return job;
  }

  static void Run(void* data) noexcept {
    auto* self = static_cast<AsyncFrameJob*>(data);
    const XLA_FFI_Api* api = self->api;
    XLA_FFI_Error* error = nullptr;
    try {
#if defined(JAXCC_DEBUG_GUARDS)
      GuardedCall guards(*self->spec, self->view.args, self->view.rets);
      self->body(self->view);
      guards.CheckAndCopyBack();
#else
      self->body(self->view);
#endif
    } catch (...) {
      error = FrameErrorOfCurrentException(api, self->function);
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
    self->~AsyncFrameJob();
    ::operator delete(data);
  }
};

/// Starts `body(view)` on XLA's thread pool and hands XLA a Future that completes when it
/// returns (runs it in place when the pool refuses the task; the Future is then complete).
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* StartAsyncFrame(XLA_FFI_CallFrame* frame,
                                                        const FrameSpec& spec,
                                                        const FrameView& view,
                                                        FrameBody body) noexcept {
  const XLA_FFI_Api* api = frame->api;
  XLA_FFI_Future_Create_Args create;
  create.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  create.extension_start = nullptr;
  create.future = nullptr;
  if (XLA_FFI_Error* error = api->XLA_FFI_Future_Create(&create)) return error;
  AsyncFrameJob* job = AsyncFrameJob::Copy(spec, view, body, api, create.future);
  if (job == nullptr) {
    FrameText message;
    message.Add(spec.function).Add(": out of host memory");
    return FrameError(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, message);
  }
  frame->future = create.future;
  XlaThreadPool pool(api, frame->ctx);
  if (!pool.schedule(&AsyncFrameJob::Run, job)) AsyncFrameJob::Run(job);
  return nullptr;
}

}  // namespace jaxcc::detail

// The FFI lifecycle features a module's frame runtime carries (decision 161c).
//
// A CPU module's frame runtime unit (codegen::FrameRuntimeSource) instantiates RunFrameWith with
// the features its functions take: the machinery of the others (the instantiate stage and state
// lookup, XLA's thread pool, the Future of an asynchronous call, the run-time scratch allocator)
// is then not compiled, on the critical path of a cache's first build. The codegen derives the
// runtime and the handlers' FrameSpecs from the same specs, so a spec that takes a feature its
// runtime lacks is a jaxcc bug; should it happen, the call gets an XLA error naming the feature,
// never undefined behaviour. Each feature set is its own instantiation, so units with different
// sets (a test's) link together.
#pragma once

#include "jaxcc/detail/ffi_context.h"
#include "jaxcc/detail/frame_entry.h"
#include "jaxcc/detail/frame_text.h"
#include "xla/ffi/api/c_api.h"

namespace jaxcc::detail {

/// One feature of the FFI lifecycle; a runtime carries a set of them (bits).
enum FrameFeature : unsigned {
  kFrameAsync = 1u,             ///< `jaxcc::Async` functions: a Future, the body on the pool
  kFrameState = 2u,             ///< `jaxcc::State<T>&`: the instantiate stage, the state lookup
  kFramePool = 4u,              ///< `jaxcc::ThreadPool&`: XLA's intra-op pool
  kFrameScratchAllocator = 8u,  ///< `jaxcc::ScratchAllocator&`: run-time scratch
  kFrameAllFeatures = 15u,
};

/// True when `spec` takes a feature outside `features`.
inline bool FrameSpecLacksFeature(const FrameSpec& spec, unsigned features) noexcept {
  return ((features & kFrameAsync) == 0 && spec.async) ||
         ((features & kFrameState) == 0 && spec.state != nullptr) ||
         ((features & kFramePool) == 0 && spec.pool) ||
         ((features & kFrameScratchAllocator) == 0 && spec.scratch_alloc != FrameScratch::kNone);
}

/// The INTERNAL error of a call whose spec takes what the runtime lacks, naming each feature.
JAXCC_BRIDGE_COLD inline XLA_FFI_Error* FrameLacksFeature(XLA_FFI_CallFrame* frame,
                                                          const FrameSpec& spec,
                                                          unsigned features) noexcept {
  const struct {
    bool lacking;
    const char* name;
  } lacking[] = {
      {(features & kFrameAsync) == 0 && spec.async, "asynchronous calls (jaxcc::Async)"},
      {(features & kFrameState) == 0 && spec.state != nullptr,
       "per-call-site state (jaxcc::State<T>&)"},
      {(features & kFramePool) == 0 && spec.pool, "XLA's thread pool (jaxcc::ThreadPool&)"},
      {(features & kFrameScratchAllocator) == 0 && spec.scratch_alloc != FrameScratch::kNone,
       "run-time scratch (jaxcc::ScratchAllocator&)"},
  };
  FrameText message;
  message.Add(spec.function).Add(": this module's frame runtime was generated without ");
  const char* separator = "";
  for (const auto& feature : lacking) {
    if (!feature.lacking) continue;
    message.Add(separator).Add(feature.name);
    separator = ", ";
  }
  message.Add(
      ", which the function takes; the runtime and the function's handler come from the same "
      "build, so this is a jaxcc bug: please report it");
  return FrameError(frame->api, XLA_FFI_Error_Code_INTERNAL, message);
}

}  // namespace jaxcc::detail

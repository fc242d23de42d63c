// What a call hands the bridge beyond buffers and attributes: the pool, the state and the
// allocator of the functions that take them. Its own header so that the frame runtime, which
// fills it, needs none of the interfaces' implementations (call_context.h has those).
#pragma once

namespace jaxcc {
class ThreadPool;
class ScratchAllocator;
}  // namespace jaxcc

namespace jaxcc::detail {

struct CallContext {
  ThreadPool* pool = nullptr;  ///< XLA's intra-op pool (functions with a `jaxcc::ThreadPool&`)
  void* state = nullptr;       ///< the call site's State<T> (functions with a `jaxcc::State<T>&`)
  ScratchAllocator* allocator = nullptr;  ///< run-time scratch (a `jaxcc::ScratchAllocator&`)
};

}  // namespace jaxcc::detail

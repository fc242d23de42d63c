// jaxcc::ThreadPool, the interface of the call's thread pool, apart from parallel_for's
// implementation (parallel.h): the frame runtime implements it on XLA's pool and needs nothing
// more, so it does not parse <mutex> and <condition_variable> on a cache's first build.
#pragma once

#include <cstdint>

namespace jaxcc {

/// The thread pool of one call. Implemented over XLA's FFI ThreadPool by generated handlers;
/// tests may implement it over their own threads.
class ThreadPool {
 public:
  /// Threads of the pool (at least 1). The calling thread is one of the workers of a
  /// parallel_for, so a loop fans out to at most this many chunks at a time.
  virtual int64_t num_threads() const noexcept = 0;
  /// Runs `task(data)` on a pool thread, some time later; false if it could not be scheduled
  /// (the caller then does the work itself).
  virtual bool schedule(void (*task)(void*), void* data) noexcept = 0;

  /// parallel_for on this pool (jaxcc/parallel.h).
  template <typename Fn>
  void parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn);

 protected:
  ~ThreadPool() = default;
};

}  // namespace jaxcc

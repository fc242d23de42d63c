// parallel_for on the thread pool of the call: XLA's intra-op pool, standard C++ only.
//
// A CPU function that takes a `jaxcc::ThreadPool&` parameter receives the pool XLA runs its own
// ops on (the FFI ThreadPool), implemented by the module's frame runtime; the kernel unit sees
// only this interface. No thread of jaxcc's own is ever started, so kernels running side by
// side in one jitted function share the cores instead of oversubscribing them (as OpenMP does).
//
// Scheduling: the range is cut into chunks of `grain` indices; the calling thread and up to
// num_threads() - 1 pool tasks claim chunks from one atomic counter until none is left. The
// tasks fan out as a tree: the caller schedules two, and each task schedules up to two more
// before it claims chunks, so waking 15 threads costs the caller two wake-ups and the last thread
// starts after about log2(16) of them instead of 15 in a row (a wake-up of a sleeping pool thread
// is a system call, and more inside a virtual machine). The caller never waits for a task that
// has not started (a busy pool, or a pool whose threads all run handlers that wait themselves,
// cannot deadlock it): it finishes the chunks nobody claimed and waits only for chunks already
// running. Tasks that start late find no chunk and exit; the shared block they touch is reference
// counted, so it outlives the call if it must, and they schedule nothing once the caller is done
// (the pool object belongs to the call).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "jaxcc/detail/crash_site.h"
#include "jaxcc/thread_pool.h"

namespace jaxcc {

/// Most chunks one parallel_for cuts a range into, whatever its grain: the counter and the
/// per-chunk call stay cheap against the work (documented in docs/usage.md).
inline constexpr int64_t kMaxParallelChunks = int64_t{1} << 20;

namespace detail {

/// True on a thread while it runs chunks of a parallel_for: a parallel_for inside one runs
/// serially (no nested fan-out, which could only queue behind its own parent's chunks).
inline bool& InParallelRegion() noexcept {
  static thread_local bool inside = false;
  return inside;
}

class ParallelRegionScope {
 public:
  ParallelRegionScope() noexcept : previous_(InParallelRegion()) { InParallelRegion() = true; }
  ~ParallelRegionScope() { InParallelRegion() = previous_; }
  ParallelRegionScope(const ParallelRegionScope&) = delete;
  ParallelRegionScope& operator=(const ParallelRegionScope&) = delete;

 private:
  bool previous_;
};

[[noreturn]] inline void ThrowBadRange(const char* what) {
  throw std::invalid_argument(std::string("parallel_for: ") + what);
}

inline void CheckRange(int64_t begin, int64_t end, int64_t grain) {
  if (end < begin) {
    ThrowBadRange(("the range [" + std::to_string(begin) + ", " + std::to_string(end) +
                   ") is negative (end < begin); pass begin <= end")
                      .c_str());
  }
  if (grain <= 0) {
    ThrowBadRange(("grain " + std::to_string(grain) +
                   " is not positive; pass the number of indices one task should take at least "
                   "(1 for one index per task)")
                      .c_str());
  }
}

/// How a range is cut: `chunk` indices each (the last may be shorter), `num_chunks` of them.
struct ChunkPlan {
  uint64_t chunk;
  int64_t num_chunks;
};

/// The chunk plan of [begin, end) (end >= begin, grain > 0), free of overflow at every edge: the
/// length is taken in uint64_t, where end - begin is exact for any two int64_t values (up to
/// 2^64 - 1), and every ceiling is a quotient plus a remainder test, never `(n + d - 1) / d`
/// (which wrapped for grain INT64_MAX and skipped the loop, and for lengths near INT64_MAX,
/// where it made a negative chunk and hung the caller; issue 37, decision 150a).
inline ChunkPlan PlanChunks(int64_t begin, int64_t end, int64_t grain) noexcept {
  const uint64_t n = static_cast<uint64_t>(end) - static_cast<uint64_t>(begin);
  constexpr uint64_t kMax = static_cast<uint64_t>(kMaxParallelChunks);
  uint64_t chunk = static_cast<uint64_t>(grain);
  if (n / chunk > kMax) chunk = n / kMax + (n % kMax != 0);  // then n / chunk <= kMax
  return {chunk, static_cast<int64_t>(n / chunk + (n % chunk != 0))};
}

struct ChunkBounds {
  int64_t lo, hi;
};

/// Chunk `c` (0 <= c < num_chunks) of the plan: offsets from `begin` in uint64_t, where
/// c * chunk < end - begin cannot wrap; both bounds lie in [begin, end], so they fit int64_t.
inline ChunkBounds BoundsOfChunk(int64_t begin, int64_t end, uint64_t chunk, int64_t c) noexcept {
  const uint64_t n = static_cast<uint64_t>(end) - static_cast<uint64_t>(begin);
  const uint64_t offset = static_cast<uint64_t>(c) * chunk;
  const uint64_t lo = static_cast<uint64_t>(begin) + offset;
  const uint64_t hi = n - offset > chunk ? lo + chunk : static_cast<uint64_t>(end);
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

/// The block the caller and its tasks share. Reference counted: the caller and each scheduled
/// task hold one reference; the last one out deletes it.
struct ParallelJob {
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> done_chunks{0};
  std::atomic<int> refs{1};
  std::atomic<bool> failed{false};
  std::atomic<int64_t> unscheduled{0};  // tasks still to schedule, by whoever starts next
  std::atomic<int> scheduling{0};       // threads inside ScheduleMore now
  std::atomic<bool> closed{false};      // the caller is done: nothing may touch the pool now
  ThreadPool* pool = nullptr;           // the call's: valid only until the caller returns
  int64_t num_chunks = 0;
  int64_t begin = 0, end = 0;
  uint64_t chunk = 0;
  void (*run)(void* fn, int64_t lo, int64_t hi) = nullptr;
  void* fn = nullptr;  // valid while chunks remain: the caller waits for every claimed chunk
  const FrameCrashSite* site = nullptr;  // the caller's crash mark, carried to the pool threads
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable all_done;

  void Release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Claims and runs chunks until none is left. The first exception is kept (exactly once);
  // after it the remaining chunks are counted as done without running.
  void Work() noexcept {
    ParallelRegionScope region;
    for (;;) {
      int64_t c = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (c >= num_chunks) return;
      if (!failed.load(std::memory_order_relaxed)) {
        const ChunkBounds b = BoundsOfChunk(begin, end, chunk, c);
        try {
          run(fn, b.lo, b.hi);
        } catch (...) {
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
      if (done_chunks.fetch_add(1, std::memory_order_acq_rel) + 1 == num_chunks) {
        std::lock_guard<std::mutex> lock(mutex);
        all_done.notify_all();
      }
    }
  }

  // Schedules up to `at_most` of the tasks not yet scheduled, unless the caller is done or no
  // chunk is left. The seq_cst pair (`scheduling` up, then `closed` read; the caller's `closed`
  // set, then `scheduling` read) means the caller either sees this thread here and waits for it,
  // or this thread sees the caller done and leaves the pool alone.
  void ScheduleMore(int64_t at_most) noexcept {
    scheduling.fetch_add(1, std::memory_order_seq_cst);
    if (!closed.load(std::memory_order_seq_cst)) {
      for (int64_t i = 0; i < at_most; ++i) {
        int64_t left = unscheduled.load(std::memory_order_relaxed);
        do {
          if (left <= 0) break;
        } while (!unscheduled.compare_exchange_weak(left, left - 1, std::memory_order_relaxed));
        if (left <= 0 || next_chunk.load(std::memory_order_relaxed) >= num_chunks) break;
        refs.fetch_add(1, std::memory_order_relaxed);
        if (!pool->schedule(&Task, this)) {
          refs.fetch_sub(1, std::memory_order_relaxed);  // this thread still holds its own
          unscheduled.store(0, std::memory_order_relaxed);
          break;
        }
      }
    }
    scheduling.fetch_sub(1, std::memory_order_seq_cst);
  }

  // The caller, its own chunks claimed: from here on no task schedules another, and those in
  // the middle of scheduling are waited for (a schedule call does not block).
  void Close() noexcept {
    closed.store(true, std::memory_order_seq_cst);
    while (scheduling.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }

  static void Task(void* data) noexcept {
    auto* job = static_cast<ParallelJob*>(data);
    FrameSiteScope mark(job->site);  // a crash in this chunk names the function too
    job->ScheduleMore(2);
    job->Work();
    job->Release();
  }
};

template <typename Fn>
void RunChunk(void* fn, int64_t lo, int64_t hi) {
  auto& f = *static_cast<std::remove_reference_t<Fn>*>(fn);
  if constexpr (std::is_invocable_v<decltype(f), int64_t, int64_t>) {
    f(lo, hi);
  } else {
    static_assert(std::is_invocable_v<decltype(f), int64_t>,
                  "jaxcc::parallel_for: fn must be callable as fn(int64_t i) or "
                  "fn(int64_t begin, int64_t end)");
    for (int64_t i = lo; i < hi; ++i) f(i);
  }
}

}  // namespace detail

/// Runs fn over [begin, end) on `pool`: fn(i) for each index, or fn(lo, hi) for each chunk of at
/// least `grain` indices (the last may be shorter). Returns once every chunk has finished; the
/// first exception any chunk threw (a JAXCC_CHECK / BE_CHECK failure included) is rethrown here,
/// once, and chunks not yet started are skipped. Serial (in the calling thread) when `pool` is
/// null, has one thread, the range fits one chunk, or this thread already runs chunks of a
/// parallel_for that fanned out (a one-chunk loop does not count: its inner loops still fan
/// out). Any int64_t begin <= end and grain > 0 is exact, INT64_MIN to INT64_MAX and grain
/// INT64_MAX ("never split") included; std::invalid_argument for end < begin or grain <= 0.
template <typename Fn>
void parallel_for(ThreadPool* pool, int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
  detail::CheckRange(begin, end, grain);
  if (end == begin) return;
  const detail::ChunkPlan plan = detail::PlanChunks(begin, end, grain);
  const int64_t num_chunks = plan.num_chunks;
  const int64_t threads = pool ? pool->num_threads() : 1;
  if (threads <= 1 || num_chunks == 1 || detail::InParallelRegion()) {
    // No region is opened here: this thread schedules nothing, so a parallel_for inside fn may
    // still fan out on the pool (a one-chunk outer loop must not serialise its inner one).
    detail::RunChunk<Fn>(const_cast<void*>(static_cast<const void*>(&fn)), begin, end);
    return;
  }
  auto* job = new detail::ParallelJob;
  job->num_chunks = num_chunks;
  job->begin = begin;
  job->end = end;
  job->chunk = plan.chunk;
  job->run = &detail::RunChunk<Fn>;
  job->fn = const_cast<void*>(static_cast<const void*>(&fn));
  job->site = detail::CurrentSite();
  job->pool = pool;
  job->unscheduled.store((threads < num_chunks ? threads : num_chunks) - 1,
                         std::memory_order_relaxed);
  job->ScheduleMore(2);
  job->Work();
  job->Close();
  if (job->done_chunks.load(std::memory_order_acquire) != num_chunks) {
    std::unique_lock<std::mutex> lock(job->mutex);
    job->all_done.wait(lock, [job] {
      return job->done_chunks.load(std::memory_order_acquire) == job->num_chunks;
    });
  }
  std::exception_ptr error = job->error;
  job->Release();
  if (error) std::rethrow_exception(error);
}

template <typename Fn>
void parallel_for(ThreadPool& pool, int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
  parallel_for(&pool, begin, end, grain, std::forward<Fn>(fn));
}

namespace detail {

/// The pool of the call this thread is running: set by the bridge of a function that takes a
/// `jaxcc::ThreadPool&` for the duration of the call, null elsewhere.
inline ThreadPool*& CurrentPool() noexcept {
  static thread_local ThreadPool* pool = nullptr;
  return pool;
}

class CurrentPoolScope {
 public:
  explicit CurrentPoolScope(ThreadPool* pool) noexcept : previous_(CurrentPool()) {
    CurrentPool() = pool;
  }
  ~CurrentPoolScope() { CurrentPool() = previous_; }
  CurrentPoolScope(const CurrentPoolScope&) = delete;
  CurrentPoolScope& operator=(const CurrentPoolScope&) = delete;

 private:
  ThreadPool* previous_;
};

}  // namespace detail

/// parallel_for on the pool of the current call: helpers deep inside a kernel need not pass the
/// pool along. Only a function that takes a `jaxcc::ThreadPool&` parameter has one (that
/// parameter is how jaxcc knows to ask XLA for it); anywhere else this runs serially.
template <typename Fn>
void parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
  parallel_for(detail::CurrentPool(), begin, end, grain, std::forward<Fn>(fn));
}

template <typename Fn>
void ThreadPool::parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
  ::jaxcc::parallel_for(this, begin, end, grain, std::forward<Fn>(fn));
}

}  // namespace jaxcc

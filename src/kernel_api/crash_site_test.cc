// The crash report's mark (jaxcc/detail/crash_site.h, decision 150b) as kernel code sees it:
// FrameSiteScope sets and restores it, and parallel_for carries it to the pool threads that run
// a function's chunks, so a crash there names the function too. This binary defines the slot
// the way a module's frame runtime does (the loader's accessor stands in as a thread-local here).
#include "jaxcc/detail/crash_site.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "jaxcc/parallel.h"

namespace {
thread_local const jaxcc::detail::FrameCrashSite* test_site = nullptr;
const jaxcc::detail::FrameCrashSite** TestSlot() { return &test_site; }
}  // namespace

jaxcc::detail::FrameSiteSlot jaxcc::detail::frame_site_slot = &TestSlot;

namespace jaxcc::detail {
namespace {

constexpr FrameCrashSite kOuter = {"mod", "outer", "<mod>"};
constexpr FrameCrashSite kInner = {"mod", "inner", "<mod>"};

class ThreadPerTask final : public ThreadPool {
 public:
  ~ThreadPerTask() {
    for (std::thread& t : threads_) t.join();
  }
  int64_t num_threads() const noexcept override { return 3; }
  bool schedule(void (*task)(void*), void* data) noexcept override {
    threads_.emplace_back(task, data);
    return true;
  }

 private:
  std::vector<std::thread> threads_;
};

TEST(CrashSite, ScopesNestAndRestoreTheMark) {
  EXPECT_EQ(CurrentSite(), nullptr);
  {
    FrameSiteScope outer(&kOuter);
    EXPECT_EQ(CurrentSite(), &kOuter);
    {
      FrameSiteScope inner(&kInner);
      EXPECT_EQ(CurrentSite(), &kInner);
    }
    EXPECT_EQ(CurrentSite(), &kOuter);
  }
  EXPECT_EQ(CurrentSite(), nullptr);
}

TEST(CrashSite, ParallelForCarriesTheMarkToPoolThreads) {
  ThreadPerTask pool;
  std::atomic<int> arrived{0}, marked{0}, foreign{0};
  const auto caller = std::this_thread::get_id();
  {
    FrameSiteScope mark(&kOuter);
    // Two chunks that wait (bounded) for each other: one runs on a pool thread.
    pool.parallel_for(0, 2, 1, [&](int64_t) {
      if (std::this_thread::get_id() != caller) foreign.fetch_add(1);
      if (CurrentSite() == &kOuter) marked.fetch_add(1);
      arrived.fetch_add(1);
      for (int spin = 0; arrived.load() < 2 && spin < 2000000; ++spin) std::this_thread::yield();
    });
  }
  EXPECT_EQ(foreign.load(), 1);
  EXPECT_EQ(marked.load(), 2);  // the caller's chunk and the pool thread's
}

}  // namespace
}  // namespace jaxcc::detail

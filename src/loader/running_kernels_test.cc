// The process-wide table of running kernels (decision 182): a thread's mark is seen from every
// thread, a row is given back when its thread ends, and a thread that ends inside a kernel keeps
// naming it.
#include "loader/running_kernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace jaxcc::loader {
namespace {

constexpr KernelSite kA = {"mod", "a", "<mod>"};
constexpr KernelSite kB = {"mod", "b", "<mod>"};

bool Running(const KernelSite* site) {
  const KernelSite* found[8];
  const int n = RunningKernels(found, 8);
  for (int i = 0; i < n; ++i) {
    if (found[i] == site) return true;
  }
  return false;
}

TEST(RunningKernels, AMarkIsSeenFromEveryThreadAndOnlyWhileItIsSet) {
  std::atomic<int> stage{0};
  std::thread worker([&] {
    *KernelSiteSlot() = &kA;
    EXPECT_EQ(ThisThreadKernel(), &kA);
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    *KernelSiteSlot() = nullptr;
    stage = 3;
    while (stage.load() != 4) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  EXPECT_EQ(ThisThreadKernel(), nullptr);  // this thread carries no mark of its own
  EXPECT_TRUE(Running(&kA));
  stage = 2;
  while (stage.load() != 3) std::this_thread::yield();
  EXPECT_FALSE(Running(&kA));
  stage = 4;
  worker.join();
}

TEST(RunningKernels, OneSiteOnManyThreadsIsNamedOnce) {
  std::atomic<int> marked{0};
  std::atomic<bool> done{false};
  std::thread first([&] {
    *KernelSiteSlot() = &kB;
    ++marked;
    while (!done) std::this_thread::yield();
    *KernelSiteSlot() = nullptr;
  });
  std::thread second([&] {
    *KernelSiteSlot() = &kB;
    ++marked;
    while (!done) std::this_thread::yield();
    *KernelSiteSlot() = nullptr;
  });
  while (marked.load() != 2) std::this_thread::yield();
  const KernelSite* found[8];
  int n = RunningKernels(found, 8), b = 0;
  for (int i = 0; i < n; ++i) b += found[i] == &kB;
  EXPECT_EQ(b, 1);
  done = true;
  first.join();
  second.join();
}

TEST(RunningKernels, RowsOfEndedThreadsAreReusedAndAThreadEndingInAKernelStaysNamed) {
  for (int i = 0; i < 3000; ++i) {  // more threads than rows, one after the other
    std::thread([] {
      *KernelSiteSlot() = &kA;
      *KernelSiteSlot() = nullptr;
    }).join();
  }
  EXPECT_FALSE(Running(&kA));
  constexpr KernelSite kEnded = {"mod", "ended_inside", "<mod>"};
  std::thread([&] { *KernelSiteSlot() = &kEnded; }).join();
  EXPECT_TRUE(Running(&kEnded));
}

}  // namespace
}  // namespace jaxcc::loader

#include "loader/running_kernels.h"

#include <atomic>

namespace jaxcc::loader {
namespace {

constexpr int kRows = 1024;

// One row per thread that ever marked itself, on a cache line of its own: the handlers of
// different threads store to their own lines and never share one.
struct alignas(64) Row {
  const KernelSite* volatile site;
  std::atomic<bool> owned;
};
Row g_rows[kRows];
std::atomic<int> g_rows_used{0};  // rows [0, used) have been claimed at least once

// Initial-exec: in the thread's static TLS block, so a signal handler reads it with one load (a
// dlopen'ed library's own thread-locals can make __tls_get_addr allocate on first touch).
__attribute__((tls_model("initial-exec"))) thread_local const KernelSite** t_slot = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local const KernelSite* t_overflow = nullptr;

// Gives the row back when its thread ends, its mark null again (every scope that set it has
// restored it). A thread that ends inside a kernel keeps its row: exit() runs the main thread's
// thread_local destructors before the atexit hook that names the kernel, and pthread_exit()
// in a kernel leaves a row that names it for the rest of the process.
struct RowRelease {
  int row = -1;
  ~RowRelease() {
    if (row < 0 || g_rows[row].site != nullptr) return;
    g_rows[row].site = nullptr;
    g_rows[row].owned.store(false, std::memory_order_release);
    t_slot = nullptr;
  }
};
thread_local RowRelease t_release;

const KernelSite** ClaimSlot() {
  for (int i = 0; i < kRows; ++i) {
    bool expected = false;
    if (g_rows[i].owned.load(std::memory_order_relaxed) ||
        !g_rows[i].owned.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      continue;
    }
    int used = g_rows_used.load(std::memory_order_relaxed);
    while (used < i + 1 &&
           !g_rows_used.compare_exchange_weak(used, i + 1, std::memory_order_release)) {
    }
    t_release.row = i;
    t_slot = const_cast<const KernelSite**>(&g_rows[i].site);
    return t_slot;
  }
  t_slot = &t_overflow;  // past the table: this thread's own reports still see its mark
  return t_slot;
}

}  // namespace

const KernelSite** KernelSiteSlot() {
  const KernelSite** slot = t_slot;
  return __builtin_expect(slot != nullptr, 1) ? slot : ClaimSlot();
}

const KernelSite* ThisThreadKernel() {
  const KernelSite** slot = t_slot;
  return slot != nullptr ? *static_cast<const KernelSite* volatile*>(slot) : nullptr;
}

int RunningKernels(const KernelSite** out, int max) {
  const int used = g_rows_used.load(std::memory_order_acquire);
  int found = 0;
  for (int i = 0; i < used && i < kRows && found < max; ++i) {
    const KernelSite* site = g_rows[i].site;
    if (site == nullptr) continue;
    bool seen = false;
    for (int k = 0; k < found; ++k) seen = seen || out[k] == site;
    if (!seen) out[found++] = site;
  }
  return found;
}

}  // namespace jaxcc::loader

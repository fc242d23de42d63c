// What every end-of-process report of jaxcc writes (the fatal-signal report, crash_report.cc; the
// terminate and exit reports, process_end_report.cc): async-signal-safe output on stderr, and
// the sentence that names the kernel the event happened in.
#pragma once

#include <cstdint>

#include "loader/running_kernels.h"

namespace jaxcc::loader {

/// `text` on fd 2 with write(2), retried on EINTR. Async-signal-safe.
void Put(const char* text);

/// `value` as 0x<hex> on fd 2. Async-signal-safe.
void PutHex(std::uintptr_t value);

/// The kernels an event on this thread is reported against: the thread's own mark, else (a
/// thread without one: an OpenMP worker, a thread a kernel started) those running anywhere in
/// the process.
struct KernelsNow {
  static constexpr int kMax = 8;
  const KernelSite* own = nullptr;
  const KernelSite* running[kMax] = {};
  int count = 0;  ///< of `running`, when `own` is null

  /// Fills the fields in; false when no kernel runs at all (then jaxcc says nothing).
  bool Find();
};

/// Ends the report's first line after what happened: " in jaxcc kernel 'f' of module 'm' (XLA
/// FFI target 'm.f')\n" for the thread's own mark; for a thread without one, that it has none
/// and which kernels run now. Then "jaxcc:   defined in <source>" of each. Async-signal-safe.
void PutWhere(const KernelsNow& kernels);

/// The debug profile's rerun hint, the report's last line. Async-signal-safe.
void PutRerunHint();

}  // namespace jaxcc::loader

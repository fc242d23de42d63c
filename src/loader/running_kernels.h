// Which jaxcc kernels run now, on this thread and in the whole process (decision 182): the slot a
// generated handler marks its thread with (include/jaxcc/detail/crash_site.h) lives in a
// process-wide table, one cache line per thread, so that a report on a thread that carries no
// mark (an OpenMP worker, a std::thread the kernel started) can still name the kernel running.
// Marking costs the handler what it cost before: a call for the slot's address and two stores.
#pragma once

namespace jaxcc::loader {

/// Mirrors jaxcc::detail::FrameCrashSite (crash_site.h): _core does not include the kernel
/// headers; the layout is three C strings.
struct KernelSite {
  const char* module;
  const char* function;
  const char* source;
};

/// This thread's slot (the accessor every library receives): claimed in the process-wide table on
/// the thread's first call and released when the thread ends; a thread beyond the table's 1024
/// rows gets a slot of its own that only its own reports see. Not async-signal-safe (the first
/// call claims a row); everything below is.
const KernelSite** KernelSiteSlot();

/// The mark this thread carries now, or null. Async-signal-safe: one initial-exec TLS load.
const KernelSite* ThisThreadKernel();

/// Up to `max` distinct sites that threads of the process are marked with now, into `out`; the
/// number found. Async-signal-safe: reads the table's rows and nothing else. A row is read while
/// its thread may change it: a kernel that returns that instant may still be named, which a
/// dying process's report accepts.
int RunningKernels(const KernelSite** out, int max);

}  // namespace jaxcc::loader

// The crash report (decisions 150b, 181-183): a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGABRT), std::terminate, exit() or quick_exit() while a jaxcc function runs names the
// function, its module and source, the source line where the library has debug information, and
// how to rerun under the debug profile; then the process ends as it would have (the previous
// action, Python's faulthandler included, runs next; exit statuses are kept). With no function
// running it prints nothing.
//
// Which function runs: every generated handler marks its thread around the user's call
// (include/jaxcc/detail/crash_site.h) in a slot of running_kernels.h's process-wide table, whose
// accessor the library receives when LoadLibrary maps it. A thread without a mark (an OpenMP
// worker, a thread the kernel started) is reported against the functions running in the process.
#pragma once

#include <string>

#include "util/result.h"

namespace jaxcc::loader {

/// Installs the handlers (once per process, unless JAXCC_CRASH_REPORT=0) and hands the library
/// `handle` (mapped from `path`) the slot's accessor, if it has the hook (libraries built
/// before decision 150b have not: they are left as they are). kSpec error for a
/// JAXCC_CRASH_REPORT that is neither 0 nor 1.
Status AttachCrashReport(void* handle);

/// The site this thread is running now (null outside any function): for tests.
const void* CurrentCrashSite();

}  // namespace jaxcc::loader

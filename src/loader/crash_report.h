// The crash report (decision 150b): a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL) raised
// while a jaxcc function runs names the function, its module and source, the source line where
// the library has debug information, and how to rerun under the debug profile; then the
// process dies as it would have (the previous action, Python's faulthandler included, runs
// next). Outside a function it prints nothing.
//
// Which function runs: every generated handler marks its thread around the user's call
// (include/jaxcc/detail/crash_site.h) in a thread-local slot of this file, whose accessor the
// library receives when LoadLibrary maps it. The slot is initial-exec TLS: it sits in the
// thread's static block, so the signal handler reads it without the dynamic loader (a
// dlopen'ed library's own thread-locals can make __tls_get_addr allocate on first touch, which
// a handler must never do).
#pragma once

#include <string>

#include "util/result.h"

namespace jaxcc::loader {

/// Installs the handler (once per process, unless JAXCC_CRASH_REPORT=0) and hands the library
/// `handle` (mapped from `path`) the slot's accessor, if it has the hook (libraries built
/// before decision 150b have not: they are left as they are). kSpec error for a
/// JAXCC_CRASH_REPORT that is neither 0 nor 1.
Status AttachCrashReport(void* handle);

/// The site this thread is running now (null outside any function): for tests.
const void* CurrentCrashSite();

}  // namespace jaxcc::loader

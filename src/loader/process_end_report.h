// The ways a process ends inside a kernel besides a fault (issue 49 item 14, decisions 181-183):
// std::terminate (an exception out of a noexcept function, a destructor, an OpenMP region or a
// std::thread) names the kernel and the exception's type and text, then hands over to the
// previous terminate handler; exit() and quick_exit() called while a kernel runs name it on the
// way out, and the process keeps the kernel's status; so do _exit() and _Exit() called by a
// module's own code, which the module's frame runtime defines to report through
// ReportExitCall first (decision 184). SIGABRT (abort(), a failed assert) is the fatal-signal
// report's (crash_report.cc).
#pragma once

namespace jaxcc::loader {

/// Installs the terminate handler (chained to the one it replaces) and the atexit and
/// at_quick_exit hooks. Called once per process, with the fatal-signal handler.
void InstallProcessEndReport();

/// Names the running kernel, if any, for `how` ("_exit()"): the hook a module's own _exit and
/// _Exit call before they end the process (`jaxcc_exit_attach`). Silent in a forked child,
/// whose exit ends only itself.
void ReportExitCall(const char* how);

/// Claims the single report a dying process prints: true for the first caller only, so the
/// SIGABRT that follows a terminate report, or a fault during an exit report, adds nothing.
/// Async-signal-safe.
bool ClaimTheReport();

}  // namespace jaxcc::loader

// The ways a process ends inside a kernel besides a fault (issue 49 item 14, decisions 181-183):
// std::terminate (an exception out of a noexcept function, a destructor, an OpenMP region or a
// std::thread) names the kernel and the exception's type and text, then hands over to the
// previous terminate handler; exit() and quick_exit() called while a kernel runs name it on the
// way out, and the process keeps the kernel's status. SIGABRT (abort(), a failed assert) is the
// fatal-signal report's (crash_report.cc). _exit and _Exit end the process with no hook to run:
// see docs/reliability.md.
#pragma once

namespace jaxcc::loader {

/// Installs the terminate handler (chained to the one it replaces) and the atexit and
/// at_quick_exit hooks. Called once per process, with the fatal-signal handler.
void InstallProcessEndReport();

/// Claims the single report a dying process prints: true for the first caller only, so the
/// SIGABRT that follows a terminate report, or a fault during an exit report, adds nothing.
/// Async-signal-safe.
bool ClaimTheReport();

}  // namespace jaxcc::loader

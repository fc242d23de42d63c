#include "loader/process_end_report.h"

#include <cxxabi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <typeinfo>

#include "loader/report_text.h"

namespace jaxcc::loader {
namespace {

std::atomic<bool> g_reported{false};
pid_t g_pid = 0;  // the process the hooks were installed in
std::terminate_handler g_previous_terminate = nullptr;

// "jaxcc:   uncaught exception <type>: <what()>", or that none is active.
void PutCurrentException() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (type == nullptr) {
    Put("jaxcc:   no exception is active: std::terminate was called directly, or a std::thread "
        "was destroyed while still joinable\n");
    return;
  }
  int status = 0;
  char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  Put("jaxcc:   uncaught exception ");
  Put(demangled != nullptr ? demangled : type->name());
  std::free(demangled);
  try {
    std::rethrow_exception(std::current_exception());
  } catch (const std::exception& e) {
    Put(": ");
    Put(e.what());
  } catch (...) {
  }
  Put("\n");
}

[[noreturn]] void OnTerminate() {
  KernelsNow kernels;
  const bool in_kernel = kernels.Find();
  if (in_kernel && !ClaimTheReport()) {
    // Another thread is reporting (several OpenMP workers throwing at once): chaining now would
    // interleave the C++ runtime's own message with that report. That thread ends the process;
    // wait for it, for a bounded time in case the report was claimed by one that went on.
    for (int i = 0; i < 100; ++i) ::usleep(100000);
  } else if (in_kernel) {
    Put("\njaxcc: std::terminate called");
    PutWhere(kernels);
    PutCurrentException();
    Put("jaxcc:   an exception left code it cannot leave (a noexcept function, a destructor, an "
        "OpenMP parallel region, a std::thread's function), which ends the process. Check "
        "inputs before a parallel region, where an exception still fails only the call: take "
        "data_ptr<T>() before `#pragma omp parallel`, or declare the dtype in the arg_spec "
        "(`arg:float32`, checked before the kernel runs); see docs/usage.md, \"Debugging a "
        "kernel\"\n");
  }
  std::terminate_handler previous = g_previous_terminate;
  if (previous != nullptr && previous != &OnTerminate) previous();
  std::abort();
}

void ReportExit(const char* how) {
  // A child forked inside a kernel carries the kernel's mark; its exit ends only itself.
  if (::getpid() != g_pid) return;
  KernelsNow kernels;
  if (!kernels.Find()) return;
  // The interpreter's own exit (sys.exit, the end of the script) runs on the main thread: with
  // no mark there, a kernel running elsewhere did not end the process.
  if (kernels.own == nullptr && ::syscall(SYS_gettid) == ::getpid()) return;
  if (!ClaimTheReport()) return;
  Put("\njaxcc: ");
  Put(how);
  Put(" called");
  PutWhere(kernels);
  Put("jaxcc:   the whole Python process ends here with the status it was given. A kernel fails "
      "one call, not the process, by throwing (JAXCC_CHECK, jaxcc::CheckError): the call then "
      "raises a KernelError\n");
}

void OnExit() { ReportExit("exit()"); }
void OnQuickExit() { ReportExit("quick_exit()"); }

}  // namespace

bool ClaimTheReport() { return !g_reported.exchange(true); }

void ReportExitCall(const char* how) { ReportExit(how); }

void InstallProcessEndReport() {
  g_pid = ::getpid();
  g_previous_terminate = std::set_terminate(&OnTerminate);
  std::atexit(&OnExit);
  std::at_quick_exit(&OnQuickExit);
}

}  // namespace jaxcc::loader

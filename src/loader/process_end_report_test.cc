// The crash report at every way a process can end inside a kernel (issue 49 items 14-16,
// decisions 181-184): abort (SIGABRT), std::terminate, exit and quick_exit, and faults on threads
// that carry no mark while a kernel runs. Each case runs in a child (a death test): it attaches
// the report the way LoadLibrary does (this binary exports the libraries' hook), marks the
// thread as a generated handler does, and ends; the child must die as it would have without
// jaxcc (same signal, same status) with the kernel named on stderr.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "loader/crash_report.h"
#include "loader/running_kernels.h"

namespace {

// _core's mirror of jaxcc::detail::FrameCrashSite: the hook's exact type in this binary, which
// UBSan's function-type check compares (a module is not built with it).
using Site = jaxcc::loader::KernelSite;
using SlotAccessor = const Site** (*)();
SlotAccessor g_slot = nullptr;

}  // namespace

// What a module's frame runtime unit defines: the loader hands it the slot's accessor, and the
// report its own _exit and _Exit make before they end the process.
extern "C" __attribute__((visibility("default"))) int jaxcc_crash_attach(SlotAccessor slot) {
  g_slot = slot;
  return 1;
}
namespace {
void (*g_exit_report)(const char*) = nullptr;
}  // namespace
extern "C" __attribute__((visibility("default"))) int jaxcc_exit_attach(
    void (*report)(const char*)) {
  g_exit_report = report;
  return 1;
}

namespace jaxcc::loader {
namespace {

constexpr Site kKernel = {"mod", "kern", "<inline source of mod>"};

// Attaches the report to this binary (as LoadLibrary does to a module) and marks this thread
// with kKernel, as a generated handler does around the user's call.
void AttachAndMark() {
  void* self = ::dlopen(nullptr, RTLD_NOW);
  if (self == nullptr || !AttachCrashReport(self).ok() || g_slot == nullptr) std::_Exit(99);
  *g_slot() = &kKernel;
}

#pragma GCC diagnostic ignored "-Wterminate"  // the point of the function
[[noreturn]] void ThrowOutOfNoexcept() noexcept {
  throw std::runtime_error("parameter 'x' is int32, but the kernel reads it as float");
}

void Fault() { *static_cast<volatile int*>(nullptr) = 1; }

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// Died of SIGSEGV, as without jaxcc: the report hands the fault to the previous action, which
// under AddressSanitizer (scripts/sanitize.sh) is ASan's own SEGV report and exit status 1.
bool DiedOfTheFault(int status) {
  if (kAsan) return WIFEXITED(status) && WEXITSTATUS(status) == 1;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

class ProcessEndReportDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(ProcessEndReportDeathTest, AbortInAKernelNamesIt) {
  EXPECT_EXIT(
      {
        AttachAndMark();
        std::abort();
      },
      ::testing::KilledBySignal(SIGABRT),
      "jaxcc: fatal signal SIGABRT .*in jaxcc kernel 'kern' of module 'mod'.*"
      "defined in <inline source of mod>");
}

TEST_F(ProcessEndReportDeathTest, TerminateNamesTheKernelAndTheException) {
  EXPECT_EXIT(
      {
        AttachAndMark();
        ThrowOutOfNoexcept();
      },
      ::testing::KilledBySignal(SIGABRT),
      "jaxcc: std::terminate .*in jaxcc kernel 'kern' of module 'mod'.*"
      "std::runtime_error: parameter 'x' is int32, but the kernel reads it as float");
}

TEST_F(ProcessEndReportDeathTest, ExitInAKernelNamesItAndKeepsTheStatus) {
  EXPECT_EXIT(
      {
        AttachAndMark();
        std::exit(3);
      },
      ::testing::ExitedWithCode(3),
      "jaxcc: exit\\(\\) called in jaxcc kernel 'kern' of module 'mod'");
}

TEST_F(ProcessEndReportDeathTest, QuickExitInAKernelNamesItAndKeepsTheStatus) {
  EXPECT_EXIT(
      {
        AttachAndMark();
        std::quick_exit(4);
      },
      ::testing::ExitedWithCode(4),
      "jaxcc: quick_exit\\(\\) called in jaxcc kernel 'kern' of module 'mod'");
}

TEST_F(ProcessEndReportDeathTest, UnderscoreExitOfAModuleNamesTheKernelAndKeepsTheStatus) {
  // A module's frame runtime defines _exit as this report, then the exit_group system call.
  EXPECT_EXIT(
      {
        AttachAndMark();
        if (g_exit_report == nullptr) std::_Exit(99);
        g_exit_report("_exit()");
        ::_exit(5);
      },
      ::testing::ExitedWithCode(5),
      "jaxcc: _exit\\(\\) called in jaxcc kernel 'kern' of module 'mod'");
}

TEST_F(ProcessEndReportDeathTest, AChildForkedInAKernelExitsSilently) {
  // The child carries the kernel's mark, but its exit ends only itself.
  EXPECT_EXIT(
      {
        AttachAndMark();
        const pid_t child = ::fork();
        if (child == 0) {
          g_exit_report("_exit()");
          ::_exit(0);
        }
        ::waitpid(child, nullptr, 0);
        if (::fork() == 0) std::exit(0);  // the atexit hook in a child
        ::wait(nullptr);
        std::fputs("children done\n", stderr);
        *g_slot() = nullptr;
        std::_Exit(7);
      },
      ::testing::ExitedWithCode(7), "^children done\n$");
}

TEST_F(ProcessEndReportDeathTest, TheMainThreadsExitWhileAKernelRunsElsewhereSaysNothing) {
  // sys.exit or the end of the script while an asynchronous kernel still runs on a worker.
  EXPECT_EXIT(
      {
        AttachAndMark();
        *g_slot() = nullptr;
        std::atomic<bool> marked{false};
        std::thread([&] {
          *g_slot() = &kKernel;
          marked = true;
          for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        }).detach();
        while (!marked) std::this_thread::yield();
        std::fputs("plain exit\n", stderr);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "^plain exit\n$");
}

TEST_F(ProcessEndReportDeathTest, ExitOnAThreadWithoutAMarkNamesTheRunningKernel) {
  // An OpenMP worker or a thread the kernel started calls exit() while the kernel waits for it.
  EXPECT_EXIT(
      {
        AttachAndMark();
        std::thread([] { std::exit(8); }).join();
      },
      ::testing::ExitedWithCode(8),
      "jaxcc: exit\\(\\) called on a thread without a jaxcc mark.*jaxcc kernel 'kern'");
}

TEST_F(ProcessEndReportDeathTest, FaultOnAThreadWithoutAMarkNamesTheRunningKernel) {
  // An OpenMP worker or a std::thread the kernel started: no mark of its own.
  EXPECT_EXIT(
      {
        AttachAndMark();
        std::thread(Fault).join();
      },
      DiedOfTheFault,
      "jaxcc: fatal signal SIGSEGV .*on a thread without a jaxcc mark.*"
      "jaxcc kernel 'kern' of module 'mod'");
}

TEST_F(ProcessEndReportDeathTest, FaultInAModuleWhileNoKernelRunsNamesTheLibrary) {
  // A thread a kernel started that outlived the call: no mark anywhere, the code is a module's.
  EXPECT_EXIT(
      {
        AttachAndMark();
        *g_slot() = nullptr;
        std::thread(Fault).join();
      },
      DiedOfTheFault,
      "jaxcc: fatal signal SIGSEGV .* in the library of a jaxcc module while none of its "
      "kernels runs");
}

TEST_F(ProcessEndReportDeathTest, TerminateOnAThreadWithoutAMarkNamesTheRunningKernel) {
  // An exception that escapes an OpenMP region ends in std::terminate on the worker.
  EXPECT_EXIT(
      {
        AttachAndMark();
        std::thread(ThrowOutOfNoexcept).join();
      },
      ::testing::KilledBySignal(SIGABRT),
      "jaxcc: std::terminate .*on a thread without a jaxcc mark.*"
      "jaxcc kernel 'kern' of module 'mod'.*std::runtime_error: parameter 'x' is int32");
}

TEST_F(ProcessEndReportDeathTest, AbortOutsideAnyKernelSaysNothing) {
  EXPECT_EXIT(
      {
        AttachAndMark();
        *g_slot() = nullptr;  // the kernel returned
        std::fputs("plain abort\n", stderr);
        std::abort();
      },
      ::testing::KilledBySignal(SIGABRT), "^plain abort\n$");
}

}  // namespace
}  // namespace jaxcc::loader

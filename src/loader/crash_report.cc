#include "loader/crash_report.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "loader/process_end_report.h"
#include "loader/report_text.h"
#include "loader/running_kernels.h"
#include "util/env_setting.h"

extern char** environ;

namespace jaxcc::loader {
namespace {

// ---- What the handler may touch: fixed-size, filled before any handler of a library runs ----

struct MappedLibrary {
  std::uintptr_t begin, end;  // the PT_LOAD segments' extent
  std::uintptr_t bias;        // load bias: addresses in the file are pc - bias
  char path[512];
};
constexpr int kMaxLibraries = 4096;
MappedLibrary g_libraries[kMaxLibraries];
std::atomic<int> g_num_libraries{0};

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
struct sigaction g_previous[kNumSignals];

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
  }
  return "a fatal signal";
}

const char* SignalMeaning(int sig, int code) {
  if (sig == SIGFPE && code == FPE_INTDIV) return "integer divide by zero";
  if (sig == SIGFPE && code == FPE_INTOVF) return "integer overflow";
  if (sig == SIGFPE) return "arithmetic fault";
  if (sig == SIGSEGV) return "invalid memory access";
  if (sig == SIGBUS) return "bus error (misaligned or unmapped access)";
  if (sig == SIGILL) return "illegal instruction";
  if (sig == SIGABRT) return "abort: abort(), a failed assert() or std::terminate";
  return "fatal signal";
}

std::uintptr_t FaultingPc(void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

const MappedLibrary* LibraryAt(std::uintptr_t pc) {
  const int n = g_num_libraries.load(std::memory_order_acquire);
  for (int i = 0; i < n && i < kMaxLibraries; ++i) {
    if (pc >= g_libraries[i].begin && pc < g_libraries[i].end) return &g_libraries[i];
  }
  return nullptr;
}

// Copies "<dir>/addr2line" for the first directory of $PATH that has it into `out`.
bool FindAddr2line(char* out, std::size_t size) {
  const char* path = nullptr;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  }
  if (path == nullptr) path = "/usr/bin:/bin";
  constexpr char kTool[] = "/addr2line";
  while (*path != '\0') {
    std::size_t len = 0;
    while (path[len] != '\0' && path[len] != ':') ++len;
    if (len > 0 && len + sizeof(kTool) < size) {
      std::memcpy(out, path, len);
      std::memcpy(out + len, kTool, sizeof(kTool));
      if (::access(out, X_OK) == 0) return true;
    }
    path += len;
    if (*path == ':') ++path;
  }
  return false;
}

// The function and file:line of `pc` from the library's debug information, through addr2line in
// a child process: a raw fork (no atfork handlers, which may lock), then only dup2, execve and
// _exit in the child, and poll/read/waitpid bounded to 3 s here. The process is dying; what this
// risks is at worst the report's last line, never the death itself.
void PutSourceLine(const MappedLibrary& library, std::uintptr_t pc) {
  char tool[512];
  if (!FindAddr2line(tool, sizeof(tool))) return;
  char address[2 + 2 * sizeof(pc) + 1];
  {
    std::uintptr_t value = pc - library.bias;
    char* p = address + sizeof(address) - 1;
    *p = '\0';
    do {
      *--p = "0123456789abcdef"[value & 15];
      value >>= 4;
    } while (value != 0);
    *--p = 'x';
    *--p = '0';
    std::memmove(address, p, static_cast<std::size_t>(address + sizeof(address) - p));
  }
  int out[2];
  if (::pipe(out) != 0) return;
#if defined(SYS_fork)
  const long child = ::syscall(SYS_fork);
#else
  const long child = ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
  if (child < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return;
  }
  if (child == 0) {
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    char* argv[] = {const_cast<char*>("addr2line"),
                    const_cast<char*>("-f"),
                    const_cast<char*>("-C"),
                    const_cast<char*>("-e"),
                    const_cast<char*>(library.path),
                    address,
                    nullptr};
    ::execve(tool, argv, environ);
    ::_exit(127);
  }
  ::close(out[1]);
  char text[2048];
  std::size_t used = 0;
  for (int waited = 0; used + 1 < sizeof(text) && waited < 30;) {
    pollfd p{out[0], POLLIN, 0};
    int ready = ::poll(&p, 1, 100);
    if (ready == 0) {
      ++waited;
      continue;
    }
    if (ready < 0 && errno == EINTR) continue;
    ssize_t r = ::read(out[0], text + used, sizeof(text) - 1 - used);
    if (r <= 0) break;
    used += static_cast<std::size_t>(r);
  }
  ::close(out[0]);
  ::kill(static_cast<pid_t>(child), SIGKILL);
  ::waitpid(static_cast<pid_t>(child), nullptr, 0);
  text[used] = '\0';
  // addr2line -f prints "function\nfile:line\n"; "??" where it has no debug information.
  char* newline = std::strchr(text, '\n');
  if (newline == nullptr) return;
  *newline = '\0';
  char* where = newline + 1;
  if (char* end = std::strchr(where, '\n')) *end = '\0';
  Put("jaxcc:   in ");
  Put(text);
  std::size_t len = std::strlen(where);
  // "??:0", ":?" or "file:?": the library was built without debug information (-g).
  if (len == 0 || where[0] == '?' || where[0] == ':' || where[len - 1] == '?') {
    Put(" (no source line: the library has no debug information; the debug profile has it)\n");
    return;
  }
  Put(" at ");
  Put(where);
  Put("\n");
}

// `kernels` null: none runs, but the fault is in a jaxcc module's library (a thread a kernel
// started that outlived its call).
void Report(int sig, const siginfo_t* info, void* context, const KernelsNow* kernels) {
  Put("\njaxcc: fatal signal ");
  Put(SignalName(sig));
  Put(" (");
  Put(SignalMeaning(sig, info->si_code));
  if (sig == SIGSEGV || sig == SIGBUS) {
    Put(" at address ");
    PutHex(reinterpret_cast<std::uintptr_t>(info->si_addr));
  }
  Put(")");
  if (kernels != nullptr) {
    PutWhere(*kernels);
  } else {
    Put(" in the library of a jaxcc module while none of its kernels runs (a thread a kernel "
        "started that outlived the call?)\n");
  }
  // A sent signal (abort's raise, kill: si_code <= 0) has no faulting instruction of the kernel.
  const std::uintptr_t pc = info->si_code > 0 ? FaultingPc(context) : 0;
  if (const MappedLibrary* library = pc != 0 ? LibraryAt(pc) : nullptr) {
    Put("jaxcc:   faulting instruction ");
    PutHex(pc - library->bias);
    Put(" of ");
    Put(library->path);
    Put("\n");
    PutSourceLine(*library, pc);
  } else if (pc != 0) {
    Put("jaxcc:   the faulting instruction is outside the module's library (a function it "
        "called, e.g. memcpy)\n");
  }
  PutRerunHint();
}

void OnFatalSignal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  KernelsNow kernels;
  const bool running = kernels.Find();
  // With no kernel running, a fault inside a module's library is still its code's.
  const std::uintptr_t pc = info != nullptr && info->si_code > 0 ? FaultingPc(context) : 0;
  const bool in_a_module = !running && pc != 0 && LibraryAt(pc) != nullptr;
  if ((running || in_a_module) && ClaimTheReport()) {
    Report(sig, info, context, running ? &kernels : nullptr);
  }
  // The previous action back in place, for good: no attempt to continue.
  for (int i = 0; i < kNumSignals; ++i) {
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  }
  errno = saved_errno;
  // A fault re-runs its instruction when this returns and so reaches the previous action with
  // the kernel's own siginfo; a signal that was sent (kill, raise, abort: si_code <= 0) is sent
  // again, and arrives once this handler returns (it is blocked until then).
  if (info == nullptr || info->si_code <= 0) ::raise(sig);
}

void InstallHandler() {
  // An alternate stack for the installing thread (a stack overflow can still be reported
  // there); other threads' handlers run on their own stacks, as Python's faulthandler does.
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) != 0) {
    stack_t stack{};
    stack.ss_size = 64 * 1024;
    stack.ss_sp = std::malloc(stack.ss_size);  // never freed: the thread may outlive any owner
    if (stack.ss_sp != nullptr) ::sigaltstack(&stack, nullptr);
  }
  for (int i = 0; i < kNumSignals; ++i) {
    struct sigaction action {};
    action.sa_sigaction = &OnFatalSignal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(kSignals[i], &action, &g_previous[i]);
  }
  InstallProcessEndReport();
}

struct SegmentSearch {
  std::uintptr_t base;
  MappedLibrary* out;
  bool found;
};

int FindSegments(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<SegmentSearch*>(data);
  std::uintptr_t begin = UINTPTR_MAX, end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    begin = std::min<std::uintptr_t>(begin, info->dlpi_addr + segment.p_vaddr);
    end = std::max<std::uintptr_t>(end, info->dlpi_addr + segment.p_vaddr + segment.p_memsz);
  }
  if (search->base < begin || search->base >= end) return 0;
  search->out->begin = begin;
  search->out->end = end;
  search->out->bias = info->dlpi_addr;
  std::strncpy(search->out->path, info->dlpi_name ? info->dlpi_name : "",
               sizeof(search->out->path) - 1);
  search->found = true;
  return 1;
}

}  // namespace

Status AttachCrashReport(void* handle) {
  using Attach = int (*)(const KernelSite** (*)());
  auto attach = reinterpret_cast<Attach>(::dlsym(handle, "jaxcc_crash_attach"));
  if (attach == nullptr) return OkStatus();
  static Result<bool> enabled = OnOffSetting(
      "JAXCC_CRASH_REPORT", "a fatal signal in a kernel names it", "no signal handler of jaxcc's");
  if (!enabled.ok()) return enabled.error();
  if (!*enabled) return OkStatus();
  static std::once_flag installed;
  std::call_once(installed, InstallHandler);
  static std::mutex table_mutex;
  {
    std::lock_guard<std::mutex> lock(table_mutex);
    const int n = g_num_libraries.load(std::memory_order_relaxed);
    if (n < kMaxLibraries) {
      MappedLibrary& slot = g_libraries[n];
      SegmentSearch search{reinterpret_cast<std::uintptr_t>(attach), &slot, false};
      ::dl_iterate_phdr(&FindSegments, &search);
      bool known = false;  // mapped twice (the same handle): one row
      for (int i = 0; i < n; ++i) known = known || g_libraries[i].begin == slot.begin;
      if (search.found && !known) g_num_libraries.store(n + 1, std::memory_order_release);
    }
  }
  attach(&KernelSiteSlot);
  // The module's own _exit/_Exit report through this (decision 184); older modules lack it.
  using ExitAttach = int (*)(void (*)(const char*));
  if (auto exit_attach = reinterpret_cast<ExitAttach>(::dlsym(handle, "jaxcc_exit_attach"))) {
    exit_attach(&ReportExitCall);
  }
  return OkStatus();
}

const void* CurrentCrashSite() { return ThisThreadKernel(); }

}  // namespace jaxcc::loader

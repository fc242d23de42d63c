#include "loader/report_text.h"

#include <errno.h>
#include <unistd.h>

#include <cstddef>

namespace jaxcc::loader {
namespace {

void PutKernel(const KernelSite& site) {
  Put("jaxcc kernel '");
  Put(site.function);
  Put("' of module '");
  Put(site.module);
  Put("' (XLA FFI target '");
  Put(site.module);
  Put(".");
  Put(site.function);
  Put("')");
}

void PutSource(const KernelSite& site) {
  Put("jaxcc:   '");
  Put(site.function);
  Put("' is defined in ");
  Put(site.source[0] != '\0' ? site.source : "(source unknown)");
  Put("\n");
}

}  // namespace

void Put(const char* text) {
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  while (n > 0) {
    ssize_t w = ::write(2, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

void PutHex(std::uintptr_t value) {
  char buffer[2 + 2 * sizeof(value) + 1];
  char* end = buffer + sizeof(buffer) - 1;
  *end = '\0';
  char* p = end;
  do {
    *--p = "0123456789abcdef"[value & 15];
    value >>= 4;
  } while (value != 0);
  *--p = 'x';
  *--p = '0';
  Put(p);
}

bool KernelsNow::Find() {
  own = ThisThreadKernel();
  count = own != nullptr ? 0 : RunningKernels(running, kMax);
  return own != nullptr || count > 0;
}

void PutWhere(const KernelsNow& kernels) {
  if (kernels.own != nullptr) {
    Put(" in ");
    PutKernel(*kernels.own);
    Put("\njaxcc:   defined in ");
    Put(kernels.own->source[0] != '\0' ? kernels.own->source : "(source unknown)");
    Put("\n");
    return;
  }
  Put(" on a thread without a jaxcc mark (an OpenMP worker, a thread a kernel started, or a "
      "thread of its own) while ");
  Put(kernels.count == 1 ? "this kernel runs: " : "these kernels run: ");
  for (int i = 0; i < kernels.count; ++i) {
    if (i > 0) Put(", ");
    PutKernel(*kernels.running[i]);
  }
  Put("\n");
  for (int i = 0; i < kernels.count; ++i) PutSource(*kernels.running[i]);
}

void PutRerunHint() {
  Put("jaxcc:   rerun under the debug profile for bounds checks, guard zones and source lines: "
      "JAXCC_DEBUG=1 python <your script> (or debug=True on the loader); see docs/usage.md, "
      "\"Debugging a kernel\"\n");
}

}  // namespace jaxcc::loader

"""The C++ side of the Numba CPU bridge: one small XLA FFI target per (inputs, outputs) arity,
compiled and cached by jaxcc's own core, that calls a Numba `cfunc` by address.

ABI between the trampoline and the cfunc (see docs/custom_kernel.md, decisions 39 and 91):
    int32_t entry(void** buffers, const int64_t* dims, void* impl)
`buffers` holds the data pointers of the inputs then the outputs; `dims` holds their dimensions,
concatenated in the same order (the cfunc knows every rank, it was compiled for them); `impl` is
the kernel's native function, which the entry (shared by every kernel of those buffer types)
calls. A non-zero return means the Numba kernel raised. The trampoline receives the two addresses
as the int64 attributes `fn` and `impl` and the process id they were taken in as `pid`: addresses
from another process (a serialised or persistently cached executable) are refused instead of
called.
"""

from __future__ import annotations

from .launcher import arity_function_name, arity_launcher, arity_source

_ATTRIBUTES = ["fn", "impl", "pid"]

_PRELUDE = r"""
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "jaxcc/jaxcc.h"

namespace {

using NumbaEntry = int32_t (*)(void**, const int64_t*, void*);

constexpr int kMaxRank = 16;

void CallNumbaEntry(const jaxcc::Tensor* const* tensors, int count, int64_t fn, int64_t impl,
                    int64_t pid) {
  // The addresses are only meaningful in the process that compiled the code.
  if (pid != static_cast<int64_t>(getpid()) || fn == 0) {
    throw std::invalid_argument(
        "this numba kernel was compiled in another process (jax.export or a persistent "
        "compilation cache); numba kernels are process-local: trace the function again here");
  }
  void* buffers[64];
  int64_t dims[64 * kMaxRank];
  int used = 0;
  for (int i = 0; i < count; ++i) {
    buffers[i] = tensors[i]->data_ptr();
    for (int d = 0; d < tensors[i]->ndim(); ++d) dims[used++] = tensors[i]->size(d);
  }
  if (reinterpret_cast<NumbaEntry>(fn)(buffers, dims, reinterpret_cast<void*>(impl)) != 0) {
    throw std::runtime_error(
        "the numba kernel raised an exception (call it on NumPy arrays, or use "
        "numba_kernel(..., bridge='callback'), to see which)");
  }
}

}  // namespace
"""


def function_name(n_in: int, n_out: int) -> str:
    return arity_function_name("numba", n_in, n_out)


def trampoline_source(n_in: int, n_out: int) -> str:
    return arity_source(_PRELUDE, "CallNumbaEntry", _ATTRIBUTES, n_in, n_out,
                        function_name(n_in, n_out), stream=False)  # fmt: skip


def trampoline_target(n_in: int, n_out: int) -> str:
    """The FFI target name of the trampoline for this arity (built and registered on first use)."""
    module = arity_launcher(
        "numba", _PRELUDE, "CallNumbaEntry", _ATTRIBUTES, n_in, n_out, "numba_kernel",
        platform="cpu",
    )  # fmt: skip
    return module.target_name(function_name(n_in, n_out))

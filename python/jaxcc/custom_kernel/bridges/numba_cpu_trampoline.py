"""The C++ side of the Numba CPU bridge: one small XLA FFI target per (inputs, outputs) arity,
compiled and cached by jaxcc's own core, that calls a kernel's Numba-compiled code by address.

Direct call (`fn` = 0; decision 91): the trampoline calls the kernel's native function `impl`
in Numba's calling convention itself, passing each array's fields (null meminfo and parent,
nitems, itemsize, data, shape, C strides in bytes) as separate pointer-sized arguments, for
kernels that return nothing and whose arrays have at most MAX_FLAT_ARGS fields in all.

Otherwise, through an entry cfunc (see docs/custom_kernel.md, decisions 39 and 91):
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

import threading

from .launcher import arity_function_name, arity_launcher, arity_source

_ATTRIBUTES = ["fn", "impl", "pid"]

# Flattened arguments of a direct call at most (the arrays' fields): 4 arrays of rank 8, 13 of
# rank 1. Must match kMaxFlat in the prelude.
MAX_FLAT_ARGS = 96

_PRELUDE = r"""
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "jaxcc/jaxcc.h"

namespace {

using NumbaEntry = int32_t (*)(void**, const int64_t*, void*);

constexpr int kMaxRank = 16;
constexpr int kMaxFlat = 96;
// Numba's status codes (numba/core/callconv.py): 0 returned, -2 returned None; others raised.
constexpr int32_t kNumbaOk = 0;
constexpr int32_t kNumbaNone = -2;

// A kernel's native function in Numba's calling convention: (result slot, exception slot, then
// every field of every array as its own argument: meminfo, parent, nitems, itemsize, data,
// shape..., strides...), all pointer-sized. One instantiation per argument count.
template <std::size_t... I>
int32_t CallFlat(void* fn, const int64_t* a, std::index_sequence<I...>) {
  using Native = int32_t (*)(void*, void*, decltype(static_cast<void>(I), int64_t{})...);
  alignas(16) unsigned char result[64] = {};
  void* exception = nullptr;
  return reinterpret_cast<Native>(fn)(result, &exception, a[I]...);
}

// Every argument count an arity of kCount arrays can have (5 fields + 2 per dimension each).
template <int kCount, std::size_t... N>
int32_t CallFlatCount(int n, void* fn, const int64_t* a, std::index_sequence<N...>) {
  using Caller = int32_t (*)(void*, const int64_t*);
  static constexpr Caller kCallers[] = {[](void* f, const int64_t* x) {
    return CallFlat(f, x, std::make_index_sequence<5 * kCount + N>{});
  }...};
  return kCallers[n - 5 * kCount](fn, a);
}

template <int kCount>
int32_t CallDirect(const jaxcc::Tensor* const* tensors, int64_t impl) {
  constexpr int kLow = 5 * kCount;
  constexpr int kHigh = 21 * kCount < kMaxFlat ? 21 * kCount : kMaxFlat;
  if constexpr (kLow > kHigh) {
    throw std::invalid_argument("numba_kernel: too many buffers for a direct call");
  } else {
    int64_t flat[kMaxFlat];
    int used = 0;
    for (int i = 0; i < kCount; ++i) {
      const jaxcc::Tensor& t = *tensors[i];
      const int rank = t.ndim();
      if (used + 5 + 2 * rank > kMaxFlat) {
        throw std::invalid_argument("numba_kernel: too many dimensions for a direct call");
      }
      const auto itemsize = static_cast<int64_t>(t.element_size());
      flat[used++] = 0;  // meminfo: XLA owns the buffer
      flat[used++] = 0;  // parent
      flat[used++] = t.numel();
      flat[used++] = itemsize;
      flat[used++] = reinterpret_cast<int64_t>(t.data_ptr());
      for (int d = 0; d < rank; ++d) flat[used + d] = t.size(d);
      int64_t stride = itemsize;  // C-contiguous strides in bytes
      for (int d = rank - 1; d >= 0; --d) {
        flat[used + rank + d] = stride;
        stride *= t.size(d);
      }
      used += 2 * rank;
    }
    return CallFlatCount<kCount>(used, reinterpret_cast<void*>(impl), flat,
                                 std::make_index_sequence<kHigh - kLow + 1>{});
  }
}

template <int kCount>
void CallNumbaEntry(const jaxcc::Tensor* const* tensors, int count, int64_t fn, int64_t impl,
                    int64_t pid) {
  // The addresses are only meaningful in the process that compiled the code.
  if (pid != static_cast<int64_t>(getpid()) || (fn == 0 && impl == 0)) {
    throw std::invalid_argument(
        "this numba kernel was compiled in another process (jax.export or a persistent "
        "compilation cache); numba kernels are process-local: trace the function again here");
  }
  if (fn == 0) {  // no entry: the kernel's native function is called directly (decision 91)
    const int32_t status = CallDirect<kCount>(tensors, impl);
    if (status != kNumbaOk && status != kNumbaNone) {
      throw std::runtime_error(
          "the numba kernel raised an exception (call it on NumPy arrays, or use "
          "numba_kernel(..., bridge='callback'), to see which)");
    }
    return;
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
    return arity_source(_PRELUDE, _launch(n_in, n_out), _ATTRIBUTES, n_in, n_out,
                        function_name(n_in, n_out), stream=False)  # fmt: skip


def _launch(n_in: int, n_out: int) -> str:
    return f"CallNumbaEntry<{n_in + n_out}>"


def trampoline_target(n_in: int, n_out: int) -> str:
    """The FFI target name of the trampoline for this arity (built and registered on first use)."""
    module = arity_launcher(
        "numba", _PRELUDE, _launch(n_in, n_out), _ATTRIBUTES, n_in, n_out, "numba_kernel",
        platform="cpu",
    )  # fmt: skip
    return module.target_name(function_name(n_in, n_out))


_started: set[tuple[int, int]] = set()
_started_lock = threading.Lock()


def start_building(n_in: int, n_out: int) -> None:
    """Builds (or loads) the trampoline of this arity on a thread, once per process and arity, so
    that a machine's first use of an arity compiles it while Numba compiles the kernel: the
    build is g++ in subprocesses with the GIL released, Numba's compile is Python in this
    thread, and on a machine with two cores or more they overlap (decision 116).
    `trampoline_target` then waits for that build under the launcher's lock. A failure is left
    to `trampoline_target`, which builds again and raises it in the caller's thread."""
    key = (n_in, n_out)
    with _started_lock:
        if key in _started:
            return
        _started.add(key)

    def build() -> None:
        try:
            trampoline_target(n_in, n_out)
        except Exception:  # noqa: BLE001, S110 - raised again, with its context, by the caller
            pass

    threading.Thread(target=build, name=f"jaxcc-numba-trampoline-{n_in}-{n_out}").start()

// Scratch memory for one call: the `jaxcc::Scratch` parameter, standard C++ only.
//
// A function that takes a `jaxcc::Scratch` gets `scratch_bytes` bytes of device memory (host
// memory on the CPU) for the duration of the call, sized by the caller at trace time:
// `f(x, scratch_bytes=n)`. The bytes are a hidden extra result buffer of the custom call, so
// XLA's buffer assignment places them ahead of time: no allocation per call, and a CUDA function
// keeps the command-buffer (CUDA graph) trait. Contents are undefined at the start of a call.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jaxcc {

struct Scratch {
  void* data = nullptr;
  std::size_t bytes = 0;

  /// The workspace as `T*` (XLA aligns buffers to at least 16 bytes).
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data);
  }
  /// How many `T` fit.
  template <typename T>
  std::size_t count() const noexcept {
    return bytes / sizeof(T);
  }
};

}  // namespace jaxcc

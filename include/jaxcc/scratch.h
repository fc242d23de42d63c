// Scratch memory for one call: the `jaxcc::Scratch` parameter, standard C++ only.
//
// A function that takes a `jaxcc::Scratch` gets `scratch_bytes` bytes of device memory (host
// memory on the CPU) for the duration of the call, sized by the caller at trace time:
// `f(x, scratch_bytes=n)`. The bytes are a hidden extra result buffer of the custom call, so
// XLA's buffer assignment places them ahead of time: no allocation per call, and a CUDA function
// keeps the command-buffer (CUDA graph) trait. Contents are undefined at the start of a call.
//
// A function that takes a `jaxcc::ScratchAllocator&` asks for memory while it runs, for sizes
// known only then: `allocate(bytes, alignment)` returns memory valid until the call returns
// (device memory from XLA's allocator for CUDA functions, which then lose the command-buffer
// trait; host memory for CPU functions, where XLA lends no allocator). Decision 105.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "jaxcc/check.h"

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

/// The largest request jaxcc passes on (16 GiB, = jaxcc.MAX_SCRATCH_BYTES in Python): above it
/// the size is almost surely wrong (a negative number cast to size_t, a shape product gone bad).
inline constexpr std::size_t kMaxScratchBytes = std::size_t{1} << 34;

/// A scratch allocation was refused: above kMaxScratchBytes, a bad alignment, or the allocator
/// had no memory. The wrapper reports it as RESOURCE_EXHAUSTED, prefixed with the function.
class ScratchError : public Error {
 public:
  using Error::Error;
};

/// Memory for one call, asked for at run time (the `jaxcc::ScratchAllocator&` parameter). Every
/// block is freed when the call returns; there is no `free`. Not thread-safe: allocate from the
/// calling thread (hand the pointers to workers, not the allocator).
class ScratchAllocator {
 public:
  /// `bytes` bytes aligned to `alignment` (a power of two). Contents undefined; 0 bytes gives
  /// nullptr. Throws ScratchError naming the size when the request is refused.
  void* allocate(std::size_t bytes, std::size_t alignment = 64) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      throw ScratchError("jaxcc::ScratchAllocator: alignment " + std::to_string(alignment) +
                         " is not a power of two");
    }
    if (bytes > kMaxScratchBytes) {
      throw ScratchError("jaxcc::ScratchAllocator: " + std::to_string(bytes) +
                         " bytes asked for, above jaxcc.MAX_SCRATCH_BYTES (" +
                         std::to_string(kMaxScratchBytes) + "); check the size computation");
    }
    if (bytes == 0) return nullptr;
    std::string why;
    void* data = allocate_bytes(bytes, alignment, &why);
    if (data == nullptr) {
      throw ScratchError("jaxcc::ScratchAllocator: allocating " + std::to_string(bytes) +
                         " bytes (alignment " + std::to_string(alignment) + ") failed" +
                         (why.empty() ? std::string() : ": " + why));
    }
    return data;
  }

  /// Room for `count` values of T, aligned for T (at least 64 bytes).
  template <typename T>
  T* allocate_array(std::size_t count) {
    if (count > kMaxScratchBytes / sizeof(T)) {
      throw ScratchError("jaxcc::ScratchAllocator: " + std::to_string(count) + " elements of " +
                         std::to_string(sizeof(T)) + " bytes are above jaxcc.MAX_SCRATCH_BYTES (" +
                         std::to_string(kMaxScratchBytes) + ")");
    }
    return static_cast<T*>(allocate(count * sizeof(T), alignof(T) > 64 ? alignof(T) : 64));
  }

 protected:
  ScratchAllocator() = default;
  ~ScratchAllocator() = default;
  ScratchAllocator(const ScratchAllocator&) = delete;
  ScratchAllocator& operator=(const ScratchAllocator&) = delete;

  /// The platform's allocation: nullptr on failure, with the reason in `*why` when known.
  virtual void* allocate_bytes(std::size_t bytes, std::size_t alignment, std::string* why) = 0;
};

}  // namespace jaxcc

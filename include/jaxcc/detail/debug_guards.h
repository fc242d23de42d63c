// The debug profile's guard zones (JAXCC_DEBUG=1 or debug=True; decision 150c): the frame
// runtime of a debug build runs the user's function on padded copies of its output buffers
// (results and `jaxcc::Scratch` workspaces alike, which XLA owns and places end to end), with
// guard bytes before and after each, and checks the guards when the function returns. A write
// past either end is an error naming the function, the buffer and how far it went, raised as the
// call's exception; the outputs are copied back only after a clean check.
//
// Only a debug build's frame runtime includes this (JAXCC_DEBUG_GUARDS): the default build pays
// nothing for it. Host buffers only (CPU functions); CUDA functions get nvcc's -G and
// compute-sanitizer instead (docs/usage.md, "Debugging a kernel").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "jaxcc/detail/frame_entry.h"
#include "jaxcc/tensor.h"

namespace jaxcc::detail {

/// Guard bytes on each side of an output: more than one row of most kernels' stride mistakes.
inline constexpr std::size_t kGuardBytes = 4096;
/// The guard pattern: not 0, not a small integer, not a plausible float.
inline constexpr unsigned char kGuardByte = 0xA5;

/// A write past an output buffer, found by its guard zone (INTERNAL: a bug of the kernel).
class GuardZoneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where the guard of `zone` (kGuardBytes long) was written: the first and last byte that no
/// longer holds the pattern, or -1 when it is intact.
struct GuardDamage {
  std::ptrdiff_t first = -1, last = -1;
};
inline GuardDamage FindGuardDamage(const unsigned char* zone) {
  GuardDamage damage;
  for (std::size_t i = 0; i < kGuardBytes; ++i) {
    if (zone[i] != kGuardByte) {
      if (damage.first < 0) damage.first = static_cast<std::ptrdiff_t>(i);
      damage.last = static_cast<std::ptrdiff_t>(i);
    }
  }
  return damage;
}

/// The outputs of one call on padded copies, for the life of the call.
class GuardedOutputs {
 public:
  GuardedOutputs(const FrameSpec& spec, Tensor* rets) : spec_(spec), rets_(rets) {
    for (int i = 0; i < spec.num_rets && i < kMaxGuarded; ++i) {
      const std::size_t bytes = rets[i].nbytes();
      auto* block = static_cast<unsigned char*>(std::malloc(bytes + 2 * kGuardBytes));
      if (block == nullptr) throw std::bad_alloc();
      std::memset(block, kGuardByte, kGuardBytes);
      std::memset(block + kGuardBytes + bytes, kGuardByte, kGuardBytes);
      if (bytes > 0) std::memcpy(block + kGuardBytes, rets[i].data_ptr(), bytes);
      originals_[i] = rets[i].data_ptr();
      blocks_[i] = block;
      const Tensor& t = rets[i];
      const char* name = t.name();  // data_ptr<T>()'s error names the output as without guards
      rets[i] = Tensor(block + kGuardBytes, t.shape_ptr(), t.ndim(), t.dtype());
      rets[i].set_name(name);
      ++guarded_;
    }
  }
  ~GuardedOutputs() {
    for (int i = 0; i < guarded_; ++i) {
      const char* name = rets_[i].name();
      rets_[i] = Tensor(originals_[i], rets_[i].shape_ptr(), rets_[i].ndim(), rets_[i].dtype());
      rets_[i].set_name(name);
      std::free(blocks_[i]);
    }
  }
  GuardedOutputs(const GuardedOutputs&) = delete;
  GuardedOutputs& operator=(const GuardedOutputs&) = delete;

  /// After the function returned: throws GuardZoneError for the first damaged buffer, else
  /// copies every output back into XLA's buffer.
  void CheckAndCopyBack() {
    for (int i = 0; i < guarded_; ++i) {
      const std::size_t bytes = rets_[i].nbytes();
      const GuardDamage before = FindGuardDamage(blocks_[i]);
      const GuardDamage after = FindGuardDamage(blocks_[i] + kGuardBytes + bytes);
      if (after.first >= 0) Throw(i, bytes, "past the end", after.first, after.last);
      if (before.first >= 0) {
        // Distances before the start, counted from the byte just before it.
        const auto near = static_cast<std::ptrdiff_t>(kGuardBytes) - 1 - before.last;
        const auto far = static_cast<std::ptrdiff_t>(kGuardBytes) - 1 - before.first;
        Throw(i, bytes, "before the start", near, far);
      }
    }
    for (int i = 0; i < guarded_; ++i) {
      const std::size_t bytes = rets_[i].nbytes();
      if (bytes > 0) std::memcpy(originals_[i], blocks_[i] + kGuardBytes, bytes);
    }
  }

 private:
  static constexpr int kMaxGuarded = 64;

  [[noreturn]] void Throw(int i, std::size_t bytes, const char* where, std::ptrdiff_t near,
                          std::ptrdiff_t far) const {
    const char* name = spec_.ret_names != nullptr ? spec_.ret_names[i] : "?";
    throw GuardZoneError(
        "jaxcc debug profile: function '" + std::string(spec_.function) + "' wrote " + where +
        " of its output '" + name + "' (" + std::to_string(bytes) + " bytes): bytes " +
        std::to_string(near) + " to " + std::to_string(far) + " " + where +
        " were changed (of the " + std::to_string(kGuardBytes) +
        " guard bytes checked); check the index arithmetic that writes '" + name + "'");
  }

  const FrameSpec& spec_;
  Tensor* rets_;
  int guarded_ = 0;
  void* originals_[kMaxGuarded] = {};
  unsigned char* blocks_[kMaxGuarded] = {};
};

}  // namespace jaxcc::detail

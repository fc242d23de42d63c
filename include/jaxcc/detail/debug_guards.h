// The debug profile's guard zones (JAXCC_DEBUG=1 or debug=True; decision 150c): the frame
// runtime of a debug build runs the user's function on padded copies of its output buffers
// (results and `jaxcc::Scratch` workspaces alike, which XLA owns and places end to end), with
// guard bytes before and after each, and checks the guards when the function returns. A write
// past either end is an error naming the function, the buffer and how far it went, raised as the
// call's exception; the outputs are copied back only after a clean check. The copies start as
// the guard pattern, not as XLA's buffer: an element never written is the same in every run.
//
// Inputs get padded copies too (decision 220). A read outside an input cannot be seen in the
// guard bytes, so their fill is a variable: JAXCC_DEBUG_INPUT_FILL (read at every call) sets it,
// and a kernel whose outputs change when only the fill changed reads outside an input.
// check_kernel's `bounds` row runs the debug build with two fills, then one zone at a time to
// name the input and the side. A write into an input's guard bytes is an error, as for outputs.
// Synchronous bodies (ffi_frame.h) and `jaxcc::Async` bodies (ffi_frame_async.h) alike.
//
// Only a debug build's frame runtime includes this (JAXCC_DEBUG_GUARDS): the default build pays
// nothing for it. Host buffers only (CPU functions); CUDA functions get nvcc's -G and
// compute-sanitizer instead (docs/usage.md, "Debugging a kernel").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

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

/// XLA's CPU buffers are 64-byte aligned, and a kernel may rely on it (aligned vector loads).
inline constexpr std::size_t kBufferAlignment = 64;
static_assert(kGuardBytes % kBufferAlignment == 0, "the buffer after the guard stays aligned");

/// A block for a buffer of `bytes` with guard zones on both sides, the buffer as aligned as
/// XLA's (std::malloc gives 16 bytes); freed with std::free.
inline unsigned char* AllocateGuarded(std::size_t bytes) {
  const std::size_t total = bytes + 2 * kGuardBytes;
  const std::size_t rounded = (total + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  void* block = std::aligned_alloc(kBufferAlignment, rounded);
  if (block == nullptr) throw std::bad_alloc();
  return static_cast<unsigned char*>(block);
}

/// Where the guard of `zone` (kGuardBytes long) was written: the first and last byte that no
/// longer holds the pattern, or -1 when it is intact.
struct GuardDamage {
  std::ptrdiff_t first = -1, last = -1;
};
inline GuardDamage FindGuardDamage(const unsigned char* zone, unsigned char pattern = kGuardByte) {
  GuardDamage damage;
  for (std::size_t i = 0; i < kGuardBytes; ++i) {
    if (zone[i] != pattern) {
      if (damage.first < 0) damage.first = static_cast<std::ptrdiff_t>(i);
      damage.last = static_cast<std::ptrdiff_t>(i);
    }
  }
  return damage;
}

/// "wrote ... of its <kind> 'name'": the guard's finding, raised as the call's error.
[[noreturn]] inline void ThrowGuardDamage(const char* function, const char* kind, const char* name,
                                          std::size_t bytes, const char* where, std::ptrdiff_t near,
                                          std::ptrdiff_t far) {
  throw GuardZoneError("jaxcc debug profile: function '" + std::string(function) + "' wrote " +
                       where + " of its " + kind + " '" + name + "' (" + std::to_string(bytes) +
                       " bytes): bytes " + std::to_string(near) + " to " + std::to_string(far) +
                       " " + where + " were changed (of the " + std::to_string(kGuardBytes) +
                       " guard bytes checked); check the index arithmetic that writes '" + name +
                       "'");
}

/// Throws for damage to the guards around a buffer of `bytes` at `block + kGuardBytes`, the
/// guard bytes expected to be `before` and `after`.
inline void CheckGuardsOf(const unsigned char* block, std::size_t bytes, unsigned char before,
                          unsigned char after, const char* function, const char* kind,
                          const char* name) {
  const GuardDamage past = FindGuardDamage(block + kGuardBytes + bytes, after);
  if (past.first >= 0) {
    ThrowGuardDamage(function, kind, name, bytes, "past the end", past.first, past.last);
  }
  const GuardDamage ahead = FindGuardDamage(block, before);
  if (ahead.first >= 0) {
    // Distances before the start, counted from the byte just before it.
    const auto near = static_cast<std::ptrdiff_t>(kGuardBytes) - 1 - ahead.last;
    const auto far = static_cast<std::ptrdiff_t>(kGuardBytes) - 1 - ahead.first;
    ThrowGuardDamage(function, kind, name, bytes, "before the start", near, far);
  }
}

/// Points `t` at `data`, keeping its shape, dtype and name (data_ptr<T>()'s errors name the
/// buffer as without guards).
inline void Repoint(Tensor& t, void* data) {
  const char* name = t.name();
  t = Tensor(data, t.shape_ptr(), t.ndim(), t.dtype());
  t.set_name(name);
}

/// The outputs of one call on padded copies, for the life of the call.
class GuardedOutputs {
 public:
  GuardedOutputs(const FrameSpec& spec, Tensor* rets) : spec_(spec), rets_(rets) {
    for (int i = 0; i < spec.num_rets && i < kMaxGuarded; ++i) {
      const std::size_t bytes = rets[i].nbytes();
      auto* block = AllocateGuarded(bytes);
      // The whole block, the output included, holds the pattern: an element the function
      // never writes reads the same in every run (XLA's buffer holds whatever was there), as
      // -ftrivial-auto-var-init=pattern does for locals, so `bounds` can compare two runs.
      std::memset(block, kGuardByte, bytes + 2 * kGuardBytes);
      originals_[i] = rets[i].data_ptr();
      blocks_[i] = block;
      Repoint(rets[i], block + kGuardBytes);
      ++guarded_;
    }
  }
  ~GuardedOutputs() {
    for (int i = 0; i < guarded_; ++i) {
      Repoint(rets_[i], originals_[i]);
      std::free(blocks_[i]);
    }
  }
  GuardedOutputs(const GuardedOutputs&) = delete;
  GuardedOutputs& operator=(const GuardedOutputs&) = delete;

  /// After the function returned: throws GuardZoneError for the first damaged buffer, else
  /// copies every output back into XLA's buffer.
  void CheckAndCopyBack() {
    for (int i = 0; i < guarded_; ++i) {
      const char* name = spec_.ret_names != nullptr ? spec_.ret_names[i] : "?";
      CheckGuardsOf(blocks_[i], rets_[i].nbytes(), kGuardByte, kGuardByte, spec_.function, "output",
                    name);
    }
    for (int i = 0; i < guarded_; ++i) {
      const std::size_t bytes = rets_[i].nbytes();
      if (bytes > 0) std::memcpy(originals_[i], blocks_[i] + kGuardBytes, bytes);
    }
  }

 private:
  static constexpr int kMaxGuarded = 64;

  const FrameSpec& spec_;
  Tensor* rets_;
  int guarded_ = 0;
  void* originals_[kMaxGuarded] = {};
  unsigned char* blocks_[kMaxGuarded] = {};
};

/// The fill of the guard zones around inputs: `byte` everywhere, or in one zone only (`input`'s
/// zone before it, or after it) with kGuardByte elsewhere.
struct InputFill {
  unsigned char byte = kGuardByte;
  int input = -1;  ///< -1: every zone
  bool after = false;
  unsigned char For(int i, bool after_zone) const {
    if (input < 0 || (input == i && after == after_zone)) return byte;
    return kGuardByte;
  }
};

/// JAXCC_DEBUG_INPUT_FILL: unset or empty (kGuardByte), "BYTE" (0-255, every zone) or
/// "BYTE@INPUT:before" / "BYTE@INPUT:after" (one zone). Read at every call, so that one process
/// can run a debug build under several fills; anything else is an error naming the variable.
inline InputFill ReadInputFill() {
  InputFill fill;
  const char* text = std::getenv("JAXCC_DEBUG_INPUT_FILL");
  if (text == nullptr || *text == '\0') return fill;
  char* end = nullptr;
  const long byte = std::strtol(text, &end, 10);
  bool good = end != text && byte >= 0 && byte <= 255;
  if (good && *end == '@') {
    char* colon = nullptr;
    const long input = std::strtol(end + 1, &colon, 10);
    good = colon != end + 1 && input >= 0 && *colon == ':';
    if (good && std::strcmp(colon + 1, "after") == 0) {
      fill.after = true;
    } else if (!good || std::strcmp(colon + 1, "before") != 0) {
      good = false;
    }
    fill.input = static_cast<int>(input);
  } else if (good && *end != '\0') {
    good = false;
  }
  if (!good) {
    throw std::invalid_argument(
        std::string("jaxcc debug profile: JAXCC_DEBUG_INPUT_FILL='") + text +
        "' is not a byte (0-255), optionally followed by @INPUT:before or @INPUT:after (one "
        "input's zone); unset it to use the default fill");
  }
  fill.byte = static_cast<unsigned char>(byte);
  return fill;
}

/// The inputs of one call on padded copies, for the life of the call: their guard zones hold
/// JAXCC_DEBUG_INPUT_FILL's bytes, which a read outside the input turns into output.
class GuardedInputs {
 public:
  GuardedInputs(const FrameSpec& spec, Tensor* args)
      : spec_(spec), args_(args), fill_(ReadInputFill()) {
    for (int i = 0; i < spec.num_args && i < kMaxGuarded; ++i) {
      const std::size_t bytes = args[i].nbytes();
      auto* block = AllocateGuarded(bytes);
      std::memset(block, fill_.For(i, false), kGuardBytes);
      std::memset(block + kGuardBytes + bytes, fill_.For(i, true), kGuardBytes);
      if (bytes > 0) std::memcpy(block + kGuardBytes, args[i].data_ptr(), bytes);
      originals_[i] = args[i].data_ptr();
      blocks_[i] = block;
      Repoint(args[i], block + kGuardBytes);
      ++guarded_;
    }
  }
  ~GuardedInputs() {
    for (int i = 0; i < guarded_; ++i) {
      Repoint(args_[i], originals_[i]);
      std::free(blocks_[i]);
    }
  }
  GuardedInputs(const GuardedInputs&) = delete;
  GuardedInputs& operator=(const GuardedInputs&) = delete;

  /// After the function returned: throws GuardZoneError for a write into an input's guards.
  void Check() const {
    for (int i = 0; i < guarded_; ++i) {
      const char* name = spec_.arg_names != nullptr ? spec_.arg_names[i] : "?";
      CheckGuardsOf(blocks_[i], args_[i].nbytes(), fill_.For(i, false), fill_.For(i, true),
                    spec_.function, "input", name);
    }
  }

 private:
  static constexpr int kMaxGuarded = 64;

  const FrameSpec& spec_;
  Tensor* args_;
  InputFill fill_;
  int guarded_ = 0;
  void* originals_[kMaxGuarded] = {};
  unsigned char* blocks_[kMaxGuarded] = {};
};

/// One call's inputs and outputs on guarded copies: what the frame runtime wraps a host body in.
class GuardedCall {
 public:
  GuardedCall(const FrameSpec& spec, Tensor* args, Tensor* rets)
      : inputs_(spec, args), outputs_(spec, rets) {}

  /// After the function returned: throws for damaged guards, else copies the outputs back.
  void CheckAndCopyBack() {
    outputs_.CheckAndCopyBack();
    inputs_.Check();
  }

 private:
  GuardedInputs inputs_;
  GuardedOutputs outputs_;
};

}  // namespace jaxcc::detail

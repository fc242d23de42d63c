// The text of the frame runtime's error messages, built without std::string (decision 161c).
//
// The frame runtime unit (codegen::FrameRuntimeSource) is compiled on the critical path of a
// cache's first build, and most of its code generation was std::string's `+` chains and
// to_string, inlined into each cold message path. FrameText appends into a buffer of its own and
// moves to the heap when a message outgrows it, so no name (a function's, a parameter's, an
// exception's what()) is ever cut short; the few out-of-line calls here are all a message costs.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Out of line: a message is appended to in many places, each a call rather than a copy of the
// growth code.
#if defined(__GNUC__) || defined(__clang__)
#define JAXCC_FRAME_TEXT_CALL __attribute__((noinline, cold))
#define JAXCC_FRAME_TEXT_FORMAT __attribute__((format(printf, 2, 3)))
#else
#define JAXCC_FRAME_TEXT_CALL
#define JAXCC_FRAME_TEXT_FORMAT
#endif

namespace jaxcc::detail {

/// A message being built: appends text and numbers; c_str() is always terminated.
class FrameText {
 public:
  FrameText() noexcept { inline_[0] = '\0'; }
  ~FrameText() {
    if (data_ != inline_) std::free(data_);
  }
  FrameText(const FrameText&) = delete;
  FrameText& operator=(const FrameText&) = delete;

  JAXCC_FRAME_TEXT_CALL FrameText& Add(const char* text) noexcept {
    return Add(text, std::strlen(text));
  }
  JAXCC_FRAME_TEXT_CALL FrameText& Add(const char* text, std::size_t length) noexcept {
    if (!Reserve(length)) return *this;
    std::memcpy(data_ + size_, text, length);
    size_ += length;
    data_[size_] = '\0';
    return *this;
  }
  /// printf's `format` with the arguments, in full however long (one call for a whole message).
  JAXCC_FRAME_TEXT_CALL JAXCC_FRAME_TEXT_FORMAT FrameText& AddFormat(const char* format,
                                                                     ...) noexcept {
    std::va_list args, again;
    va_start(args, format);
    va_copy(again, args);
    const int length = ok_ ? std::vsnprintf(data_ + size_, capacity_ - size_, format, args) : -1;
    if (length < 0) {
      ok_ = false;
    } else if (size_ + static_cast<std::size_t>(length) < capacity_) {
      size_ += static_cast<std::size_t>(length);
    } else if (Reserve(static_cast<std::size_t>(length))) {
      std::vsnprintf(data_ + size_, capacity_ - size_, format, again);
      size_ += static_cast<std::size_t>(length);
    }
    data_[size_] = '\0';  // a cut-short attempt above leaves nothing of itself behind
    va_end(again);
    va_end(args);
    return *this;
  }
  /// `value` in decimal, as std::to_string writes it.
  FrameText& AddInt(long long value) noexcept { return AddFormat("%lld", value); }
  FrameText& AddUnsigned(unsigned long long value) noexcept { return AddFormat("%llu", value); }

  /// Empties the text (and its failure), back to its own buffer.
  JAXCC_FRAME_TEXT_CALL FrameText& Clear() noexcept {
    if (data_ != inline_) std::free(data_);
    data_ = inline_;
    data_[0] = '\0';
    size_ = 0;
    capacity_ = sizeof(inline_);
    ok_ = true;
    return *this;
  }

  /// False once an append could not get memory (the text is then incomplete).
  bool ok() const noexcept { return ok_; }
  const char* c_str() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  bool Reserve(std::size_t more) noexcept {
    if (!ok_) return false;
    if (size_ + more < capacity_) return true;
    std::size_t capacity = capacity_ * 2;
    while (capacity <= size_ + more) capacity *= 2;
    char* grown = static_cast<char*>(data_ == inline_ ? std::malloc(capacity)
                                                      : std::realloc(data_, capacity));
    if (grown == nullptr) {
      ok_ = false;
      return false;
    }
    if (data_ == inline_) std::memcpy(grown, inline_, size_ + 1);
    data_ = grown;
    capacity_ = capacity;
    return true;
  }

  char inline_[256];
  char* data_ = inline_;
  std::size_t size_ = 0;
  std::size_t capacity_ = sizeof(inline_);
  bool ok_ = true;
};

}  // namespace jaxcc::detail

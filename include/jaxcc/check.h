// Exceptions of the kernel API and JAXCC_CHECK: a failed check throws on the host, prints on the
// device.
#pragma once

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

// JAXCC_DETAIL_NO_OSTREAM: the kernel unit's source names no stream (codegen/source_use.h), so
// the check message is formatted by check_text.h and the iostreams are not parsed (decision 129).
#if defined(JAXCC_DETAIL_NO_OSTREAM)
#include <iosfwd>
#else
#include <ios>
#include <ostream>
#include <streambuf>
#endif

#include "jaxcc/detail/check_text.h"
#include "jaxcc/dtype.h"
#include "jaxcc/macros.h"

namespace jaxcc {

/// Base of every exception the kernel headers throw. The generated FFI wrapper catches it (and
/// anything else) and hands XLA an ffi::Error, so a kernel never takes the process down.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A JAXCC_CHECK failed or a Tensor was used out of range: the call's inputs break the kernel's
/// contract. The wrapper reports it as INVALID_ARGUMENT.
class CheckError : public Error {
 public:
  using Error::Error;
};

/// A CUDA runtime call or kernel launch failed. Reported as INTERNAL. code() is the cudaError_t
/// value (kept as int so this header does not need the CUDA runtime).
class CudaError : public Error {
 public:
  explicit CudaError(const std::string& message, int code = 0) : Error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// An element type the code cannot handle (a dispatch macro's default branch, or an XLA buffer
/// type jaxcc::Tensor cannot describe). Reported as INVALID_ARGUMENT. dtype() is DType::Invalid
/// when the offending type has no DType (e.g. float8).
class DTypeError : public Error {
 public:
  explicit DTypeError(const std::string& message, DType dtype = DType::Invalid)
      : Error(message), dtype_(dtype) {}
  /// From a C string: a unit that builds its messages without std::string (the frame runtime,
  /// decision 161c) then compiles none of std::string's code to throw one.
  explicit DTypeError(const char* message, DType dtype = DType::Invalid)
      : Error(message), dtype_(dtype) {}
  DType dtype() const noexcept { return dtype_; }

 private:
  DType dtype_;
};

namespace detail {

/// Throws CheckError(message). Out of line from the callers' point of view so that the hot
/// accessors in tensor.h stay small.
[[noreturn]] inline void ThrowCheckError(const std::string& message) { throw CheckError(message); }
/// The same from a C string (std::runtime_error's own constructor: no std::string code here).
[[noreturn]] inline void ThrowCheckError(const char* message) { throw CheckError(message); }

/// "CHECK failed at file:line: condition: message" (": message" only when one was streamed): the
/// text of both message classes below.
inline std::string CheckFailureText(const char* file, int line, const char* condition,
                                    const std::string& message) {
  std::string text =
      "CHECK failed at " + std::string(file) + ":" + std::to_string(line) + ": " + condition;
  if (!message.empty()) text += ": " + message;
  return text;
}

#if defined(JAXCC_DETAIL_NO_OSTREAM)

/// The message of a failed JAXCC_CHECK, in a unit without the iostreams: numbers, bool,
/// characters, strings, pointers and DType get the text a std::ostream would give them
/// (check_text.h); anything else is a compile error that says to include <ostream>. Built only
/// after the condition has failed, so the streamed operands cost nothing on the success path.
/// A class of its own name: kernel units of one library may be compiled either way, and two
/// definitions of one inline class would be merged by the linker.
class CheckTextMessage {
 public:
  CheckTextMessage(const char* file, int line, const char* condition)
      : file_(file), line_(line), condition_(condition) {}

  template <class T>
  CheckTextMessage& operator<<(const T& value) {
    AppendCheckText(message_, value);
    return *this;
  }

  std::string str() const { return CheckFailureText(file_, line_, condition_, message_.text); }

 private:
  const char* file_;
  int line_;
  const char* condition_;
  CheckText message_;
};

#else

/// What std::ostringstream does for CheckMessage, without <sstream>: every kernel unit includes
/// this header, and <sstream> (with the <istream> it pulls) is parsed once per architecture and
/// once for the host by nvcc (decision 108). Appends whatever is written to a std::string.
class StringStreamBuffer : public std::streambuf {
 public:
  const std::string& str() const noexcept { return text_; }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      text_.push_back(traits_type::to_char_type(c));
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    text_.append(data, static_cast<std::size_t>(size));
    return size;
  }

 private:
  std::string text_;
};

/// The message of a failed JAXCC_CHECK. Built only after the condition has failed, so the
/// streamed operands cost nothing on the success path.
class CheckMessage {
 public:
  CheckMessage(const char* file, int line, const char* condition)
      : file_(file), line_(line), condition_(condition) {}

  /// Appends anything that has an `operator<<(std::ostream&, const T&)`.
  template <class T>
  CheckMessage& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  /// Manipulators such as std::endl (function templates cannot bind to the template above).
  CheckMessage& operator<<(std::ostream& (*manipulator)(std::ostream&)) {
    manipulator(stream_);
    return *this;
  }
  CheckMessage& operator<<(std::ios_base& (*manipulator)(std::ios_base&)) {
    manipulator(stream_);
    return *this;
  }

  std::string str() const { return CheckFailureText(file_, line_, condition_, buffer_.str()); }

 private:
  const char* file_;
  int line_;
  const char* condition_;
  StringStreamBuffer buffer_;  // declared before stream_, which writes into it
  std::ostream stream_{&buffer_};
};

#endif  // JAXCC_DETAIL_NO_OSTREAM

#if defined(JAXCC_DETAIL_NO_OSTREAM)
#define JAXCC_DETAIL_CHECK_MESSAGE CheckTextMessage
#else
#define JAXCC_DETAIL_CHECK_MESSAGE CheckMessage
#endif

/// Throws once the whole `<<` chain has been evaluated. Throwing here rather than from a
/// destructor means an exception raised while formatting the message simply propagates and
/// two exceptions can never be in flight at once.
struct CheckThrower {
  template <class Message>
  [[noreturn]] void operator&(const Message& message) const {
    throw CheckError(message.str());
  }
};

/// Device-code stand-in for CheckMessage: swallows the streamed operands (there is no ostream
/// on the device) without evaluating anything beyond the operand expressions themselves.
struct DeviceCheckMessage {
  template <class T>
  JAXCC_HOST_DEVICE const DeviceCheckMessage& operator<<(const T&) const {
    return *this;
  }
  JAXCC_HOST_DEVICE const DeviceCheckMessage& operator<<(std::ostream& (*)(std::ostream&)) const {
    return *this;
  }
};

/// Device-code stand-in for CheckThrower: prints file, line and condition, then lets execution
/// continue. Device code cannot throw, and __trap() would poison the whole CUDA context.
struct DeviceCheckFailure {
  const char* file;
  int line;
  const char* condition;
  JAXCC_HOST_DEVICE void operator&(const DeviceCheckMessage&) const {
    printf("CHECK failed at %s:%d: %s (device code: message dropped, execution continues)\n", file,
           line, condition);
  }
};

}  // namespace detail
}  // namespace jaxcc

/// JAXCC_CHECK(condition) << "message" << value ...;
///
/// Host code (including nvcc's host side): when `condition` is false, throws jaxcc::CheckError
/// with "CHECK failed at <file>:<line>: <condition>: <message>". Any type with an ostream
/// `operator<<` can be streamed; in a source that names no stream (no <ostream>, std::cout,
/// std::endl, operator<<, ...; decision 129) numbers, bool, characters, strings, pointers and
/// jaxcc::DType are written with the same text and anything else asks for `#include <ostream>`.
/// The message operands are evaluated only when the check fails.
///
/// Device code (__CUDA_ARCH__): a failed check printf()s file, line and condition and execution
/// CONTINUES — the message operands are not printed, and the calling thread must itself return
/// (e.g. `if (i >= n) { JAXCC_CHECK(false) << ...; return; }`) if going on would be unsafe.
///
/// One argument on purpose (not variadic): `JAXCC_CHECK(a, "msg")` must not compile as a comma
/// expression that always passes. Parenthesise conditions with template commas.
#if JAXCC_DEVICE_CODE
#define JAXCC_CHECK(condition)                                            \
  JAXCC_PREDICT_TRUE(condition)                                           \
  ? (void)0                                                               \
  : ::jaxcc::detail::DeviceCheckFailure{__FILE__, __LINE__, #condition} & \
          ::jaxcc::detail::DeviceCheckMessage()
#else
#define JAXCC_CHECK(condition)        \
  JAXCC_PREDICT_TRUE(condition)       \
  ? (void)0                           \
  : ::jaxcc::detail::CheckThrower() & \
          ::jaxcc::detail::JAXCC_DETAIL_CHECK_MESSAGE(__FILE__, __LINE__, #condition)
#endif

// Result<T>: a value or a typed jaxcc error; the core never throws across stage boundaries.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace jaxcc {

/// What went wrong, coarse enough that the Python layer maps each kind to one exception class.
enum class ErrorKind {
  kSpec,          ///< an arg_spec token list or a name is malformed
  kSignature,     ///< the C++ source cannot be read or disagrees with the spec
  kCompile,       ///< the compiler or linker rejected the code
  kToolchain,     ///< no usable compiler, ninja or header directory
  kLoad,          ///< dlopen/dlsym failed or a cached library failed its integrity check
  kRegistration,  ///< a target name clash (raised by the Python layer)
  kCache,         ///< the cache directory is unusable (permissions, disk full, ...)
  kIo,            ///< any other filesystem or process failure
  kBundle,        ///< a prebuilt bundle failed verification or does not fit this machine
};

/// A failure that names the problem and the fix. `log_path` is set when a full log exists on disk.
struct Error {
  ErrorKind kind = ErrorKind::kIo;
  std::string message;
  std::string log_path;
};

inline Error MakeError(ErrorKind kind, std::string message, std::string log_path = {}) {
  return Error{kind, std::move(message), std::move(log_path)};
}

/// Either a T or an Error. Deliberately tiny: ok(), value(), error(), and move-out helpers.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

/// Result for operations that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;
inline Status OkStatus() { return Ok{}; }

}  // namespace jaxcc

/// Propagates the error of a Result-returning expression to the caller.
#define JAXCC_RETURN_IF_ERROR(expr)                        \
  do {                                                     \
    auto jaxcc_status_ = (expr);                           \
    if (!jaxcc_status_.ok()) return jaxcc_status_.error(); \
  } while (false)

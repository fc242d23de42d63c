// JAXCC_CHECK's message text without the iostreams: what `std::ostream << value` writes in its
// default format, for the types kernels stream into a check (decision 129).
//
// A kernel unit whose source names no stream (codegen::MayUseStreams) is compiled with
// JAXCC_DETAIL_NO_OSTREAM, and its CheckMessage formats with these functions instead of a
// std::ostream: <ios>/<ostream> and the locale machinery under them are about a fifth of what nvcc
// parses for a kernel unit, three times over. One owner of the rules: the text is the default
// ostream's (integers in decimal, bool as 1/0, the three character types as characters, floating
// point as "%.6g", other pointers as libstdc++ prints them, a null C string stopping the message
// as a stream's badbit does), checked against std::ostringstream by
// src/kernel_api/check_text_test.cc.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

#include "jaxcc/dtype.h"

namespace jaxcc::detail {

template <class T>
inline constexpr bool kDependentFalse = false;

/// A message being built; `failed` once a null C string was streamed (nothing is appended after
/// it, as a std::ostream in badbit state writes nothing).
struct CheckText {
  std::string text;
  bool failed = false;
};

/// Whether AppendCheckText formats a `const T&` itself.
template <class T>
inline constexpr bool kCheckTextFormats =
    std::is_arithmetic_v<std::decay_t<T>> || std::is_pointer_v<std::decay_t<T>> ||
    std::is_null_pointer_v<std::decay_t<T>> ||
    (std::is_enum_v<std::decay_t<T>> && std::is_convertible_v<std::decay_t<T>, long long>) ||
    std::is_same_v<std::decay_t<T>, std::string> ||
    std::is_same_v<std::decay_t<T>, std::string_view> || std::is_same_v<std::decay_t<T>, DType>;

inline void AppendFormatted(CheckText& out, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

inline void AppendFormatted(CheckText& out, const char* format, ...) {
  char buffer[64];
  va_list args;
  va_start(args, format);
  const int length = std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  if (length > 0) out.text.append(buffer, static_cast<std::size_t>(length));
}

/// Appends `value` as `std::ostream << value` would in its default format.
template <class T>
void AppendCheckText(CheckText& out, const T& value) {
  using D = std::decay_t<T>;
  if (out.failed) return;
  if constexpr (std::is_same_v<D, bool>) {
    out.text += value ? '1' : '0';
  } else if constexpr (std::is_same_v<D, char> || std::is_same_v<D, signed char> ||
                       std::is_same_v<D, unsigned char>) {
    out.text += static_cast<char>(value);
  } else if constexpr (std::is_integral_v<D> && sizeof(D) < sizeof(int)) {
    AppendCheckText(out, +value);  // short, char16_t: promoted, as the stream promotes them
  } else if constexpr (std::is_integral_v<D> && std::is_signed_v<D>) {
    AppendFormatted(out, "%lld", static_cast<long long>(value));
  } else if constexpr (std::is_integral_v<D>) {
    AppendFormatted(out, "%llu", static_cast<unsigned long long>(value));
  } else if constexpr (std::is_same_v<D, long double>) {
    AppendFormatted(out, "%.*Lg", 6, value);
  } else if constexpr (std::is_floating_point_v<D>) {
    AppendFormatted(out, "%.*g", 6, static_cast<double>(value));
  } else if constexpr (std::is_same_v<D, DType>) {
    out.text += dtype_name(value);
  } else if constexpr (std::is_enum_v<D>) {
    AppendCheckText(out, +value);  // an unscoped enum prints as its promoted integer
  } else if constexpr (std::is_same_v<D, std::string> || std::is_same_v<D, std::string_view>) {
    out.text.append(value.data(), value.size());
  } else if constexpr (std::is_null_pointer_v<D>) {
    out.text += "nullptr";
  } else if constexpr (std::is_same_v<D, char*> || std::is_same_v<D, const char*> ||
                       std::is_same_v<D, signed char*> || std::is_same_v<D, const signed char*> ||
                       std::is_same_v<D, unsigned char*> ||
                       std::is_same_v<D, const unsigned char*>) {
    using Char = std::add_const_t<std::remove_pointer_t<D>>;
    const char* text = reinterpret_cast<const char*>(static_cast<Char*>(value));
    if (text == nullptr) {
      out.failed = true;
    } else {
      out.text += text;
    }
  } else if constexpr (std::is_pointer_v<D> && std::is_function_v<std::remove_pointer_t<D>>) {
    out.text += value != nullptr ? '1' : '0';  // a stream converts a function pointer to bool
  } else if constexpr (std::is_pointer_v<D>) {
    const auto address = reinterpret_cast<std::uintptr_t>(static_cast<const volatile void*>(value));
    if (address == 0) {
      out.text += '0';  // libstdc++: no 0x before zero
    } else {
      AppendFormatted(out, "0x%llx", static_cast<unsigned long long>(address));
    }
  } else {
    static_assert(kDependentFalse<T>,
                  "jaxcc: JAXCC_CHECK(...) << value: this kernel unit is compiled without "
                  "<ostream> because its source names no stream, and this type has no text of "
                  "jaxcc's own (numbers, bool, characters, strings, pointers, jaxcc::DType). "
                  "Add `#include <ostream>` at the top of the source to stream it through its "
                  "operator<<.");
  }
}

}  // namespace jaxcc::detail

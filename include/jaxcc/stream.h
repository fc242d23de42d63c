// jaxcc::detail::StreamHandle: XLA's stream, convertible to whatever type the user's parameter has.
#pragma once

#include <cstdint>
#include <type_traits>

namespace jaxcc::detail {

/// The platform stream XLA hands a handler (a cudaStream_t on GPU, 0 on CPU), carried as an
/// integer. Generated bridges pass `StreamHandle{stream}` to the user's stream parameter, which
/// may be declared `int64_t stream` (brainevent style), `cudaStream_t stream` or `void* stream`:
/// the conversion operator static_casts to any integer type and reinterpret_casts to any pointer
/// type. It is an aggregate on purpose, so `StreamHandle{value}` needs no constructor.
struct StreamHandle {
  std::int64_t value;

  template <class T, std::enable_if_t<std::is_integral_v<T> || std::is_pointer_v<T>, int> = 0>
  operator T() const noexcept {  // NOLINT(google-explicit-constructor): implicit by design.
    if constexpr (std::is_pointer_v<T>) {
      return reinterpret_cast<T>(static_cast<std::intptr_t>(value));
    } else {
      return static_cast<T>(value);
    }
  }
};

}  // namespace jaxcc::detail

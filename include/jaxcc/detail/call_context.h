// What a generated handler hands the bridge beyond buffers and attributes: the call's thread
// pool, per-call-site state and run-time scratch allocator. Standard C++ only: both the kernel unit
// (which must see no XLA header) and the wrapper unit include it.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "jaxcc/async.h"
#include "jaxcc/detail/frame_context.h"
#include "jaxcc/parallel.h"
#include "jaxcc/scratch.h"
#include "jaxcc/state.h"

namespace jaxcc::detail {

/// Binds the context's state to the function's `jaxcc::State<T>&` parameter: T is deduced from
/// the parameter type by the conversion.
struct StateSlot {
  void* state;
  template <typename T>
  operator State<T>&() const noexcept {  // NOLINT(google-explicit-constructor)
    return *static_cast<State<T>*>(state);
  }
};

template <typename T>
struct IsState : std::false_type {};
template <typename T>
struct IsState<State<T>> : std::true_type {};

/// The T of a State<T>, read from the template argument (State<T> itself is not instantiated,
/// so the generated checks below report before State's own).
template <typename S>
struct StateValue {
  using type = void;
};
template <typename T>
struct StateValue<State<T>> {
  using type = T;
};

/// What the generated instantiate stage needs of T: built from the attributes or by default.
template <typename T, typename... Attrs>
inline constexpr bool kStateConstructible = (sizeof...(Attrs) > 0 &&
                                             std::is_constructible_v<T, Attrs...>) ||
                                            std::is_default_constructible_v<T>;

template <typename... Params>
struct StateParamOf;
template <>
struct StateParamOf<> {
  using type = void;
};
template <typename First, typename... Rest>
struct StateParamOf<First, Rest...> {
  using bare = std::remove_cv_t<std::remove_reference_t<First>>;
  using type = std::conditional_t<IsState<bare>::value, bare, typename StateParamOf<Rest...>::type>;
};

template <typename F>
struct FunctionState;
template <typename R, typename... Params>
struct FunctionState<R (*)(Params...)> {
  using type = typename StateParamOf<Params...>::type;
};
template <typename R, typename... Params>
struct FunctionState<R (*)(Params...) noexcept> {
  using type = typename StateParamOf<Params...>::type;
};

/// Builds the State<T> of function F at the instantiate stage: T(attrs...) when T has that
/// constructor, else T(). The checks fail at compile time, naming the function.
template <typename StateType, typename... Attrs>
void* NewState(Attrs... attrs) {
  using T = std::remove_reference_t<decltype(std::declval<StateType&>().get())>;
  static_assert(std::is_destructible_v<T>,
                "jaxcc::State<T>: T must have an accessible destructor; XLA destroys the state "
                "with the executable");
  if constexpr (std::is_constructible_v<T, Attrs...> && sizeof...(Attrs) > 0) {
    return new StateType(std::in_place, attrs...);
  } else {
    static_assert(std::is_default_constructible_v<T>,
                  "jaxcc::State<T>: T must be constructible from the function's attributes "
                  "(in the order of its parameters) or default-constructible");
    return new StateType(std::in_place);
  }
}

template <typename StateType>
void DeleteState(void* state) noexcept {
  delete static_cast<StateType*>(state);
}

}  // namespace jaxcc::detail

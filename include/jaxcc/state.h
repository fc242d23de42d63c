// Per-call-site state: an object a kernel keeps across calls, standard C++ only.
//
// A function that takes a `jaxcc::State<T>&` parameter gets one T per call site (per custom
// call in a compiled XLA executable). XLA builds it at its instantiate stage, before the first
// execution: T is constructed from the function's attributes in the order of its C++ parameters
// when T has such a constructor, else default-constructed. Every execution of that call site
// receives the same object; it is destroyed (T's destructor) when XLA destroys the executable.
// Executions of one executable may run concurrently (several threads calling the jitted
// function), so treat the object as read-only after construction or take `lock()` to change it.
#pragma once

#include <mutex>
#include <type_traits>
#include <utility>

namespace jaxcc {

template <typename T>
class State {
  static_assert(std::is_object_v<T> && !std::is_const_v<T>,
                "jaxcc::State<T>: T must be a non-const object type");
  static_assert(std::is_destructible_v<T>,
                "jaxcc::State<T>: T must have an accessible destructor; XLA destroys the state "
                "with the executable");

 public:
  /// Constructs the value in place; called by the generated instantiate stage.
  template <typename... Args>
  explicit State(std::in_place_t, Args&&... args) : value_(std::forward<Args>(args)...) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  T& get() noexcept { return value_; }
  const T& get() const noexcept { return value_; }
  T* operator->() noexcept { return &value_; }
  const T* operator->() const noexcept { return &value_; }
  T& operator*() noexcept { return value_; }
  const T& operator*() const noexcept { return value_; }

  /// Exclusive access against concurrent executions of the same call site: hold the returned
  /// lock while changing the value.
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

 private:
  T value_;
  std::mutex mutex_;
};

}  // namespace jaxcc

#include "util/load_trace.h"

#include <chrono>

namespace jaxcc::trace {
namespace {

using Clock = std::chrono::steady_clock;

struct State {
  Clock::time_point last = Clock::now();
  std::vector<std::pair<std::string, double>> stages;
};

State& ThisThread() {
  thread_local State state;
  return state;
}

}  // namespace

void Reset() {
  State& state = ThisThread();
  state.stages.clear();
  state.last = Clock::now();
}

void Mark(const char* stage) {
  State& state = ThisThread();
  Clock::time_point now = Clock::now();
  double seconds = std::chrono::duration<double>(now - state.last).count();
  state.last = now;
  for (auto& [name, total] : state.stages) {
    if (name == stage) {
      total += seconds;
      return;
    }
  }
  state.stages.emplace_back(stage, seconds);
}

std::vector<std::pair<std::string, double>> Last() { return ThisThread().stages; }

}  // namespace jaxcc::trace

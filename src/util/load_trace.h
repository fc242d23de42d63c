// Where a load spends its time: each stage marks its end, and the time since the previous mark is
// recorded under its name (per thread, a few nanoseconds a mark). benchmarks/bench_warm_load.py
// reads it through jaxcc._core.last_load_trace().
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace jaxcc::trace {

/// Starts a new trace on this thread.
void Reset();
/// Records the time since the previous mark (or Reset) under `stage`; repeated names add up.
void Mark(const char* stage);
/// This thread's trace, in order of first mark: (stage, seconds).
std::vector<std::pair<std::string, double>> Last();

}  // namespace jaxcc::trace

// What every micro-benchmark reports besides time: bytes/s, items/s and
// allocations per iteration (counted by bench/common/count_new.cpp).
#pragma once

#include "count_new.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>

namespace bench::micro {

/// Sets the rates of the iterations run: `bytes` and `items` per
/// iteration, and the `allocs` counter (operator new calls per iteration
/// since allocation_count() was `allocations_before`).
inline void report(benchmark::State& state, std::size_t allocations_before, std::size_t bytes,
                   std::int64_t items) {
  const std::size_t allocations = allocation_count() - allocations_before;
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(allocations), benchmark::Counter::kAvgIterations);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(state.iterations() * items);
}

}  // namespace bench::micro

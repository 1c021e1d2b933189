// Heap allocations counted, for the benchmarks that report allocations per
// operation: count_new.cpp replaces the global operator new and delete with
// malloc and free plus a counter. Link it into the benchmark program (once:
// a program has one replacement) and read allocation_count() around the
// code measured.
#pragma once

#include <cstddef>

namespace bench {

/// Allocations made through operator new so far, by every thread.
std::size_t allocation_count() noexcept;

}  // namespace bench

// The demo service: the methods rapidrpcd serves out of the box, used by the
// tests, the benchmarks and anyone trying rapidrpc out.
//
//   load(n: int) -> string        n-th Fibonacci number in decimal (pool)
//   sample.add(a: int, b: int) -> int   32-bit sum; overflow is a fault
//   echo(value) -> value          returns its argument unchanged
//   sleep(seconds: double) -> boolean   true after that long (async)
//
// Library target: rapidrpc::demo.
#pragma once

#include <rapidrpc/registry.hpp>

#include <cstdint>
#include <string>

namespace rapidrpc::demo {

/// The largest n load() accepts (about 2 s of CPU; the cost grows as n^2).
inline constexpr std::int32_t max_load_n = 1'000'000;
/// The longest sleep() accepts, in seconds.
inline constexpr double max_sleep_seconds = 3600;

/// The n-th Fibonacci number in decimal by the plain iterative loop
/// (fib(1) = fib(2) = 1), on GMP integers. n must be at least 1.
std::string fibonacci(std::int32_t n);

/// Adds the demo methods to `methods`.
void add_methods(registry& methods);

/// Adds the test-only methods, for fault-isolation tests (rapidrpcd
/// --enable-test-methods); never on a production server:
///   test.crash()             the process running it dies with SIGSEGV (pool)
///   test.spin(seconds)       burns CPU that long, returns true (pool)
///   test.throw()             throws a non-fault exception (inline)
///   test.wait(seconds)       true after that long, as a coroutine (inline)
///   test.waiting()           how many test.wait calls are under way
///   test.markup()            returns its own help text, which holds HTML
///                            markup (<script>, <b>, &, quotes; inline)
void add_test_methods(registry& methods);

}  // namespace rapidrpc::demo

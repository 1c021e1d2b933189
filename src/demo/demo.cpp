#include <rapidrpc/demo.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gmp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>

namespace rapidrpc::demo {

namespace {

struct mpz {
  mpz_t v;
  mpz() { mpz_init_set_ui(v, 1); }
  ~mpz() { mpz_clear(v); }
  mpz(const mpz&) = delete;
  mpz& operator=(const mpz&) = delete;
};

}  // namespace

std::string fibonacci(std::int32_t n) {
  // The loop of the first article in docs/benchmarks.md:
  // fib1 = fib2 = 1; n -= 2; while n > 0: fib1, fib2 = fib2, fib1 + fib2
  mpz a, b;
  mpz_ptr fib1 = a.v;
  mpz_ptr fib2 = b.v;
  for (n -= 2; n > 0; --n) {
    mpz_add(fib1, fib1, fib2);
    std::swap(fib1, fib2);
  }
  std::string out(mpz_sizeinbase(fib2, 10) + 1, '\0');
  mpz_get_str(out.data(), 10, fib2);
  out.resize(std::char_traits<char>::length(out.c_str()));
  return out;
}

void add_methods(registry& methods) {
  methods.add(
      "load",
      [](std::int32_t n) {
        if (n < 1 || n > max_load_n)
          throw fault(fault_code::invalid_params,
                      "n must be between 1 and " + std::to_string(max_load_n));
        return fibonacci(n);
      },
      "load(n) returns the n-th Fibonacci number as a decimal string (CPU-heavy; runs on the "
      "worker pool).",
      execution::pool);

  methods.add(
      "sample.add",
      [](std::int32_t a, std::int32_t b) {
        std::int32_t sum = 0;
        if (__builtin_add_overflow(a, b, &sum))
          throw fault(fault_code::application_error,
                      "integer overflow: the sum does not fit in 32 bits");
        return sum;
      },
      "sample.add(a, b) returns a + b; a sum past the 32-bit range is a fault.");

  methods.add_raw(
      "sample.sum",
      [](const array& params) {
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < params.size(); ++i) {
          std::int64_t term = 0;
          if (const auto* p = params[i].get_if<std::int32_t>())
            term = *p;
          else if (const auto* q = params[i].get_if<std::int64_t>())
            term = *q;
          else
            throw fault(fault_code::invalid_params, "parameter " + std::to_string(i + 1) +
                                                        ": expected an integer, got " +
                                                        std::string(kind_name(params[i].type())));
          if (__builtin_add_overflow(sum, term, &sum))
            throw fault(fault_code::application_error,
                        "integer overflow: the sum does not fit in 64 bits");
        }
        if (sum >= INT32_MIN && sum <= INT32_MAX) return value(static_cast<std::int32_t>(sum));
        return value(sum);
      },
      "sample.sum(n...) returns the sum of any number of integers (int, or i8 past 32 bits).");

  methods.add(
      "echo", [](value v) { return v; }, "echo(value) returns its argument unchanged.");

  methods.add_async<bool>(
      "sleep",
      [](responder reply, double seconds) {
        if (!(seconds >= 0 && seconds <= max_sleep_seconds))
          throw fault(fault_code::invalid_params, "seconds must be between 0 and 3600");
        auto timer = std::make_shared<boost::asio::steady_timer>(
            reply.loop(), std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(seconds)));
        timer->async_wait([timer, reply = std::move(reply)](const boost::system::error_code& ec) {
          if (ec)
            reply.fail(fault(fault_code::internal_error, "sleep interrupted"));
          else
            reply.reply(true);
        });
      },
      "sleep(seconds) returns true after that many seconds, holding no thread while it waits.");

  // Names for callers that pass parameters by name (JSON-RPC).
  methods.set_param_names("load", {"n"});
  methods.set_param_names("sample.add", {"a", "b"});
  methods.set_param_names("echo", {"value"});
  methods.set_param_names("sleep", {"seconds"});

  // What rpc.discover shows, and OpenRPC tooling calls to check the server.
  methods.add_example("load", "the tenth Fibonacci number", {10}, "55");
  methods.add_example("sample.add", "two and three", {2, 3}, 5);
  methods.add_example("sample.sum", "one to four", {1, 2, 3, 4}, 10);
  methods.add_example("echo", "a struct", {structure{{"name", "ann"}, {"tags", array{"a", "b"}}}},
                      structure{{"name", "ann"}, {"tags", array{"a", "b"}}});
  methods.add_example("sleep", "a hundredth of a second", {0.01}, true);
}

void add_test_methods(registry& methods) {
  methods.add(
      "test.crash",
      []() -> bool {
        // Die as a crash with no handler does: a sanitizer build installs a
        // SIGSEGV handler whose report (unwinding, symbolizing) can stall in
        // a forked worker, and the watchdog under test would wait for it.
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
        return false;  // not reached
      },
      "test.crash() kills the process running it with SIGSEGV (test only).", execution::pool);

  methods.add(
      "test.spin",
      [](double seconds) {
        if (!(seconds >= 0 && seconds <= max_sleep_seconds))
          throw fault(fault_code::invalid_params, "seconds must be between 0 and 3600");
        auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(seconds));
        volatile std::uint64_t spins = 0;
        while (std::chrono::steady_clock::now() < until) spins = spins + 1;
        return true;
      },
      "test.spin(seconds) burns CPU for that long, then returns true (test only).",
      execution::pool);

  methods.add(
      "test.throw",
      []() -> bool { throw std::runtime_error("/etc/rapidrpc/secret: internal detail"); },
      "test.throw() throws a non-fault exception (test only).");

  // A coroutine method, and how many of its calls are under way: a test
  // sees a call cancelled (its deadline, its client gone) by the count.
  static std::atomic<std::int32_t> waiting{0};
  methods.add(
      "test.wait",
      [](double seconds) -> boost::asio::awaitable<bool> {
        if (!(seconds >= 0 && seconds <= max_sleep_seconds))
          throw fault(fault_code::invalid_params, "seconds must be between 0 and 3600");
        ++waiting;
        struct leave {
          ~leave() { --waiting; }
        } on_exit;
        auto loop = co_await boost::asio::this_coro::executor;
        boost::asio::steady_timer timer(loop, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::duration<double>(seconds)));
        co_await timer.async_wait(boost::asio::use_awaitable);
        co_return true;
      },
      "test.wait(seconds) returns true after that many seconds, as a coroutine (test only).");
  methods.add(
      "test.waiting", [] { return waiting.load(); },
      "test.waiting() says how many test.wait calls are under way (test only).");

  // Help text holding markup, as a Python docstring or a C++ help string
  // may: the API page must show it as text, never run it.
  static constexpr const char* markup_help =
      "test.markup() returns this help text, markup and all: "
      "<script>document.title = 'injected'</script><b>not bold</b> & 'quoted' \"text\" "
      "(test only).";
  methods.add(
      "test.markup", [] { return std::string(markup_help); }, markup_help);
}

}  // namespace rapidrpc::demo

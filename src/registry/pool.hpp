// Private: where a server runs pool methods. A call_context points to one
// pool_target; the registry posts pool methods to its executor (the loop
// itself when it has none), or hands them to its runner: worker processes
// (src/worker) or the process modes' watchdog (src/server/watchdog.hpp).
#pragma once

#include "metrics/metrics.hpp"

#include <rapidrpc/registry.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace rapidrpc::detail {

/// The one answer to a call past its timeout, whatever ran it (the pool
/// threads, a worker process, a worker host, the process modes' watchdog).
inline constexpr std::string_view call_timeout_text = "the call took too long";
inline fault call_timeout() { return {fault_code::timeout, std::string(call_timeout_text)}; }

/// Runs a pool method somewhere other than the worker pool's threads.
class pool_runner {
 public:
  virtual ~pool_runner() = default;
  /// Runs `m` (registered as `name`) with `params` and calls `done` exactly
  /// once on `loop`, within `timeout` (zero: no limit) or with
  /// fault_code::timeout. Called on the loop thread.
  virtual void run(const method& m, std::string_view name, array params,
                   std::chrono::milliseconds timeout, boost::asio::any_io_executor loop,
                   std::function<void(outcome)> done) = 0;
};

/// Where pool methods run.
struct pool_target {
  boost::asio::any_io_executor executor;  ///< the worker threads; empty: the caller's loop
  pool_runner* runner = nullptr;          ///< when set, used instead of `executor`
  /// The pool's queue and busy figures, kept by the threads of `executor`
  /// (a runner keeps its own); null: not counted.
  metrics::pool_stats* stats = nullptr;
};

}  // namespace rapidrpc::detail

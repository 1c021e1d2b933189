// Private: where a server runs pool methods. A call_context points to one
// pool_target; the registry hands each pool call, as one pool_call record,
// to its runner: threads (thread_runner below: the pool's, or the loop's
// own), worker processes or worker hosts (src/worker), or the process
// modes' watchdog (src/server/watchdog.hpp).
//
// A runner whose next hop speaks XML-RPC carries the request as the
// document it came in when the caller has one (passage::request), and
// hands the worker's methodResponse back as it was written
// (passage::take_document): an XML-RPC request to an XML-RPC worker is
// neither written again for the worker nor its answer read and written
// again for the client (docs/design.md, "Where a pool call runs").
#pragma once

#include "metrics/metrics.hpp"

#include <rapidrpc/registry.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace rapidrpc::detail {

/// The one answer to a call past its timeout, whatever ran it (the pool
/// threads, a worker process, a worker host, the process modes' watchdog).
inline constexpr std::string_view call_timeout_text = "the call took too long";
inline fault call_timeout() { return {fault_code::timeout, std::string(call_timeout_text)}; }

/// A caller that passes XML-RPC documents on as they are: the server's
/// exchange of an XML-RPC request.
class passage {
 public:
  /// The request's own methodCall document, when it is in UTF-8 and XML-RPC's
  /// plain grammar (what its parser read directly: no comment, CDATA section
  /// or other encoding), so that any worker reads it; else empty. Valid until
  /// the runner's run() returns.
  std::string_view request;
  /// Takes the answer as the methodResponse a worker wrote, which answers
  /// fault code `fault` (0: a result). Called on the call's loop, just
  /// before the call's `done`, which then gets only a summary of it (a
  /// result of nil, or a fault with that code).
  virtual void take_document(std::string document, std::int32_t fault) = 0;

 protected:
  ~passage() = default;
};

/// One pool call on its way to a runner.
struct pool_call {
  const method* m = nullptr;
  std::string_view name;  ///< valid until run() returns
  array params;
  std::chrono::milliseconds timeout{0};  ///< zero: no limit
  boost::asio::any_io_executor loop;     ///< `done` is called there
  std::function<void(outcome)> done;     ///< called exactly once
  /// Set when the caller takes documents: they pass through (the runner may
  /// ignore it, and answer with `done` alone). It lives as long as `done`.
  passage* through = nullptr;
  /// Keeps `m` valid while the call runs (a reloadable method's table).
  std::shared_ptr<const void> keep;
};

/// Runs pool calls somewhere.
class pool_runner {
 public:
  virtual ~pool_runner() = default;
  /// Runs `c` and finishes it exactly once on c.loop, within c.timeout or
  /// with call_timeout(). Called on the loop thread.
  virtual void run(pool_call c) = 0;
  /// Starts the workers' code anew (a reload): every worker process is
  /// replaced, between calls, by one that loads the code again. `done(true)`
  /// once every worker runs the new code, `done(false)` if it does not start
  /// (the workers running serve on); on the runner's own thread, and not at
  /// all if the runner is destroyed first. Renewals asked for while one is
  /// under way follow it, in order. False, and nothing done, for a runner
  /// without worker processes.
  // By value: an override keeps it.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  virtual bool renew(std::function<void(bool renewed)> /*done*/) { return false; }
};

/// Appends to `out` the methodCall a worker gets for `c`: the request's own
/// when the caller lends it, else written from the call's values.
void append_call_document(std::string& out, const pool_call& c);

/// Finishes `c`, from any thread, with a worker's methodResponse
/// `document` (which need not outlive the call): on c.loop, through
/// c.through as it is when the caller takes documents, else read into an
/// outcome here (a document that cannot be read is an internal error,
/// `unreadable` its message).
void finish_with_document(pool_call& c, std::string_view document, std::string_view unreadable);

/// Runs pool calls on the threads of an executor (the pool threads, or the
/// loop itself), with one timer per call that has a timeout: a thread
/// cannot be stopped, so a late result is dropped.
class thread_runner final : public pool_runner {
 public:
  /// `stats`, if set, gets the queue and busy figures (it outlives the
  /// runner).
  explicit thread_runner(boost::asio::any_io_executor threads,
                         metrics::pool_stats* stats = nullptr) noexcept
      : threads_(std::move(threads)), stats_(stats) {}
  void run(pool_call c) override;

 private:
  boost::asio::any_io_executor threads_;
  metrics::pool_stats* stats_;
};

/// Where pool methods run.
struct pool_target {
  /// Runs them; null: on the caller's loop, as a thread_runner there would.
  pool_runner* runner = nullptr;
};

}  // namespace rapidrpc::detail

// The load generator behind `rapidrpc bench`: many connections calling one
// method, every answer checked, latencies in a histogram.
//
// Threads: run() starts `threads` threads, each with an io_context of its
// own; the connections are spread over them round-robin, and a connection
// is only ever touched by its thread. Each thread keeps its own histogram
// and timeline; run() merges them after the threads end. While the load
// runs, the only other reader is the live line's thread (live_line.hpp),
// which reads each thread's latency histogram and error count with relaxed
// atomic loads; the load threads take no lock for it.
//
// Per request, on a keep-alive connection: one send() of the pre-encoded
// request, one recv() for the response (after a short read Asio waits for
// epoll instead of trying a read that would block), the framing, the check:
// an answer byte-identical to one this connection already parsed and found
// right passes as is; any other is parsed (one reused expat parser per
// connection) and its value compared with the expected one. No allocation
// on that path once the buffers have grown to fit.
#pragma once

#include "histogram.hpp"
#include "live_line.hpp"

#include <rapidrpc/client.hpp>
#include <rapidrpc/value.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rapidrpc::cli {

/// What to run.
struct bench_options {
  std::string url;
  std::string method;
  array params;
  std::size_t connections = 16;  ///< connections (ZeroMQ: DEALER sockets)
  std::size_t in_flight = 1;     ///< ZeroMQ: calls kept in flight per socket
  std::uint64_t requests = 0;    ///< total calls; 0: run for `duration`
  double duration = 10;          ///< seconds, when requests == 0
  bool keep_alive = true;        ///< false: a new connection per call
  double rate = 0;               ///< calls/s, open loop; 0: closed loop (as fast as answered)
  unsigned threads = 1;
  double timeout = 10;  ///< seconds one call may take
  /// Seconds a keep-alive connection may have been idle and still carry the
  /// next call; one idle longer is opened anew first, since the server may be
  /// closing it. Below the server's keep-alive timeout. 0: no limit.
  double max_idle = 1;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string ca_file;          ///< https: CA certificates to verify with (empty: the system's)
  bool insecure = false;        ///< https: accept any certificate (no verification)
  std::optional<value> expect;  ///< the expected result; unset: the warm-up call's
  rapidrpc::protocol protocol = protocol::xmlrpc;
};

/// Errors by kind.
struct error_counts {
  std::uint64_t connect = 0;       ///< could not connect
  std::uint64_t io = 0;            ///< the connection failed or closed mid-call
  std::uint64_t timeout = 0;       ///< no answer within --timeout
  std::uint64_t http_status = 0;   ///< an HTTP status other than 200
  std::uint64_t bad_response = 0;  ///< not HTTP, not XML-RPC
  std::uint64_t fault = 0;         ///< an XML-RPC fault
  std::uint64_t mismatch = 0;      ///< a result other than the expected one

  std::uint64_t total() const noexcept {
    return connect + io + timeout + http_status + bad_response + fault + mismatch;
  }
  void add(const error_counts& o) noexcept {
    connect += o.connect;
    io += o.io;
    timeout += o.timeout;
    http_status += o.http_status;
    bad_response += o.bad_response;
    fault += o.fault;
    mismatch += o.mismatch;
  }
};

/// One slice of the run's timeline.
struct time_slot {
  std::uint64_t ok = 0;
  std::uint64_t errors = 0;
  std::uint64_t latency_sum_ns = 0;  ///< of the ok calls
  std::uint64_t latency_max_ns = 0;
};

/// What a run measured.
struct bench_result {
  bench_options options;
  value expected;                    ///< what every answer was compared with
  std::string request_bytes_sample;  ///< the request's head, for the report
  std::size_t request_bytes = 0;     ///< size of one request on the wire
  std::uint64_t ok = 0;
  /// Calls still in flight when a timed run ended: abandoned, neither ok nor
  /// errors (as wrk leaves them).
  std::uint64_t unfinished = 0;
  error_counts errors;
  std::string first_error;  ///< a description of the first error seen
  double elapsed_s = 0;     ///< the timed run's duration, or first send to last answer
  histogram latency;        ///< of the ok calls, nanoseconds
  std::chrono::nanoseconds slot_width{std::chrono::milliseconds(100)};
  std::vector<time_slot> timeline;  ///< from the start, slot_width each
  std::string started_at;           ///< wall-clock start, UTC, ISO 8601
};

/// What one load thread counted, kept by each thread on its own and merged
/// into the bench_result after the threads end (merge_into()).
struct thread_tally {
  using clock = std::chrono::steady_clock;

  thread_tally(clock::time_point start, clock::duration slot_width)
      : start_(start), slot_width_(slot_width) {}

  /// One call answered as expected, started at `started`.
  void record_ok(clock::time_point started, clock::time_point now);
  /// One call failed; `what` becomes first_error if it is the first.
  void record_error(clock::time_point now, std::string_view what);
  /// The timeline's slot of `now`.
  time_slot& slot_at(clock::time_point now);
  /// Adds these counts to `result`.
  void merge_into(bench_result& result) const;
  /// Adds the ok calls' latencies and the errors so far to `out`; may run
  /// on another thread while this one records (the live line).
  void add_live_to(live_figures& out) const noexcept;

  histogram latency;
  std::uint64_t ok = 0;
  std::uint64_t unfinished = 0;  ///< in flight when a timed run ended
  error_counts errors;
  std::string first_error;
  std::vector<time_slot> timeline;
  clock::time_point last_done{};

 private:
  clock::time_point start_;
  clock::duration slot_width_;
  // errors.total(), but written as a relaxed atomic, for add_live_to():
  // the kinds' counters are bumped in many places, this one in record_error().
  std::uint64_t errors_so_far_ = 0;
};

/// A run that could not start (bad URL, no answer to the warm-up call, ...).
class bench_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- what both load drivers (HTTP here, ZeroMQ in zmq_loadgen.cpp) share ----

/// One load thread's share of a run.
struct thread_share {
  std::size_t connections = 0;                  ///< connections (ZeroMQ: sockets) it drives
  std::uint64_t quota = 0;                      ///< its part of a counted run (0: timed)
  double rate = 0;                              ///< its calls/s, open loop (0: closed loop)
  std::chrono::steady_clock::duration phase{};  ///< its first call's offset, open loop
};

/// How many load threads a run uses: options.threads, at least one and at
/// most one per connection.
unsigned load_threads(const bench_options& options) noexcept;
/// Thread `t`'s share of a run on `threads` threads: connections, calls
/// and rate spread as evenly as they go, open-loop starts staggered.
thread_share share_of(const bench_options& options, unsigned threads, unsigned t) noexcept;

/// Which calls a load thread may still start, the same for every driver:
/// its quota in a counted run, its window in a timed one; and, open loop,
/// when each call is due. A call that comes due while no connection is free
/// is deferred, and started later with its latency counted from when it was
/// due (no coordinated omission).
class call_schedule {
 public:
  using clock = std::chrono::steady_clock;

  call_schedule(const bench_options& options, const thread_share& share, clock::time_point start,
                clock::time_point deadline) noexcept;

  /// True for a run at a fixed rate (open loop).
  bool open_loop() const noexcept { return open_loop_; }
  /// True once no more calls may start.
  bool over() const noexcept { return over_; }
  /// No more calls may start (the run was cut short).
  void end() noexcept { over_ = true; }

  /// Closed loop: takes one call if another may start now; false (and over
  /// from then on) once the quota or the window is spent.
  bool take(clock::time_point now) noexcept;

  /// Open loop: the due time of the next call due by `now`, taken; none if
  /// nothing is due yet, or if the run is over (over() then says so).
  std::optional<clock::time_point> take_due(clock::time_point now) noexcept;
  /// Open loop: when the next call comes due.
  clock::time_point next_due() const noexcept { return next_due_; }
  /// Open loop: a call that came due at `due` while no connection was free.
  void defer(clock::time_point due) { deferred_.push_back(due); }
  /// The oldest deferred call's due time, taken; none if none waits.
  std::optional<clock::time_point> take_deferred() noexcept;
  /// Forgets the deferred calls (the run ended).
  void drop_deferred() noexcept {
    deferred_.clear();
    deferred_head_ = 0;
  }

 private:
  bool counted_;
  bool open_loop_;
  bool over_ = false;
  std::uint64_t quota_;
  clock::time_point deadline_;
  clock::duration interval_{};
  clock::time_point next_due_{};
  std::vector<clock::time_point> deferred_;
  std::size_t deferred_head_ = 0;
};

/// Now, UTC, ISO 8601 to the second: a run's started_at.
std::string utc_now();

/// The result every call of the run must give: the warm-up call's. Throws
/// bench_error if it failed (a transport error) or returned a fault.
value expected_from_warmup(const outcome& warm);

/// Runs every worker (`run()`), the first on the calling thread, the others
/// on threads of their own, and returns when all are done; `live`, if
/// given, shows their figures meanwhile and is stopped (its line erased)
/// before this returns.
template <class Worker>
void run_workers_on_threads(std::vector<std::unique_ptr<Worker>>& workers,
                            live_line* live = nullptr) {
  std::vector<std::thread> running;
  for (std::size_t t = 1; t < workers.size(); ++t)
    running.emplace_back([w = workers[t].get()] { w->run(); });
  if (live)
    live->start([&workers](live_figures& out) {
      for (const auto& w : workers) w->add_live_to(out);
    });
  workers[0]->run();
  for (auto& th : running) th.join();
  if (live) live->stop();
}

/// Merges the workers' tallies (thread_tally) into `result` and sets its
/// elapsed time: a timed run is judged over its window, a counted one from
/// `start` to its last answer.
template <class Worker>
void merge_workers(const std::vector<std::unique_ptr<Worker>>& workers,
                   std::chrono::steady_clock::time_point start, bench_result& result) {
  std::chrono::steady_clock::time_point last{};
  for (const auto& w : workers) {
    w->merge_into(result);
    last = std::max(last, w->last_done);
  }
  if (!result.options.requests)
    result.elapsed_s = result.options.duration;
  else
    result.elapsed_s = last > start ? std::chrono::duration<double>(last - start).count() : 0;
}

/// Raises this process's descriptor limit to its hard limit: each
/// connection (or ZeroMQ socket) is a descriptor.
void raise_descriptor_limit() noexcept;

/// Makes the warm-up call (unless options.expect is set), then runs the load,
/// shown by `live` if given. Throws bench_error if it cannot start.
bench_result run_bench(const bench_options& options, live_line* live = nullptr);

}  // namespace rapidrpc::cli

// Private: the server's counters, and their Prometheus text exposition.
//
// Counting costs a call no lock and no cache line shared with another
// thread: every thread that serves calls (a loop, the ZeroMQ endpoint, a
// child process of the process modes) writes to a shard of its own, with
// plain relaxed loads and stores (it is the shard's only writer); a scrape
// adds the shards up. The shards live in one shared anonymous mapping made
// before any process is forked, so what the children of fork and prefork
// count is seen by the parent that serves /metrics.
//
// Worker-pool figures (queue, busy workers, restarts) change once per pool
// call, which already crosses threads; they are atomics of their own
// (pool_stats), in the same mapping: the supervisor process of prefork
// counts its workers' restarts there.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rapidrpc::detail::metrics {

/// The protocol label of a call.
enum class protocol : std::uint8_t { xmlrpc, jsonrpc };
inline constexpr std::size_t protocol_count = 2;

/// How a call ended: a result, a fault, or fault_code::timeout.
enum class outcome : std::uint8_t { ok, fault, timeout };
inline constexpr std::size_t outcome_count = 3;

/// Why a request (or a connection) was turned away before or instead of a
/// call: each limit, access control, and malformed requests.
enum class rejection : std::uint8_t {
  bad_request,             ///< HTTP 400: framing, a corrupt gzip body
  auth,                    ///< HTTP 401: no valid credentials
  allowlist,               ///< HTTP 403: a peer outside --allow
  not_found,               ///< HTTP 404: a path that serves nothing
  method_not_allowed,      ///< HTTP 405
  request_timeout,         ///< HTTP 408
  body_too_large,          ///< HTTP 413 (after decompression too)
  request_line_too_large,  ///< HTTP 414
  unsupported_encoding,    ///< HTTP 415
  expectation_failed,      ///< HTTP 417
  header_too_large,        ///< HTTP 431: header bytes or fields
  connections,             ///< HTTP 503: past max_connections
  method_denied,           ///< fault -32002: the authorizer refused the call
  invalid_request,         ///< fault -32600: past a document limit, or not a call
};
inline constexpr std::size_t rejection_count = 14;

/// The reason label of `r` ("body_too_large", ...).
std::string_view name(rejection r) noexcept;

/// The rejection an HTTP error status stands for; false for another status.
bool rejection_for_status(int status, rejection& out) noexcept;

/// Upper bounds of the call-duration histogram's buckets, in seconds (the
/// +Inf bucket is the count).
inline constexpr std::array<double, 17> bucket_bounds = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10};

/// Why a worker process (or a prefork process) was replaced.
enum class restart_cause : std::uint8_t {
  crash,         ///< died during a call: a signal or an exit
  idle_death,    ///< died while idle (the OOM killer, a kill)
  timeout,       ///< killed by the pool: its call ran past its timeout
  protocol,      ///< killed by the pool: it broke the worker protocol
  max_requests,  ///< replaced after workers.max_requests calls (with its jitter)
  max_lifetime,  ///< replaced past workers.max_lifetime
  max_memory,    ///< replaced past workers.max_memory_bytes
  reload,        ///< replaced by a reload of the workers' code
};
inline constexpr std::size_t restart_cause_count = 8;

/// How many worker processes' memory a scrape lists (pool_stats::pids).
inline constexpr std::size_t listed_workers = 256;

/// The worker pool's figures. Written by the pool (the threads that run
/// pool methods, or the worker processes' thread), read by a scrape.
struct pool_stats {
  std::atomic<std::int64_t> queued{0};  ///< calls waiting for a worker
  std::atomic<std::int64_t> busy{0};    ///< workers running a call
  /// Worker processes alive and serving; -1: the pool has no processes.
  std::atomic<std::int64_t> processes_up{-1};
  /// Worker hosts connected and taking calls; -1: not a front of hosts.
  std::atomic<std::int64_t> hosts_up{-1};
  std::array<std::atomic<std::uint64_t>, restart_cause_count> restarts{};
  /// How long pool calls waited for a worker to take them: counts per
  /// bucket of bucket_bounds (not cumulative), their number and sum.
  std::array<std::atomic<std::uint64_t>, bucket_bounds.size()> wait_buckets{};
  std::atomic<std::uint64_t> waits{0};
  std::atomic<std::uint64_t> wait_ns{0};
  /// The process in each slot of a pool of worker processes (0: none), so
  /// that a scrape reads each one's memory; the first listed_workers slots.
  std::array<std::atomic<std::int32_t>, listed_workers> pids{};

  void restarted(restart_cause c) noexcept {
    restarts[static_cast<std::size_t>(c)].fetch_add(1, std::memory_order_relaxed);
  }
  /// A pool call waited `d` for a worker.
  void waited(std::chrono::steady_clock::duration d) noexcept;
  /// Slot `slot` holds process `pid` now (0: none).
  void slot(std::size_t slot, int pid) noexcept {
    if (slot < pids.size()) pids[slot].store(pid, std::memory_order_relaxed);
  }
};

/// The memory process `pid` holds of its own, shared with no other process
/// (Private_Clean and Private_Dirty of /proc/PID/smaps_rollup), in bytes;
/// 0 if it cannot be read. It walks the process's page tables: about
/// 0.6 ms for 130 MiB.
std::uint64_t own_memory(int pid) noexcept;

class store;

/// One writer's counters. Every member function is for the shard's own
/// thread (or process) only; a default shard counts nothing.
class shard {
 public:
  shard() = default;

  explicit operator bool() const noexcept { return base_ != nullptr; }

  void connection_opened() noexcept {
    if (base_ == nullptr) return;
    bump(connections_total_at, 1);
    bump(connections_open_at, 1);
  }
  void connection_closed() noexcept {
    if (base_ != nullptr) bump(connections_open_at, ~std::uint64_t{0});  // -1, wrapping
  }
  void received(std::size_t bytes) noexcept {
    if (base_ != nullptr) bump(bytes_in_at, bytes);
  }
  void sent(std::size_t bytes) noexcept {
    if (base_ != nullptr) bump(bytes_out_at, bytes);
  }
  void rejected(rejection r) noexcept {
    if (base_ != nullptr) bump(rejections_at + static_cast<std::size_t>(r), 1);
  }
  void call_started() noexcept {
    if (base_ != nullptr) bump(in_flight_at, 1);
  }
  /// A call answered: `method` is the store's index for its name
  /// (store::method_index), `elapsed` from its start.
  void call_finished(protocol p, std::size_t method, outcome o,
                     std::chrono::nanoseconds elapsed) noexcept;

 private:
  friend class store;
  shard(std::uint64_t* base, std::size_t methods) noexcept : base_(base), methods_(methods) {}

  // Word offsets within a shard.
  static constexpr std::size_t connections_total_at = 0;
  static constexpr std::size_t connections_open_at = 1;
  static constexpr std::size_t in_flight_at = 2;
  static constexpr std::size_t bytes_in_at = 3;
  static constexpr std::size_t bytes_out_at = 4;
  static constexpr std::size_t rejections_at = 5;
  static constexpr std::size_t cells_at = rejections_at + rejection_count;
  // One cell per (protocol, method): outcomes, the duration sum in
  // nanoseconds, then the buckets (not cumulative).
  static constexpr std::size_t sum_in_cell = outcome_count;
  static constexpr std::size_t buckets_in_cell = sum_in_cell + 1;
  static constexpr std::size_t cell_words = buckets_in_cell + bucket_bounds.size();

  void bump(std::size_t at, std::uint64_t n) noexcept {
    std::atomic_ref<std::uint64_t> word(base_[at]);
    word.store(word.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::uint64_t* base_ = nullptr;
  std::size_t methods_ = 0;  // registered names, plus one for the others
};

/// Figures of the serving process, read from /proc when scraped.
struct process_figures {
  double cpu_seconds = 0;
  double start_time_seconds = 0;  ///< since the Unix epoch
  std::uint64_t resident_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  std::uint64_t open_fds = 0;
  std::uint64_t max_fds = 0;
};

/// This process's figures (zeros where /proc cannot be read).
process_figures read_process_figures();

/// All shards, the method names they count by, and the pool's figures.
///
/// Threading: constructed before the server starts; shard() hands each
/// writer its shard then. write_exposition() may run on any thread at any
/// time: it reads every word relaxed, so a scrape sees each counter as it
/// was at some moment, and never a torn value.
class store {
 public:
  /// Counts calls of `methods` by name (any other name counts as
  /// other_method), for `shards` writers. Throws std::system_error if the
  /// shared mapping cannot be made.
  store(std::vector<std::string> methods, std::size_t shards);
  ~store();
  store(const store&) = delete;
  store& operator=(const store&) = delete;

  /// The label of calls to a method that is not registered.
  static constexpr std::string_view other_method = "(other)";
  /// The label of a JSON-RPC batch, counted as one call.
  static constexpr std::string_view batch_method = "(batch)";

  /// The index of `name` for shard::call_finished(): its place among the
  /// registered names, or that of other_method.
  std::size_t method_index(std::string_view name) const noexcept;
  /// The index of batch_method.
  std::size_t batch_index() const noexcept { return methods_.size() - 2; }

  /// Writer `i`'s shard (i < the shard count).
  shard at(std::size_t i) noexcept;
  std::size_t shards() const noexcept { return shards_; }

  /// Zeroes writer `i`'s gauges (open connections, calls in flight): its
  /// process died, perhaps in the middle of a call.
  void reset_gauges(std::size_t i) noexcept;

  pool_stats& pool() noexcept { return *pool_; }

  /// Appends the Prometheus text exposition (format 0.0.4) of every
  /// metric, with `process` as the process_* metrics.
  void write_exposition(std::string& out, const process_figures& process) const;

 private:
  std::uint64_t read(std::size_t shard, std::size_t at) const noexcept;
  std::uint64_t total(std::size_t at) const noexcept;

  std::vector<std::string> methods_;  // registered names, batch_method, other_method
  std::unordered_map<std::string_view, std::size_t> index_;
  std::size_t shards_;
  std::size_t shard_words_;  // rounded up to whole cache lines
  std::size_t mapped_bytes_;
  std::uint64_t* words_ = nullptr;
  pool_stats* pool_ = nullptr;  // after the shards, in the mapping
};

}  // namespace rapidrpc::detail::metrics

// Private: where a server's pool calls run, chosen in this one place from
// the mode and the options (docs/design.md, "Modes"): pool threads, the
// process modes' watchdog, worker processes (isolate), or the front of
// worker hosts (worker_hosts.listen), which has threads or processes of its own
// besides when `workers` is not 0; each is a pool_runner (registry/pool.hpp).
// serving_state::pool points at what runs them.
#pragma once

#include "server/loop.hpp"
#include "service/service.hpp"

#include <rapidrpc/server_options.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc::detail {

class pool_runner;
class remote_pool;

/// The threads that run pool methods, as a service: built with no thread,
/// they start in start() (so that a start that fails part-way, here or in
/// a service before, has none to undo), run the calls of the loops and
/// endpoints started after them, so stopping changes nothing, and join()
/// lets the calls running end. (Boost.Asio's thread_pool starts its
/// threads in its constructor, and a constructor whose second thread cannot
/// be had waits forever for the first.)
class pool_threads final : public service {
 public:
  explicit pool_threads(unsigned count);
  ~pool_threads() override;
  pool_threads(const pool_threads&) = delete;
  pool_threads& operator=(const pool_threads&) = delete;

  boost::asio::io_context::executor_type executor() noexcept { return io_.get_executor(); }
  /// Starts the threads; if one cannot be had, ends those started and throws.
  void start() override;
  void stop(std::chrono::milliseconds /*drain*/) override {}
  /// Ends the threads once the calls running have ended; calls queued and
  /// not begun are dropped.
  void join() override;

 private:
  unsigned count_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
};

struct pool_runners {
  std::unique_ptr<pool_threads> threads;  ///< pool threads, when calls run on threads
  std::unique_ptr<pool_runner> runner;    ///< the threads', the watchdog, processes or front
  remote_pool* front = nullptr;           ///< `runner`, when it is the front of worker hosts

  pool_runners();
  ~pool_runners();
  pool_runners(pool_runners&&) noexcept;
  pool_runners& operator=(pool_runners&&) noexcept;

  /// Adds what runs on threads or processes of its own to `services`: the
  /// pool threads, then the front (the process supervisor and the worker
  /// processes start with their own constructors).
  void add_services(service_list& services);
  /// Destroys them, the runner first: its completions post to the loops,
  /// which must still be there. Joined first (add_services()).
  void reset();
};

/// The runners for `o` (valid options: options_refusal()), with
/// `shared.pool` pointing at them; the front's addresses bound. Throws
/// std::runtime_error for an address the front cannot bind and what
/// starting worker processes throws.
pool_runners make_pool_runners(const server_options& o, serving_state& shared);

}  // namespace rapidrpc::detail

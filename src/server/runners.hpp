// Private: where a server's pool calls run, chosen in this one place from
// the mode and the options (docs/design.md, "Modes"): pool threads, the
// process modes' watchdog, worker processes (isolate), or the front of
// worker hosts (worker_listen), which has threads or processes of its own
// besides when `workers` is not 0. shared_state::pool points at what runs
// them.
#pragma once

#include "server/loop.hpp"
#include "service/service.hpp"

#include <rapidrpc/server_options.hpp>

#include <boost/asio/thread_pool.hpp>

#include <memory>
#include <string>
#include <vector>

namespace rapidrpc::detail {

class pool_runner;
class remote_pool;

struct pool_runners {
  std::unique_ptr<boost::asio::thread_pool> threads;  ///< pool threads, when calls run on threads
  std::unique_ptr<service> threads_service;           ///< their lifecycle, as a service
  std::unique_ptr<pool_runner> runner;   ///< the watchdog, worker processes or the front
  remote_pool* front = nullptr;          ///< `runner`, when it is the front of worker hosts
  std::vector<std::string> front_bound;  ///< the front's addresses (worker_endpoints())

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
pool_runners make_pool_runners(const server_options& o, shared_state& shared);

}  // namespace rapidrpc::detail

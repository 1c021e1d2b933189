// Private: the front's side of worker hosts (server_options::worker_hosts.listen).
// Pool calls go to the least loaded of the local workers (threads or worker
// processes, if any) and the worker hosts connected, each loaded by its
// calls in flight over what it announced it can run at once; a call waits
// at the front when all are full. A host that falls silent (remote.hpp) is
// dropped, and the calls it was running fail with a fault: they may have
// run. A call not yet sent to one waits for the next.
//
// Threads: one of its own, running an io_context that owns the ROUTER socket
// (waited on through ZMQ_FD, as zmq/router.hpp does), the queue and every
// host's state. Results are posted back to each caller's loop.
#pragma once

#include "log/log.hpp"
#include "metrics/metrics.hpp"
#include "registry/pool.hpp"
#include "service/service.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rapidrpc::detail {

class remote_pool : public pool_runner, public virtual service {
 public:
  struct settings {
    /// Local workers: `local_capacity` calls at once, run by the runner
    /// `local_runner` makes (threads, or worker processes counted into the
    /// figures it is given; the pool owns it). Zero: every call goes to a
    /// worker host.
    unsigned local_capacity = 0;
    std::function<std::unique_ptr<pool_runner>(metrics::pool_stats*)> local_runner;
    /// The local runner ends a call at its timeout (worker processes do;
    /// threads cannot, so a call of theirs keeps its place until it
    /// returns).
    bool local_timeouts = false;
    /// Receives the pool's figures (outlives the pool); may be null.
    metrics::pool_stats* stats = nullptr;
    /// Past this size libzmq drops the host's connection.
    std::size_t max_message_bytes = 64 * 1024 * 1024;
    /// CurveZMQ: the front's secret key and the hosts' public keys it lets
    /// in (Z85, checked); empty: none.
    std::string curve_secret_key;
    std::vector<std::string> curve_host_keys;
    logger lines;  ///< hosts come and gone, refused handshakes
  };

  /// Binds one more address, before start(); returns the address bound,
  /// which endpoints() then lists. Throws std::runtime_error saying why it
  /// cannot.
  virtual std::string bind(const std::string& address) = 0;
  // As a service: start() starts its thread. stop() changes nothing: the
  // loops and endpoints that hand it calls drain after it is stopped, and it
  // serves their calls until it is joined, after them (service.hpp); join()
  // ends its thread, and the calls still waiting are dropped with their
  // loops.
};

std::unique_ptr<remote_pool> make_remote_pool(remote_pool::settings s);

}  // namespace rapidrpc::detail

// Private: the factories of the server's ZeroMQ services, each from its
// options group: the ZeroMQ endpoint (server_options::zmq) and a worker
// host's link (server_options::worker_hosts). They are the one call the server's assembly
// makes for each (server.cpp). They live here, not beside their services
// (src/zmq, src/worker), which know nothing of what the loops share.
#pragma once

#include "server/loop.hpp"
#include "service/service.hpp"

#include <rapidrpc/registry.hpp>
#include <rapidrpc/server_options.hpp>

#include <memory>

namespace rapidrpc::detail {

/// The ZeroMQ endpoint `o` asks for, bound to each of its addresses,
/// serving `methods` as the loops do (`shared`'s limits, pool calls, access
/// list, access log and metrics, shard 0); null when it has no address.
/// Not started. Throws std::runtime_error for an address it cannot bind.
std::unique_ptr<service> make_zmq_endpoint(const zmq_options& o, const registry& methods,
                                           const serving_state& shared);

/// A worker host's link to the front `o.connect`, offering the front
/// `workers` calls at once (worker_options::count: as many as the host's
/// pool runs); null when `o.connect` is empty. Not started.
std::unique_ptr<service> make_worker_link(const worker_host_options& o, unsigned workers,
                                          const registry& methods, const serving_state& shared);

}  // namespace rapidrpc::detail

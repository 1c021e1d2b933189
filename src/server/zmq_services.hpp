// Private: the factories of the server's ZeroMQ services, each from its
// options group: the ZeroMQ endpoint (server_options::zmq) and a worker
// host's link (worker_connect). They are the one call the server's assembly
// makes for each (server.cpp). They live here, not beside their services
// (src/zmq, src/worker), which know nothing of what the loops share.
#pragma once

#include "server/loop.hpp"
#include "service/service.hpp"

#include <rapidrpc/registry.hpp>
#include <rapidrpc/server_options.hpp>

#include <memory>

namespace rapidrpc::detail {

/// The ZeroMQ endpoint `o.zmq` asks for, bound to each of its addresses,
/// serving `methods` as the loops do (`shared`'s limits, pool calls, access
/// list, access log and metrics, shard 0); null when `o.zmq` is empty. Not
/// started. Throws std::runtime_error for an address it cannot bind.
std::unique_ptr<service> make_zmq_endpoint(const server_options& o, const registry& methods,
                                           const serving_state& shared);

/// A worker host's link to the front `o.worker_connect`, offering the
/// front as many calls at once as the host's pool runs; null when
/// `o.worker_connect` is empty. Not started.
std::unique_ptr<service> make_worker_link(const server_options& o, const registry& methods,
                                          const serving_state& shared);

}  // namespace rapidrpc::detail

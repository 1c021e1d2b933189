#include "server/zmq_services.hpp"

#include "worker/worker_link.hpp"
#include "zmq/router.hpp"

namespace rapidrpc::detail {

std::unique_ptr<service> make_zmq_endpoint(const zmq_options& o, const registry& methods,
                                           const serving_state& shared) {
  if (o.endpoints.empty()) return nullptr;
  zmq_router::settings z;
  z.methods = &methods;
  z.limits = shared.limits;
  z.max_message_bytes = shared.limits.max_body_bytes;
  z.pool = &shared.pool;
  z.access = shared.access;
  z.log = shared.log;
  z.metrics = shared.metrics;
  z.metrics_shard = 0;
  z.lines = shared.lines;
  auto endpoint = std::make_unique<zmq_router>(z);
  for (const auto& address : o.endpoints) endpoint->bind(address);
  return endpoint;
}

std::unique_ptr<service> make_worker_link(const worker_host_options& o, unsigned workers,
                                          const registry& methods, const serving_state& shared) {
  if (o.connect.empty()) return nullptr;
  worker_link_settings w;
  w.methods = &methods;
  w.limits = shared.limits;
  w.pool = &shared.pool;
  w.capacity = count_or_cores(workers);
  w.front = o.connect;
  w.curve_secret_key = o.curve.secret_key;
  w.curve_front_key = o.curve.front_public_key;
  w.lines = shared.lines;
  return open_worker_link(std::move(w));
}

}  // namespace rapidrpc::detail

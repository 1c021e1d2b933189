// Private: a worker host's side (server_options::worker_hosts.connect). A DEALER
// socket connected to the front (remote.hpp) announces how many calls the
// host runs at once, runs each call the front sends through the host's own
// registry and pool, as any transport does (rpc/exchange.hpp), and sends
// its answer back. When it hears nothing from the front for
// remote::peer_timeout it connects again, under the same identity; calls
// still running answer on the new connection, and it announces itself again
// once they have ended (so are its places free when the front hears READY).
//
// Threads: one of its own, running an io_context that owns the socket, as
// zmq/router.hpp does; pool methods run on the host's pool and their
// outcomes come back to it.
#pragma once

#include "log/log.hpp"

#include <rapidrpc/limits.hpp>
#include <rapidrpc/registry.hpp>

#include "registry/pool.hpp"
#include "service/service.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace rapidrpc::detail {

struct worker_link_settings {
  const registry* methods = nullptr;
  rapidrpc::limits limits;            ///< the document limits
  const pool_target* pool = nullptr;  ///< where pool methods run
  std::uint32_t capacity = 1;         ///< calls at once announced to the front
  std::string front;                  ///< "tcp://front.example:7000"
  /// CurveZMQ: this host's secret key and the front's public key (Z85,
  /// checked); empty: none.
  std::string curve_secret_key;
  std::string curve_front_key;
  logger lines;  ///< a front gone quiet, a send that failed
};

/// The link, connecting (libzmq connects in the background) and not yet
/// started. As a service (zmq/service.hpp): start() serves on a thread of
/// its own; stop() tells the front to send no more calls, answers the
/// calls in flight (for at most the drain), then closes. Throws
/// std::runtime_error if `front` is not an address ZeroMQ takes.
std::unique_ptr<service> open_worker_link(worker_link_settings s);

}  // namespace rapidrpc::detail

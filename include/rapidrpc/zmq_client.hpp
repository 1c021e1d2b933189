// The JSON-RPC 2.0 client over ZeroMQ: a DEALER socket connected to a
// server's ROUTER endpoint (rapidrpcd --zmq), many calls in flight on it.
//
// The wire: each call is ONE frame holding a JSON-RPC 2.0 request object
// (docs/jsonrpc.md maps the values), with an integer id unique within the
// client; the server answers with ONE frame, the response object, in any
// order, and replies are matched to their calls by id. A reply that matches
// no call in flight (a call that timed out, say) is dropped; one with id
// null (the server could not read the request) answers the call in flight
// if exactly one is, and is dropped otherwise.
//
// Connecting: ZeroMQ connects in the background and reconnects by itself
// after a lost connection. Requests sent before the connection is up wait in
// the socket's queue, so "no server" shows as a call that times out: the
// timeout covers connecting too, and there is no separate connect error. A
// server drops the connection of a request past its body limit (rapidrpcd:
// --max-body-bytes) without a reply: that call times out, and the calls
// after it go over the new connection. A call whose request had already
// gone out on a connection that is lost gets no reply and times out too;
// nothing is resent.
//
// Each client has a ZeroMQ context of its own (one I/O thread) and one
// DEALER socket; closing the client closes the socket with ZMQ_LINGER 0, so
// requests not yet sent are discarded.
//
// Threading: a client is used from one thread at a time. The synchronous
// calls run the client's own io_context on the calling thread; a client
// built on an executor must be used from that executor's thread, and its
// completions run there. Both watch the socket's ZMQ_FD with the reactor:
// the descriptor belongs to ZeroMQ and is never closed by the client.
#pragma once

#include <rapidrpc/client_base.hpp>
#include <rapidrpc/fault.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace rapidrpc {

/// A ZeroMQ endpoint a zmq_client connects to: `tcp://host:port` (host a
/// name, an IPv4 address or a bracketed IPv6 one) or `ipc://path`.
struct zmq_endpoint {
  std::string scheme;   ///< "tcp" or "ipc"
  std::string address;  ///< the whole URL, as given to zmq_connect()

  /// Parses `text`; throws std::invalid_argument with the reason if it is
  /// not such a URL.
  static zmq_endpoint parse(std::string_view text);
  /// True if `text` starts with tcp:// or ipc:// (to choose a client).
  static bool is_zmq_url(std::string_view text) noexcept;
};

/// How a zmq_client behaves. Every field has a working default.
struct zmq_client_options {
  /// Time for one call, from its send to its reply, connecting included;
  /// zero means no limit. A call past it fails with reason::timeout; its
  /// reply, if one comes later, is dropped.
  std::chrono::milliseconds timeout{60'000};
  /// Largest reply frame accepted (ZMQ_MAXMSGSIZE): ZeroMQ drops the
  /// connection on a larger one (and reconnects), so the call times out.
  std::size_t max_response_bytes = std::size_t{64} * 1024 * 1024;
};

/// A JSON-RPC 2.0 client for one ZeroMQ endpoint.
///
/// Errors: a server's error object is thrown as rapidrpc::fault with its
/// code and message; no reply within the timeout, a reply that is not a
/// JSON-RPC response (reason::bad_response) or a closed client
/// (reason::io) is a transport_error.
class zmq_client : public client_base {
 public:
  /// A client for synchronous calls. Throws std::invalid_argument for a bad
  /// URL, std::runtime_error if ZeroMQ refuses the socket or the endpoint.
  /// The connection is made in the background.
  explicit zmq_client(std::string_view url, zmq_client_options options = {});
  /// A client for asynchronous calls on `executor` (and synchronous ones
  /// are not allowed).
  zmq_client(boost::asio::any_io_executor executor, std::string_view url,
             zmq_client_options options = {});

  // call(), call<R>(), try_call(), async_call() and trace() come from
  // client_base; a trace holds the request frame and the reply frame.
  // Any number of asynchronous calls may be in flight at once, on the one
  // socket.

  /// The endpoint this client calls.
  const zmq_endpoint& target() const noexcept;
};

}  // namespace rapidrpc

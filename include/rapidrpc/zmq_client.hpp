// The JSON-RPC 2.0 client over ZeroMQ: a DEALER socket connected to a
// server's ROUTER endpoint (rapidrpcd --zmq), many calls in flight on it.
//
// The wire: each call is ONE frame holding a JSON-RPC 2.0 request object
// (docs/jsonrpc.md maps the values), with an integer id unique within the
// client; the server answers with ONE frame, the response object, in any
// order, and replies are matched to their calls by id. A reply that matches
// no call in flight (a call that timed out, say) is dropped.
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
// calls wait on the calling thread (zmq_poll); a client built on an
// executor must be used from that executor's thread, and its completions
// run there. It watches the socket's ZMQ_FD with the executor's reactor: the
// descriptor belongs to ZeroMQ and is never closed by the client.
#pragma once

#include <rapidrpc/client.hpp>  // transport_error, wire_trace
#include <rapidrpc/fault.hpp>
#include <rapidrpc/registry.hpp>
#include <rapidrpc/value.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
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
class zmq_client {
 public:
  /// A client for synchronous calls. Throws std::invalid_argument for a bad
  /// URL, std::runtime_error if ZeroMQ refuses the socket or the endpoint.
  /// The connection is made in the background.
  explicit zmq_client(std::string_view url, zmq_client_options options = {});
  /// A client for asynchronous calls on `executor` (and synchronous ones
  /// are not allowed).
  zmq_client(boost::asio::any_io_executor executor, std::string_view url,
             zmq_client_options options = {});
  ~zmq_client();
  zmq_client(zmq_client&&) noexcept;
  zmq_client& operator=(zmq_client&&) noexcept;

  /// Calls `method` and returns its result. Throws rapidrpc::fault if the
  /// server answered with an error object, transport_error if no usable
  /// answer came within the timeout, std::invalid_argument (nothing sent)
  /// if a parameter cannot be written as JSON.
  value call(std::string_view method, const array& params = {});

  /// Typed form: `c.call<std::string>("echo", "hi")`. The result must be of
  /// type R's kind (a mismatch throws transport_error, reason::bad_response).
  template <class R, class... Args>
  R call(std::string_view method, Args&&... args) {
    value v = call(method, array{value(std::forward<Args>(args))...});
    if constexpr (std::is_same_v<R, value>) {
      return v;
    } else {
      if (!v.is<R>()) throw_result_type(kind_name(v.type()));
      return std::move(v).as<R>();
    }
  }

  /// Like call(), with the fault or the transport failure as a value: a
  /// transport failure becomes fault_code::transport_error with its message.
  outcome try_call(std::string_view method, const array& params = {});

  /// Starts a call; `done` runs exactly once on the client's executor, never
  /// inside async_call(), with the result, the fault, or
  /// fault_code::transport_error (a timeout among them). Any number of calls
  /// may be in flight at once, on the one socket. Throws, and never calls
  /// `done`, if the request cannot be written (std::invalid_argument).
  /// Destroying the client completes the calls still in flight with
  /// "the client was closed".
  void async_call(std::string method, array params, std::function<void(outcome)> done);

  /// Records the next synchronous call's frames into `trace` (request and
  /// response_body; response_header stays empty). Null: stop.
  void trace(wire_trace* trace) noexcept;

  /// The endpoint this client calls.
  const zmq_endpoint& target() const noexcept;

 private:
  [[noreturn]] static void throw_result_type(std::string_view got);
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rapidrpc

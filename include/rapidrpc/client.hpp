// The XML-RPC and JSON-RPC client: synchronous and asynchronous calls over
// HTTP/1.1 with a keep-alive connection pool, timeouts, gzip and Basic auth;
// HTTPS with the server's certificate verified.
//
// Threading: a client is used from one thread at a time. The synchronous
// calls run the client's own io_context on the calling thread; a client
// built on an executor must be used from that executor's thread, and its
// completions run there.
#pragma once

#include <rapidrpc/fault.hpp>
#include <rapidrpc/registry.hpp>
#include <rapidrpc/value.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rapidrpc {

/// A call that failed below the protocol: no connection, a timeout, an HTTP
/// error status, a response that is not XML-RPC. (A fault is not one of
/// these: the server answered, with a fault.)
class transport_error : public std::runtime_error {
 public:
  enum class reason : std::uint8_t {
    connect,      ///< could not resolve or connect
    timeout,      ///< the connect or total timeout passed
    io,           ///< the connection failed mid-call
    http_status,  ///< the server answered with a non-200 status
    bad_response  ///< the response is not valid HTTP or XML-RPC, or too large
  };
  transport_error(reason r, std::string message, int http_status = 0)
      : std::runtime_error(std::move(message)), reason_(r), http_status_(http_status) {}
  reason why() const noexcept { return reason_; }
  /// The HTTP status for reason::http_status, else 0.
  int http_status() const noexcept { return http_status_; }

 private:
  reason reason_;
  int http_status_;
};

/// An http:// or https:// URL: `http[s]://[user:password@]host[:port][/path]`.
/// The path defaults to /RPC2, the port to 80 (http) or 443 (https).
struct url {
  std::string scheme = "http";  ///< "http" or "https"
  std::string host;
  std::string port = "80";
  std::string path = "/RPC2";
  std::string user;      ///< Basic auth user, percent-decoded
  std::string password;  ///< Basic auth password, percent-decoded

  /// Parses `text`; throws std::invalid_argument with the reason if it is
  /// not a supported URL.
  static url parse(std::string_view text);
};

/// The protocol a client speaks.
enum class protocol : std::uint8_t {
  xmlrpc,   ///< XML-RPC (text/xml)
  jsonrpc,  ///< JSON-RPC 2.0 (application/json; docs/jsonrpc.md)
};

/// How a client behaves. Every field has a working default.
struct client_options {
  /// Time to resolve and connect.
  std::chrono::milliseconds connect_timeout{10'000};
  /// Time for a whole call, connecting included; zero means no limit.
  std::chrono::milliseconds timeout{60'000};
  /// Reuse connections (HTTP keep-alive); false: one connection per call.
  bool keep_alive = true;
  /// Most idle connections kept for reuse.
  std::size_t max_idle_connections = 8;
  /// Send Accept-Encoding: gzip and inflate gzip responses.
  bool accept_gzip = true;
  /// gzip request bodies at least this large; zero: never.
  std::size_t gzip_request_min_bytes = 0;
  /// Largest response body accepted (after decompression).
  std::size_t max_response_bytes = 64 * 1024 * 1024;
  /// Extra request headers, e.g. {"X-Trace", "1"}.
  std::vector<std::pair<std::string, std::string>> headers;
  /// The protocol spoken; multicall() uses system.multicall in both.
  rapidrpc::protocol protocol = protocol::xmlrpc;
  /// https: a PEM file of the CA certificates the server's certificate must
  /// chain to, in place of the system's store (empty: the system's store).
  std::string tls_ca_file;
  /// https: verify the server's certificate chain, and that the certificate
  /// names the URL's host (a DNS name or IP address in subjectAltName). On
  /// by default; a failure is a transport_error with reason::connect.
  /// false is INSECURE: any certificate is accepted, so the traffic is
  /// encrypted but anyone able to intercept the connection can read and
  /// change it. Only for tests and throwaway setups.
  bool tls_verify = true;
};

/// The bytes of one exchange, for tools that show the wire.
struct wire_trace {
  std::string request;          ///< request line, headers and body as sent
  std::string response_header;  ///< status line and headers as received
  std::string response_body;    ///< the body, after decompression
};

/// An XML-RPC (or JSON-RPC) client for one server URL.
class client {
 public:
  /// A client for synchronous calls, with an io_context of its own. Throws
  /// std::invalid_argument for a bad URL, an extra header that cannot be
  /// sent, or (https) CA certificates that cannot be loaded. No connection
  /// is made before the first call.
  explicit client(std::string_view url, client_options options = {});
  /// A client for asynchronous calls on `executor` (and synchronous ones
  /// are not allowed).
  client(boost::asio::any_io_executor executor, std::string_view url, client_options options = {});
  ~client();
  client(client&&) noexcept;
  client& operator=(client&&) noexcept;

  /// Calls `method` and returns its result. Throws rapidrpc::fault if the
  /// server answered with a fault, transport_error if no answer came.
  value call(std::string_view method, const array& params = {});

  /// Typed form: `client.call<std::string>("load", 150000)`. Arguments are
  /// converted to values; the result must be of type R's kind (a mismatch
  /// throws transport_error with reason::bad_response).
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

  /// Runs several calls in one request (system.multicall); one outcome per
  /// call, in order.
  std::vector<outcome> multicall(const std::vector<std::pair<std::string, array>>& calls);

  /// Starts a call; `done` runs exactly once on the client's executor with
  /// the result, the fault, or fault_code::transport_error. Calls in flight
  /// at once each use a connection of their own.
  void async_call(std::string method, array params, std::function<void(outcome)> done);

  /// Records the next synchronous call's exchange into `trace` (null: stop).
  void trace(wire_trace* trace) noexcept;

  /// The URL this client calls.
  const rapidrpc::url& target() const noexcept;

 private:
  [[noreturn]] static void throw_result_type(std::string_view got);
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rapidrpc

// The XML-RPC and JSON-RPC client: synchronous and asynchronous calls over
// HTTP/1.1 with a keep-alive connection pool, timeouts, gzip and Basic auth;
// HTTPS with the server's certificate verified.
//
// Threading: a client is used from one thread at a time. The synchronous
// calls run the client's own io_context on the calling thread; a client
// built on an executor must be used from that executor's thread, and its
// completions run there.
#pragma once

#include <rapidrpc/client_base.hpp>
#include <rapidrpc/fault.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rapidrpc {

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

/// An XML-RPC (or JSON-RPC) client for one server URL.
class client : public client_base {
 public:
  /// A client for synchronous calls, with an io_context of its own. Throws
  /// std::invalid_argument for a bad URL, an extra header that cannot be
  /// sent, or (https) CA certificates that cannot be loaded. No connection
  /// is made before the first call.
  explicit client(std::string_view url, client_options options = {});
  /// A client for asynchronous calls on `executor` (and synchronous ones
  /// are not allowed).
  client(boost::asio::any_io_executor executor, std::string_view url, client_options options = {});

  // call(), call<R>(), try_call(), async_call() and trace() come from
  // client_base. Calls in flight at once (async_call) each use a
  // connection of their own.

  /// Runs several calls in one request (system.multicall); one outcome per
  /// call, in order.
  std::vector<outcome> multicall(const std::vector<std::pair<std::string, array>>& calls);

  /// The URL this client calls.
  const rapidrpc::url& target() const noexcept;
};

}  // namespace rapidrpc

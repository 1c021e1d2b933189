// Private: the client's side of the wire without the I/O. The request head,
// what a complete response means, and the system.multicall envelope. Bytes
// and values in, bytes and results out, so each piece is tested on its own.
#pragma once

#include <rapidrpc/client.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace rapidrpc::client_detail {

// call_result, to_outcome() and result_or_throw(): <rapidrpc/client_base.hpp>.

/// The request head of one client. The fixed part (request line, Host,
/// User-Agent, Content-Type, Accept-Encoding, Authorization, the caller's
/// extra headers) is built once; each call adds only its body's framing.
class request_head {
 public:
  /// Throws std::invalid_argument for an extra header that cannot be sent
  /// (an empty or malformed name, CR/LF/NUL in a value) or that would break
  /// the framing (Host, Content-Length, Transfer-Encoding, Content-Encoding,
  /// Connection, Expect). An extra User-Agent, Content-Type,
  /// Accept-Encoding or Authorization replaces the client's own.
  request_head(const url& target, const client_options& options);

  /// Appends the head of a request whose body is `content_length` bytes,
  /// gzip-compressed if `gzip_body`.
  void write(std::string& out, std::size_t content_length, bool gzip_body) const;

 private:
  std::string fixed_;
};

/// The Host header's value for `target`: the host (bracketed if IPv6) and
/// the port unless it is the scheme's default (80, or 443 for https).
std::string host_header(const url& target);

/// What a complete HTTP response means. `body` is the body as received; it
/// may be replaced by its inflated form. A status other than 200 is
/// reason::http_status; an unsupported Content-Encoding, a corrupt or too
/// large gzip body, or a body that is not a methodResponse is
/// reason::bad_response. `parser` is a response parser, reused.
call_result interpret_response(int status, std::string_view reason,
                               std::string_view content_encoding, std::string& body,
                               std::size_t max_body_bytes, xmlrpc::parser& parser,
                               std::string& scratch);

/// The same for a JSON-RPC response to the request with id `id`: a body
/// that is not a JSON-RPC response, or answers another call under the id
/// rule (client/json_reply.hpp), is reason::bad_response.
call_result interpret_json_response(int status, std::string_view reason,
                                    std::string_view content_encoding, std::string& body,
                                    std::size_t max_body_bytes, std::uint64_t id,
                                    std::string& scratch);

/// The single parameter of system.multicall for `calls`.
array multicall_params(const std::vector<std::pair<std::string, array>>& calls);

/// Splits system.multicall's result into one outcome per call. A result that
/// is not an array of `count` entries throws transport_error
/// (reason::bad_response): no slot can be trusted then. Each entry is
/// `[value]` (the result) or `{faultCode, faultString}` (that fault); an
/// entry of any other shape becomes fault_code::transport_error for that
/// call only, and the others keep their results.
std::vector<outcome> split_multicall(value&& result, std::size_t count);

}  // namespace rapidrpc::client_detail

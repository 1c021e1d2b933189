// Limits and timeouts, with their documented defaults (docs/limits.md):
// one struct, read by the server and by the codecs (xmlrpc.hpp and
// jsonrpc.hpp read the document limits: max_depth, max_elements, max_batch,
// max_name_bytes). Going past any of them gives the client a well-formed
// error and the server keeps serving.
#pragma once

#include <chrono>
#include <cstddef>

namespace rapidrpc {

struct limits {
  /// Largest request body, counted after gzip decompression too (413).
  std::size_t max_body_bytes = 16 * 1024 * 1024;
  /// Largest request line, without its CRLF (414).
  std::size_t max_request_line_bytes = 8 * 1024;
  /// Largest request line plus header block (431).
  std::size_t max_header_bytes = 16 * 1024;
  /// Most header fields in one request, trailer fields included (431).
  std::size_t max_header_fields = 100;
  /// Deepest nesting of arrays and structs in a request (fault -32600).
  std::size_t max_depth = 64;
  /// Most XML elements in one request document (fault -32600).
  std::size_t max_elements = 1'000'000;
  /// Most calls in one system.multicall (fault -32602).
  std::size_t max_multicall = 1000;
  /// Most requests in one JSON-RPC batch (error -32600).
  std::size_t max_batch = 1000;
  /// Longest method name in a request (fault -32600 for XML-RPC, error
  /// -32600 for JSON-RPC).
  std::size_t max_name_bytes = 256;
  /// Most connections open at once; past it a new one is answered 503 (with
  /// Retry-After) and closed at once.
  std::size_t max_connections = 10'000;
  /// Time to receive a whole request once its first byte came (408, close).
  std::chrono::seconds request_timeout{10};
  /// Time a keep-alive connection may sit idle between requests (close).
  std::chrono::seconds idle_timeout{15};
  /// Time a client may take to accept a response before it is dropped.
  std::chrono::seconds write_timeout{10};
};

}  // namespace rapidrpc

// HTTP/1.1 response heads, written by hand into the connection's output
// buffer (one append per response; no field map, no allocation when the
// buffer has room).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rapidrpc::http {

/// The current time as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"),
/// formatted at most once a second per thread.
std::string_view http_date();

struct response_head {
  int status = 200;
  std::string_view content_type = "text/xml";
  std::size_t content_length = 0;
  bool keep_alive = true;
  /// HTTP/1.0 clients need "Connection: keep-alive" spelled out.
  bool http10 = false;
  bool gzip = false;
  /// Extra header lines, each ending in "\r\n" (e.g. "Allow: POST\r\n").
  std::string_view extra;
};

/// The reason phrase of a status code the server sends.
std::string_view reason(int status);

/// Appends the status line and headers, up to and including the blank line.
void write_head(std::string& out, std::string_view server, const response_head& head);

/// Appends a whole error response with a short text/plain body; with
/// `head_only` (the answer to a HEAD request) the head alone, its
/// Content-Length still the body's.
void write_error(std::string& out, std::string_view server, int status, bool keep_alive,
                 bool http10, std::string_view extra = {}, bool head_only = false);

}  // namespace rapidrpc::http

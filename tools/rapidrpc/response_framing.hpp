// Minimal HTTP/1.x response framing for the load generator: finds where one
// response ends in a byte buffer and what its status, keep-alive and body
// are. Status line and headers, then a Content-Length or chunked body (or,
// with neither, a body that ends with the connection). No I/O; "need more
// bytes" is a result.
//
// Deliberately small: the load generator only needs the framing, and a full
// HTTP parser per response would cost more than the server under test.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rapidrpc::cli {

/// Limits of the framing.
inline constexpr std::size_t max_response_header_bytes = 64 * 1024;

/// What frame_response() found.
enum class frame_status : unsigned char {
  need_more,  ///< the response is not complete yet
  complete,   ///< one response: see response_frame
  bad         ///< not a valid HTTP/1.x response; `error` says why
};

/// One complete response, viewed in the caller's buffer (or in `scratch`
/// for a chunked body).
struct response_frame {
  int status = 0;
  bool keep_alive = true;       ///< false: the server will close the connection
  bool gzip = false;            ///< Content-Encoding: gzip
  std::string_view body;        ///< the body, de-chunked
  std::size_t consumed = 0;     ///< bytes of the buffer this response used
  const char* error = nullptr;  ///< why, for frame_status::bad
};

/// Looks for one response at the start of `data`. `eof` says the
/// connection has ended (a body without length is then complete). A
/// chunked body is copied, de-chunked, into `scratch`.
frame_status frame_response(std::string_view data, bool eof, response_frame& out,
                            std::string& scratch);

}  // namespace rapidrpc::cli

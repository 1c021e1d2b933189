// Frames HTTP/1.1 requests out of a byte stream, with the server's limits.
// No I/O: the connection offers the bytes it has, the reader says how many
// it consumed and whether a request is complete, more is needed, or the
// stream is broken (with the status to answer). The connection and the fuzz
// target drive this same code.
#pragma once

#include "http/request_parser.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rapidrpc::http {

class request_reader {
 public:
  enum class result : std::uint8_t {
    need_more,  ///< everything offered was used or kept; offer more
    complete,   ///< a request is ready in request(); call next() after it
    error,      ///< the stream is broken: answer error_status() and close
  };

  /// `max_header_bytes` counts the request line and the header block
  /// (431), `max_request_line_bytes` the request line without its CRLF
  /// (414), `max_header_fields` the header and trailer fields (431).
  /// `hook`, if set, sees each request's header before its body is read
  /// and may refuse it (parse() then returns error, with its status).
  request_reader(std::size_t max_header_bytes, std::size_t max_body_bytes,
                 std::size_t max_request_line_bytes = 8 * 1024, std::size_t max_header_fields = 100,
                 header_hook* hook = nullptr);

  /// Consumes a prefix of `in` (the bytes received and not yet consumed) and
  /// sets `used` to its length. Bytes not consumed must be offered again,
  /// with whatever arrives after them.
  result parse(std::string_view in, std::size_t& used);

  /// The request, once parse() returned complete.
  request& current() noexcept { return req_; }
  /// Whether the connection may stay open after this request.
  bool keep_alive() const noexcept { return keep_alive_; }
  /// After an error: 400, 411, 413, 414, 431 or 505, or the status a
  /// header hook refused the request with.
  int error_status() const noexcept { return error_status_; }

  /// Prepares for the next request on the stream.
  void next();

  /// Frees the memory kept from past requests (target, body, ...), between
  /// requests (not while in_request()): for a connection gone idle.
  void release() noexcept;

  /// True while a request has started and is not complete.
  bool in_request() const noexcept { return parser_.has_value(); }

  /// True once per request, when its header asked for "100 Continue" and
  /// the body has not all arrived: the server should send it now.
  bool take_continue();

  /// The body bytes still to come, when the header announced a length.
  std::optional<std::uint64_t> body_remaining() const;

  /// Whether a request that has arrived whole, in the plainest form (see
  /// read_direct()), is read without Beast (the default). Off, Beast reads
  /// every request: the fuzz target compares the two.
  void set_direct(bool on) noexcept { direct_ = on; }
  /// Whether each request's head is kept as received (request::head), for
  /// a server that passes requests on as they came (the relay). Off by
  /// default.
  void keep_head(bool on) noexcept { keep_head_ = on; }

  /// Whether the request last completed was read without Beast.
  bool read_directly() const noexcept { return read_directly_; }

 private:
  enum class direct : std::uint8_t { declined, complete, refused };
  direct read_direct(std::string_view in, std::size_t& used);
  bool header_complete(std::string_view in);
  int check_request_line(std::string_view in);
  int check_chunk_wait(std::string_view rest) const;
  void start();

  std::size_t max_header_bytes_;
  std::size_t max_body_bytes_;
  std::size_t max_request_line_bytes_;
  std::size_t max_header_fields_;
  header_hook* hook_;
  request req_;
  std::optional<request_parser> parser_;
  std::size_t header_scanned_ = 0;   // bytes of the input searched for the header's end
  std::size_t line_scanned_ = 0;     // bytes of the input searched for the request line's end
  bool line_done_ = false;           // the request line ended within its limit
  bool version_form_ok_ = false;     // ...in three parts, the last HTTP/DIGIT.DIGIT
  std::size_t header_consumed_ = 0;  // header bytes Beast took in earlier put() calls
  bool continue_sent_ = false;
  bool direct_ = true;
  bool read_directly_ = false;
  bool keep_head_ = false;
  bool keep_alive_ = true;
  int error_status_ = 0;
};

}  // namespace rapidrpc::http

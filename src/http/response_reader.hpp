// Frames HTTP/1.x responses out of a byte stream: what the relay reads back
// from the program it relays to (docs/design.md, "The relay"). No I/O: the
// caller offers the bytes it has, the reader says how many it consumed and
// whether a response is complete, more is needed, or the stream is broken.
#pragma once

#include <boost/beast/http/basic_parser.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rapidrpc::http {

/// One response as its sender wrote it.
struct response {
  int status = 0;
  unsigned version = 11;  ///< 10 or 11
  std::string reason;
  /// Every header field in order, the name spelled as sent, the value
  /// without the whitespace around it; trailers of a chunked body are not
  /// fields.
  std::vector<std::pair<std::string, std::string>> fields;
  /// The body, de-chunked.
  std::string body;
  /// Whether a Content-Length field framed the body.
  bool content_length = false;
  /// Whether the sender keeps the connection open after it (not HTTP/1.0
  /// without keep-alive, no "Connection: close", not framed by the end of
  /// the stream).
  bool keep_alive = true;
  /// Whether the response may have a body at all (not one to HEAD, not
  /// 204 or 304).
  bool bodyless = false;
};

/// Beast's basic_parser, filling a `response` (response_reader drives it).
class response_parser final : public boost::beast::http::basic_parser<false> {
 public:
  explicit response_parser(response& out) : out_(out) {}

 private:
  using error_code = boost::beast::error_code;
  using string_view = boost::beast::string_view;
  using verb = boost::beast::http::verb;
  using field = boost::beast::http::field;

  void on_request_impl(verb, string_view, string_view, int, error_code&) override {}
  void on_response_impl(int code, string_view reason, int version, error_code&) override;
  void on_field_impl(field name, string_view name_string, string_view value, error_code&) override;
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code&) override {}
  std::size_t on_body_impl(string_view body, error_code&) override;
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code&) override;
  void on_finish_impl(error_code&) override {}

  response& out_;
};

/// Reads one response at a time; interim 1xx responses (100 Continue) are
/// skipped, the final response is the one returned.
///
/// A head is read whole before it is parsed, and made plain first: a line
/// ended by a bare LF is read as if ended by CRLF (RFC 9112 2.2 lets a
/// recipient do so) and a folded line (obs-fold) is joined to the line
/// before it with a space, as 5.2 requires of a gateway that forwards it.
/// Python's http.server writes both in an error response's X-traceback.
class response_reader {
 public:
  enum class result : std::uint8_t {
    need_more,  ///< everything offered was used or kept; offer more
    complete,   ///< a response is ready in current()
    error,      ///< the stream is broken
  };

  /// `max_head_bytes` bounds a response's status line and header.
  explicit response_reader(std::size_t max_head_bytes = 64 * 1024);

  /// Starts reading the response to a request; `to_head` if that was a
  /// HEAD request (its response has no body, whatever it announces).
  void start(bool to_head);

  /// Consumes a prefix of `in` (the bytes received and not yet consumed)
  /// and sets `used` to its length. Bytes not consumed must be offered
  /// again, with whatever arrives after them.
  result parse(std::string_view in, std::size_t& used);

  /// The stream has ended: completes a body framed by its end, else error
  /// (the response was cut short, or none had started: see started()).
  result finish();

  /// Whether any byte of the response (or an interim one) has been read.
  bool started() const noexcept { return started_; }

  /// The response, once parse() or finish() returned complete.
  response& current() noexcept { return res_; }

 private:
  void restart();
  /// Moves the head's bytes from `in` into head_ until its empty line;
  /// false while it has not come whole.
  bool gather_head(std::string_view in, std::size_t& used);

  std::size_t max_head_bytes_;
  bool to_head_ = false;
  bool started_ = false;
  response res_;
  std::optional<response_parser> parser_;
  std::string head_;       // the head being gathered, then made plain
  bool head_fed_ = false;  // whether head_ went to parser_
};

}  // namespace rapidrpc::http

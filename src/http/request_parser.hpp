// An HTTP/1.1 request parser that keeps only what an RPC endpoint needs.
//
// It wraps Beast's basic_parser (strict framing: Content-Length, chunked,
// header and body limits) and records the request line, the few headers the
// server acts on, and the body, without building a field map. It does no I/O:
// the connection feeds it bytes with put() and "need more" is a result.
#pragma once

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace rapidrpc::http {

/// What a request's Content-Type says its body is.
enum class media : std::uint8_t {
  none,   ///< no Content-Type
  xml,    ///< text/xml or application/xml
  json,   ///< application/json
  other,  ///< anything else
};

/// The longest chunk line taken, its CRLF aside: the size in hex (leading
/// zeros and all) and any chunk extensions, which the server ignores.
/// Clients send none, or a few bytes; this bounds what a client can make the
/// server hold and scan.
inline constexpr std::size_t max_chunk_line = 1024;

/// What the server acts on in one request.
struct request {
  boost::beast::http::verb method = boost::beast::http::verb::unknown;
  std::string target;
  unsigned version = 11;              ///< 10 or 11
  bool accepts_gzip = false;          ///< Accept-Encoding lists gzip (q > 0)
  bool accepts_html = false;          ///< Accept lists text/html (q > 0): a browser
  bool gzip_body = false;             ///< Content-Encoding: gzip
  bool unsupported_encoding = false;  ///< Content-Encoding other than gzip/identity
  bool expect_continue = false;       ///< Expect: 100-continue (HTTP/1.1 only)
  bool bad_expect = false;            ///< an Expect value other than 100-continue
  media content_type = media::none;
  std::string authorization;            ///< the Authorization value (empty if absent)
  bool repeated_authorization = false;  ///< more than one Authorization header
  int refused = 0;                      ///< the status a header_hook refused it with
  bool chunked = false;                 ///< the body came chunked
  /// The request line and header as received, up to and including the
  /// blank line: only when the reader keeps it (request_reader::keep_head).
  std::string head;
  std::string body;

  void clear() {
    method = boost::beast::http::verb::unknown;
    target.clear();
    version = 11;
    accepts_gzip = accepts_html = gzip_body = unsupported_encoding = expect_continue = bad_expect =
        false;
    content_type = media::none;
    authorization.clear();
    repeated_authorization = false;
    refused = 0;
    chunked = false;
    head.clear();
    body.clear();
  }
};

/// Decides on a request from its header alone, before any of its body is
/// read (access checks): so a refused client cannot make the server read
/// and buffer a large body.
class header_hook {
 public:
  /// 0 to go on with the request, or the HTTP status to refuse it with.
  virtual int on_header(const request& r) = 0;

 protected:
  ~header_hook() = default;
};

/// Beast's basic_parser, filling a `request`.
///
/// Stricter than Beast where a lenient reading could let a request be
/// framed differently by a proxy in front (request smuggling): a second
/// Content-Length (even an equal one, or a list) and a Transfer-Encoding
/// other than exactly `chunked` are errors, and so is any Transfer-Encoding
/// in an HTTP/1.0 request (RFC 9112, 6.1). An HTTP/1.1 request without a
/// Host field, and any request with two or with an invalid one, are errors
/// (RFC 9112, 3.2); so is a field folded over lines (obs-fold, 5.2).
/// Trailer fields are not recorded (RFC 9110, 6.5.1); one that frames or
/// routes a message (Content-Length, Transfer-Encoding, Connection,
/// Proxy-Connection, Upgrade, Host) is an error. A chunk line (size and
/// extensions) longer than max_chunk_line is error::bad_chunk_extension.
/// More than `max_fields` header (and trailer) fields is
/// error::header_limit.
class request_parser final : public boost::beast::http::basic_parser<true> {
 public:
  explicit request_parser(request& out, std::size_t max_fields = 100, header_hook* hook = nullptr)
      : out_(out), max_fields_(max_fields), hook_(hook) {}

  /// The first byte of the buffer the next put() is given (one buffer):
  /// a chunk line is measured back from its extensions to its first byte,
  /// which is never before it.
  void set_input(const char* begin) noexcept { input_ = begin; }

 private:
  using error_code = boost::beast::error_code;
  using string_view = boost::beast::string_view;
  using verb = boost::beast::http::verb;
  using field = boost::beast::http::field;

  void on_request_impl(verb method, string_view, string_view target, int version,
                       error_code&) override;
  void on_response_impl(int, string_view, int, error_code&) override {}
  void on_field_impl(field name, string_view name_string, string_view value,
                     error_code& ec) override;
  void on_header_impl(error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         error_code&) override;
  std::size_t on_body_impl(string_view body, error_code&) override;
  void on_chunk_header_impl(std::uint64_t, string_view extensions, error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code&) override;
  void on_finish_impl(error_code&) override {}

  request& out_;
  std::size_t max_fields_;
  std::size_t fields_ = 0;
  bool content_length_seen_ = false;
  bool host_seen_ = false;
  const char* input_ = nullptr;
  std::size_t announced_ = 0;  // the body's Content-Length (0 if chunked)
  header_hook* hook_;
};

/// Records in `out` what one of the header fields the server acts on says
/// beyond framing: Accept-Encoding, Accept, Content-Encoding, Content-Type,
/// Authorization and Expect (any other field is ignored). `value` has its
/// surrounding whitespace removed; `out.version` is already set.
void record_field(request& out, boost::beast::http::field name, std::string_view value);

/// True if a Host field value (its surrounding whitespace removed) is
/// `uri-host [ ":" port ]` (RFC 9110, 7.2; RFC 3986, 3.2.2): a reg-name
/// (possibly empty), an IPv4 address or a bracketed IPv6 or IPvFuture
/// literal, and a port of digits.
bool valid_host(std::string_view host);

/// The path of a request target, without its query: an origin-form target
/// ("/RPC2?x") as it is, an absolute-form one ("http://host:80/RPC2", RFC
/// 9112 3.2.2; "/" when its path is empty) from after its authority. Any
/// other target (asterisk- or authority-form) is returned as it is.
std::string_view target_path(std::string_view target);

/// The media type of a Content-Type value (its parameters ignored).
media media_of(std::string_view content_type);

/// True if an Accept-Encoding value accepts gzip (a "gzip" or "*" coding
/// whose q is not 0).
bool accepts_gzip(std::string_view accept_encoding);

/// True if an Accept value names text/html (any case, parameters aside)
/// with a q that is not 0. Wildcards do not count: "*/*" is what non-browser
/// clients send.
bool accepts_html(std::string_view accept);

}  // namespace rapidrpc::http

#include "http/request_parser.hpp"

#include "text/text.hpp"

#include <boost/beast/core/string.hpp>

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace rapidrpc::http {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) { return boost::beast::iequals(a, b); }

/// True if the q parameter of one coding (";q=0", ";q=0.000") is zero.
bool zero_q(std::string_view params) {
  while (!params.empty()) {
    auto semi = params.find(';');
    std::string_view p = trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    if (p.size() >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
      std::string_view q = trim(p.substr(2));
      if (q.empty() || q[0] != '0') return false;
      for (char c : q.substr(1))
        if (c != '.' && c != '0') return false;
      return true;
    }
  }
  return false;
}

bool hex_digit(char c) { return detail::hex_value(c) >= 0; }

// RFC 3986 (2.3, 2.2): unreserved and sub-delims characters.
bool unreserved_or_sub_delim(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::strchr("-._~!$&'()*+,;=", c) != nullptr;
}

// IP-literal = "[" ( IPv6address / IPvFuture ) "]", without its brackets.
bool valid_ip_literal(std::string_view s) {
  if (!s.empty() && (s[0] == 'v' || s[0] == 'V')) {
    // IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
    std::size_t i = 1;
    while (i < s.size() && hex_digit(s[i])) ++i;
    if (i == 1 || i >= s.size() - 1 || s[i] != '.') return false;
    return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i) + 1, s.end(),
                       [](char c) { return c == ':' || unreserved_or_sub_delim(c); });
  }
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (s.empty() || s.size() >= text.size()) return false;
  std::copy(s.begin(), s.end(), text.begin());
  in6_addr address{};
  return inet_pton(AF_INET6, text.data(), &address) == 1;
}

}  // namespace

bool valid_host(std::string_view host) {
  // Host = uri-host [ ":" port ] (RFC 9110, 7.2); port = *DIGIT.
  std::string_view name = host;
  if (!host.empty() && host[0] == '[') {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos || !valid_ip_literal(host.substr(1, close - 1)))
      return false;
    name = {};
    host.remove_prefix(close + 1);
    if (!host.empty() && host[0] != ':') return false;
  } else {
    const std::size_t colon = host.find(':');
    name = host.substr(0, colon);
    host = colon == std::string_view::npos ? std::string_view{} : host.substr(colon);
  }
  if (!host.empty()) {  // ":" port
    if (!std::all_of(host.begin() + 1, host.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
  }
  // reg-name = *( unreserved / pct-encoded / sub-delims ), which IPv4
  // addresses are too; empty is allowed (RFC 9112, 3.2).
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%') {
      if (i + 2 >= name.size() || !hex_digit(name[i + 1]) || !hex_digit(name[i + 2])) return false;
      i += 2;
    } else if (!unreserved_or_sub_delim(name[i])) {
      return false;
    }
  }
  return true;
}

std::string_view target_path(std::string_view target) {
  std::string_view path = target;
  if (!target.empty() && target[0] != '/') {
    // absolute-form (RFC 9112, 3.2.2): http(s)://authority, then the path.
    const std::size_t scheme_end = target.find("://");
    const std::string_view scheme = target.substr(0, scheme_end);
    if (scheme_end != std::string_view::npos &&
        (iequals(scheme, "http") || iequals(scheme, "https"))) {
      const std::string_view rest = target.substr(scheme_end + 3);
      const std::size_t start = rest.find_first_of("/?");
      path = start == std::string_view::npos ? std::string_view{} : rest.substr(start);
      if (path.empty() || path[0] == '?') return "/";  // an empty path is "/" (RFC 9110, 4.2.3)
    }
  }
  return path.substr(0, path.find('?'));
}

bool accepts_gzip(std::string_view list) {
  bool any = false;
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    auto semi = item.find(';');
    std::string_view coding = trim(item.substr(0, semi));
    std::string_view params =
        semi == std::string_view::npos ? std::string_view{} : item.substr(semi + 1);
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) return !zero_q(params);
    if (coding == "*") any = !zero_q(params);
  }
  return any;
}

bool accepts_html(std::string_view list) {
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    auto semi = item.find(';');
    std::string_view range = trim(item.substr(0, semi));
    std::string_view params =
        semi == std::string_view::npos ? std::string_view{} : item.substr(semi + 1);
    if (iequals(range, "text/html")) return !zero_q(params);
  }
  return false;
}

media media_of(std::string_view content_type) {
  std::string_view type = trim(content_type.substr(0, content_type.find(';')));
  if (iequals(type, "text/xml") || iequals(type, "application/xml")) return media::xml;
  if (iequals(type, "application/json")) return media::json;
  return media::other;
}

void record_field(request& out, boost::beast::http::field name, std::string_view v) {
  using boost::beast::http::field;
  switch (name) {
    case field::accept_encoding:
      out.accepts_gzip = out.accepts_gzip || accepts_gzip(v);
      break;
    case field::accept:
      out.accepts_html = out.accepts_html || accepts_html(v);
      break;
    case field::content_encoding: {
      std::string_view coding = trim(v);
      if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
        if (out.gzip_body) out.unsupported_encoding = true;  // gzip twice: not supported
        out.gzip_body = true;
      } else if (!iequals(coding, "identity") && !coding.empty()) {
        out.unsupported_encoding = true;
      }
      break;
    }
    case field::content_type:
      out.content_type = media_of(v);
      break;
    case field::authorization:
      if (!out.authorization.empty()) out.repeated_authorization = true;
      out.authorization.assign(v.data(), v.size());
      break;
    case field::expect:
      // An HTTP/1.0 client cannot be sent a 1xx response: its 100-continue
      // is ignored (RFC 9110, 10.1.1 and 15.2).
      if (iequals(trim(v), "100-continue"))
        out.expect_continue = out.version != 10;
      else
        out.bad_expect = true;
      break;
    default:
      break;
  }
}

void request_parser::on_request_impl(verb method, string_view, string_view target, int version,
                                     error_code&) {
  out_.method = method;
  out_.target.assign(target.data(), target.size());
  out_.version = static_cast<unsigned>(version);
}

void request_parser::on_field_impl(field name, string_view name_string, string_view value,
                                   error_code& ec) {
  if (++fields_ > max_fields_) {
    ec = boost::beast::http::error::header_limit;
    return;
  }
  // Beast joins the lines of an obsolete line folding into a value of its
  // own; an unfolded value is where the line has it, after the colon and
  // any whitespace (Beast has the whole line in the buffer it parses). A
  // folded line is refused (RFC 9112, 5.2): so a request passed on as it
  // came (the relay) carries none.
  const char* after_colon = name_string.data() + name_string.size() + 1;
  while (*after_colon == ' ' || *after_colon == '\t') ++after_colon;
  if (value.data() != after_colon) {
    ec = boost::beast::http::error::bad_value;
    return;
  }
  std::string_view v(value.data(), value.size());
  if (is_header_done()) {
    // A trailer field, after a chunked body. It is never merged into the
    // header (RFC 9110, 6.5.1): an encoding, a type or credentials arriving
    // after the body change nothing. Those that frame or route a message
    // cannot be trailers, and Beast would act on some of them: refused.
    switch (name) {
      case field::content_length:
      case field::transfer_encoding:
      case field::connection:
      case field::proxy_connection:
      case field::upgrade:
      case field::host:
        ec = boost::beast::http::error::bad_field;
        break;
      default:
        break;
    }
    return;
  }
  switch (name) {
    case field::content_length:
      // Beast accepts a repeated or listed Content-Length of equal values;
      // a proxy might not, so neither does the server.
      if (content_length_seen_ || v.find(',') != std::string_view::npos)
        ec = boost::beast::http::error::multiple_content_length;
      content_length_seen_ = true;
      break;
    case field::host:
      // Two Host fields leave which host is meant to whoever reads them;
      // an invalid one is refused as well (RFC 9112, 3.2).
      if (host_seen_ || !valid_host(v)) ec = boost::beast::http::error::bad_field;
      host_seen_ = true;
      break;
    case field::transfer_encoding:
      // Beast takes "gzip" or "chunked, identity" as no transfer coding and
      // may then frame by Content-Length; only plain chunked is understood.
      if (!iequals(trim(v), "chunked")) ec = boost::beast::http::error::bad_transfer_encoding;
      break;
    default:
      record_field(out_, name, v);
      break;
  }
}

void request_parser::on_header_impl(error_code& ec) {
  if (out_.version == 11 && !host_seen_) {
    ec = boost::beast::http::error::bad_field;
    return;
  }
  if (out_.version == 10 && chunked()) {
    // HTTP/1.0 has no transfer codings: the framing is faulty (RFC 9112,
    // 6.1), whatever Content-Length says.
    ec = boost::beast::http::error::bad_transfer_encoding;
    return;
  }
  if (hook_ == nullptr) return;
  if (int status = hook_->on_header(out_)) {
    // Stops the parse here: the body is never read.
    out_.refused = status;
    ec = boost::beast::http::error::bad_field;
  }
}

void request_parser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                                       error_code&) {
  // The body limit has already been checked against Content-Length.
  // Reserve up front only a modest amount: a client that announces a large
  // body must also send it before it costs the server that much memory.
  constexpr std::uint64_t max_reserve = 256 * 1024;
  if (content_length) {
    announced_ = static_cast<std::size_t>(*content_length);
    out_.body.reserve(static_cast<std::size_t>(std::min(*content_length, max_reserve)));
  }
}

std::size_t request_parser::on_body_impl(string_view body, error_code&) {
  // Past that first reservation the body grows eight-fold, up to the
  // length announced: one or two copies rather than a doubling's several,
  // and fewer smaller freed buffers left resident in the heap (which keeps
  // them for the next large request; src/memory/heap.hpp). Not straight to
  // the announced length: a client that stops sending would then hold that
  // much address space (commit charge, not resident pages) for what it
  // sent, 64 times more at the 16 MiB default; eight-fold bounds that to
  // eight times.
  if (const std::size_t needed = out_.body.size() + body.size(); needed > out_.body.capacity())
    out_.body.reserve(std::min(announced_, std::max(needed, 8 * out_.body.capacity())));
  out_.body.append(body.data(), body.size());
  return body.size();
}

void request_parser::on_chunk_header_impl(std::uint64_t, string_view extensions, error_code& ec) {
  // Beast has found the whole line in the buffer put() was given, and the
  // extensions follow its hex digits there: count those back to the line's
  // start (after a LF, or the buffer's first byte). The request_reader
  // measures a line still arriving the same way, so how the bytes are cut
  // does not change the outcome.
  std::size_t line = extensions.size();
  const char* p = extensions.data();
  if (input_ != nullptr) {
    while (p != input_ && std::isxdigit(static_cast<unsigned char>(p[-1])) != 0) {
      --p;
      ++line;
    }
  }
  // Beast ends the line at its first CRLF: a LF before that (Beast 1.81
  // lets one through inside a quoted extension value) is a bare LF, which
  // the request_reader refuses while it waits for the line's end.
  if (line > max_chunk_line || extensions.find('\n') != string_view::npos)
    ec = boost::beast::http::error::bad_chunk_extension;
}

std::size_t request_parser::on_chunk_body_impl(std::uint64_t, string_view body, error_code&) {
  out_.body.append(body.data(), body.size());
  return body.size();
}

}  // namespace rapidrpc::http

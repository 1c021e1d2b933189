#include "http/request_reader.hpp"

#include <boost/asio/buffer.hpp>

#include <algorithm>
#include <array>
#include <cstring>

namespace rapidrpc::http {

namespace bhttp = boost::beast::http;

request_reader::request_reader(std::size_t max_header_bytes, std::size_t max_body_bytes,
                               std::size_t max_request_line_bytes, std::size_t max_header_fields,
                               header_hook* hook)
    : max_header_bytes_(max_header_bytes),
      max_body_bytes_(max_body_bytes),
      max_request_line_bytes_(max_request_line_bytes),
      max_header_fields_(max_header_fields),
      hook_(hook) {}

void request_reader::start() {
  req_.clear();
  parser_.emplace(req_, max_header_fields_, hook_);
  parser_->header_limit(
      static_cast<std::uint32_t>(std::min<std::size_t>(max_header_bytes_, UINT32_MAX)));
  parser_->body_limit(max_body_bytes_);
  parser_->eager(true);
  header_scanned_ = 0;
  line_scanned_ = 0;
  line_done_ = false;
  version_form_ok_ = false;
  header_consumed_ = 0;
  continue_sent_ = false;
}

void request_reader::release() noexcept {
  std::string().swap(req_.target);
  std::string().swap(req_.authorization);
  std::string().swap(req_.head);
  std::string().swap(req_.body);
}

void request_reader::next() {
  parser_.reset();
  error_status_ = 0;
}

// True once `in` holds the end of the header (a blank line) within what is
// left of the header limit. Scanning resumes where the last call stopped.
bool request_reader::header_complete(std::string_view in) {
  std::size_t left = max_header_bytes_ - std::min(header_consumed_, max_header_bytes_);
  std::string_view head = in.substr(0, std::min(in.size(), left));
  std::size_t from = header_scanned_ > 3 ? header_scanned_ - 3 : 0;
  if (head.find("\r\n\r\n", from) != std::string_view::npos) return true;
  header_scanned_ = head.size();
  return false;
}

// 0 while the request line at the start of `in` (the header is held until
// it is whole, so it is there) is within its limit; 414 once it is longer;
// 400 if it ends in a bare LF, which would otherwise be held until a
// timeout. Scanning resumes where the last call stopped.
namespace {

// Whether a request line (without its CRLF) is three parts, method SP
// target SP HTTP/DIGIT.DIGIT, as RFC 9112 (3) has it: a version Beast then
// refuses is one not served (505); any other line Beast refuses for its
// version is malformed (400), such as a target with a space in it, whose
// second half Beast reads as the version.
bool version_well_formed(std::string_view line) {
  const std::size_t first = line.find(' ');
  const std::size_t last = line.rfind(' ');
  if (first == std::string_view::npos || line.find(' ', first + 1) != last) return false;
  const std::string_view v = line.substr(last + 1);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return v.size() == 8 && v.starts_with("HTTP/") && digit(v[5]) && v[6] == '.' && digit(v[7]);
}

}  // namespace

int request_reader::check_request_line(std::string_view in) {
  if (line_done_) return 0;
  const std::size_t with_crlf = max_request_line_bytes_ + 2;
  std::string_view head = in.substr(0, std::min(in.size(), with_crlf));
  if (auto lf = head.find('\n', line_scanned_); lf != std::string_view::npos) {
    line_done_ = true;
    if (lf == 0 || head[lf - 1] != '\r') return 400;
    version_form_ok_ = version_well_formed(head.substr(0, lf - 1));
    return 0;
  }
  line_scanned_ = head.size();
  return in.size() >= with_crlf ? 414 : 0;
}

// What Beast has left of a chunked body when it wants more: the start of a
// chunk line it has not found the end of (after the CRLF that ends the
// last chunk's data, if that has come), or the last chunk's line and the
// start of the trailer. Beast looks for CRLF only, so a line ending in a
// bare LF would be held until a timeout, and a line of any length would be
// held while it grows: both are answered at once, 400, the line measured
// as request_parser measures a whole one.
int request_reader::check_chunk_wait(std::string_view rest) const {
  if (rest.substr(0, 2) == "\r\n") rest.remove_prefix(2);
  const std::size_t lf = rest.find('\n');
  if (lf == std::string_view::npos) {
    const std::size_t line = rest.size() - (rest.ends_with('\r') ? 1 : 0);  // CR of the CRLF
    return line > max_chunk_line ? 400 : 0;
  }
  if (lf == 0 || rest[lf - 1] != '\r' || lf - 1 > max_chunk_line) return 400;
  return 0;
}

namespace {

// Bytes of a header field name the direct reader takes: letters, digits and
// '-' (a subset of the token characters Beast takes).
constexpr std::array<bool, 256> name_bytes = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[static_cast<std::size_t>(c)] =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  return t;
}();

// Bytes of a field value the direct reader takes: visible ASCII, space and
// tab (Beast takes bytes from 0x80 up too).
constexpr bool value_byte(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 0x20 && u < 0x7F) || u == '\t';
}

bool iequal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != b[i]) return false;  // b is lower case: letters and '-'
  return true;
}

// The fields the direct reader acts on, by name (any case).
enum class known : std::uint8_t { other, content_length, connection, host, declined, recorded };

known classify(std::string_view name, bhttp::field& f) noexcept {
  switch (name.size()) {
    case 4:
      if (iequal(name, "host")) return known::host;
      break;
    case 6:
      if (iequal(name, "accept")) return f = bhttp::field::accept, known::recorded;
      if (iequal(name, "expect")) return f = bhttp::field::expect, known::recorded;
      break;
    case 7:
      if (iequal(name, "upgrade")) return known::declined;
      break;
    case 10:
      if (iequal(name, "connection")) return known::connection;
      break;
    case 12:
      if (iequal(name, "content-type")) return f = bhttp::field::content_type, known::recorded;
      break;
    case 13:
      if (iequal(name, "authorization")) return f = bhttp::field::authorization, known::recorded;
      break;
    case 14:
      if (iequal(name, "content-length")) return known::content_length;
      break;
    case 15:
      if (iequal(name, "accept-encoding"))
        return f = bhttp::field::accept_encoding, known::recorded;
      break;
    case 16:
      if (iequal(name, "content-encoding"))
        return f = bhttp::field::content_encoding, known::recorded;
      if (iequal(name, "proxy-connection")) return known::declined;
      break;
    case 17:
      if (iequal(name, "transfer-encoding")) return known::declined;
      break;
    default:
      break;
  }
  return known::other;
}

}  // namespace

// A request that has arrived whole (header and body) in its plainest form,
// read without Beast: a request line of an upper-case method Beast knows,
// a target of visible ASCII and HTTP/1.0 or 1.1; header fields whose names
// are letters, digits and '-' and whose values are visible ASCII, space and
// tab, each line ending in CRLF; no Transfer-Encoding, Upgrade or
// Proxy-Connection, at most one Content-Length (of up to 18 digits, within
// the body limit), Connection only "close" or "keep-alive", one Host (at
// most one in HTTP/1.0); within every limit. Anything else (and a body not
// all there yet) is declined before anything is consumed, and Beast reads
// the request as before: so this reads a subset of what Beast reads, the
// same way (the fuzz target compares the two).
request_reader::direct request_reader::read_direct(std::string_view in, std::size_t& used) {
  const std::size_t end_of_head = in.substr(0, max_header_bytes_).find("\r\n\r\n");
  if (end_of_head == std::string_view::npos) return direct::declined;
  const char* p = in.data();
  const char* const head_end = p + end_of_head + 4;  // past the blank line
  // The request line. The header ends in CRLF CRLF, so each scan below
  // stops before head_end.
  const char* const method = p;
  while (*p >= 'A' && *p <= 'Z') ++p;
  if (p == method || *p != ' ') return direct::declined;
  const bhttp::verb verb = bhttp::string_to_verb({method, static_cast<std::size_t>(p - method)});
  if (verb == bhttp::verb::unknown) return direct::declined;
  const char* const target = ++p;
  while (*p > ' ' && *p < 0x7F) ++p;
  if (p == target || *p != ' ') return direct::declined;
  const char* const target_end = p++;
  if (head_end - p < 10 || std::memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') ||
      p[8] != '\r' || p[9] != '\n')
    return direct::declined;
  const unsigned version = p[7] == '1' ? 11 : 10;
  if (static_cast<std::size_t>(p + 8 - method) > max_request_line_bytes_) return direct::declined;
  p += 10;

  req_.clear();
  req_.method = verb;
  req_.target.assign(target, target_end);
  req_.version = version;
  std::size_t fields = 0;
  std::optional<std::size_t> length;
  bool close = false;
  bool keep_alive = false;
  bool host = false;
  while (!(p[0] == '\r' && p[1] == '\n')) {
    if (++fields > max_header_fields_) return direct::declined;
    const char* const name = p;
    while (name_bytes[static_cast<unsigned char>(*p)]) ++p;
    if (p == name || *p != ':') return direct::declined;
    const std::string_view field_name(name, static_cast<std::size_t>(p - name));
    ++p;
    while (*p == ' ' || *p == '\t') ++p;
    const char* const value = p;
    while (value_byte(*p)) ++p;
    if (p[0] != '\r' || p[1] != '\n') return direct::declined;  // a bare LF, a control byte
    const char* value_end = p;
    while (value_end != value && (value_end[-1] == ' ' || value_end[-1] == '\t')) --value_end;
    p += 2;
    if (*p == ' ' || *p == '\t') return direct::declined;  // a folded line
    const std::string_view v(value, static_cast<std::size_t>(value_end - value));
    bhttp::field f = bhttp::field::unknown;
    switch (classify(field_name, f)) {
      case known::other:
        break;
      case known::declined:
        return direct::declined;
      case known::content_length: {
        if (length || v.empty() || v.size() > 18) return direct::declined;
        std::size_t n = 0;
        for (char c : v) {
          if (c < '0' || c > '9') return direct::declined;
          n = n * 10 + static_cast<std::size_t>(c - '0');
        }
        if (n > max_body_bytes_) return direct::declined;
        length = n;
        break;
      }
      case known::host:
        if (host || !valid_host(v)) return direct::declined;
        host = true;
        break;
      case known::connection:
        if (iequal(v, "close"))
          close = true;
        else if (iequal(v, "keep-alive"))
          keep_alive = true;
        else
          return direct::declined;
        break;
      case known::recorded:
        record_field(req_, f, v);
        break;
    }
  }
  if (version == 11 && !host) return direct::declined;
  p += 2;
  const std::size_t head = static_cast<std::size_t>(p - in.data());
  if (length && in.size() - head < *length) return direct::declined;  // the body is not all here
  // As Beast decides: HTTP/1.1 stays open unless "close", HTTP/1.0 only
  // with "keep-alive".
  keep_alive_ = version == 11 ? !close : keep_alive;
  if (hook_ != nullptr) {
    if (int status = hook_->on_header(req_)) {
      req_.refused = status;
      error_status_ = status;
      return direct::refused;
    }
  }
  if (!length && verb == bhttp::verb::post) {
    // Neither Content-Length nor chunked: the body cannot be delimited.
    error_status_ = 411;
    return direct::refused;
  }
  const std::size_t body = length.value_or(0);
  if (keep_head_) req_.head.assign(in.data(), head);
  req_.body.assign(p, body);
  used = head + body;
  return direct::complete;
}

request_reader::result request_reader::parse(std::string_view in, std::size_t& used) {
  used = 0;
  if (in.empty()) return result::need_more;
  read_directly_ = false;
  if (!parser_ && direct_) {
    switch (read_direct(in, used)) {
      case direct::complete:
        read_directly_ = true;
        return result::complete;
      case direct::refused:
        return result::error;
      case direct::declined:
        break;
    }
  }
  if (!parser_) start();
  if (!parser_->is_header_done() && header_consumed_ == 0) {
    if (int status = check_request_line(in)) {
      error_status_ = status;
      parser_.reset();
      return result::error;
    }
  }
  if (!parser_->is_header_done() && !header_complete(in)) {
    // Beast checks its header limit within one put() only, so a header that
    // arrives in pieces is held until it is whole, and measured here.
    if (header_consumed_ + in.size() >= max_header_bytes_) {
      error_status_ = 431;
      parser_.reset();
      return result::error;
    }
    return result::need_more;
  }
  const bool in_header = !parser_->is_header_done();
  boost::system::error_code ec;
  parser_->set_input(in.data());
  used = parser_->put(boost::asio::const_buffer(in.data(), in.size()), ec);
  if (keep_head_ && in_header) {
    // The header is whole in `in` (header_complete()): up to its blank line.
    const std::size_t end = in.find("\r\n\r\n");
    req_.head.append(
        in.substr(0, parser_->is_header_done() && end != std::string_view::npos ? end + 4 : used));
  }
  if (in_header && !parser_->is_header_done()) {
    // Beast took part of the header and wants more: what it took counts
    // against the limit, and the next scan starts on fresh input.
    header_consumed_ += used;
    header_scanned_ = 0;
  }
  if (ec && ec != bhttp::error::need_more) {
    error_status_ = req_.refused != 0                  ? req_.refused
                    : ec == bhttp::error::header_limit ? 431
                    : ec == bhttp::error::body_limit   ? 413
                    : ec == bhttp::error::bad_version  ? (version_form_ok_ ? 505 : 400)
                                                       : 400;
    parser_.reset();
    return result::error;
  }
  if (!parser_->is_done()) {
    if (parser_->is_header_done() && parser_->chunked()) {
      if (int status = check_chunk_wait(in.substr(used))) {
        error_status_ = status;
        parser_.reset();
        return result::error;
      }
    }
    return result::need_more;
  }
  if (req_.method == bhttp::verb::post && !parser_->chunked() && !parser_->content_length()) {
    // Neither Content-Length nor chunked: the body cannot be delimited.
    error_status_ = 411;
    parser_.reset();
    return result::error;
  }
  keep_alive_ = parser_->keep_alive();
  req_.chunked = parser_->chunked();
  parser_.reset();
  return result::complete;
}

bool request_reader::take_continue() {
  if (!parser_ || !parser_->is_header_done() || !req_.expect_continue || continue_sent_)
    return false;
  continue_sent_ = true;
  return true;
}

std::optional<std::uint64_t> request_reader::body_remaining() const {
  if (!parser_ || !parser_->is_header_done()) return std::nullopt;
  auto r = parser_->content_length_remaining();
  return r ? std::optional<std::uint64_t>(*r) : std::nullopt;
}

}  // namespace rapidrpc::http

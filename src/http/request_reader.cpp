#include "http/request_reader.hpp"

#include <boost/asio/buffer.hpp>

#include <algorithm>

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
  header_consumed_ = 0;
  continue_sent_ = false;
}

void request_reader::release() noexcept {
  std::string().swap(req_.target);
  std::string().swap(req_.authorization);
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
int request_reader::check_request_line(std::string_view in) {
  if (line_done_) return 0;
  const std::size_t with_crlf = max_request_line_bytes_ + 2;
  std::string_view head = in.substr(0, std::min(in.size(), with_crlf));
  if (auto lf = head.find('\n', line_scanned_); lf != std::string_view::npos) {
    line_done_ = true;
    return lf > 0 && head[lf - 1] == '\r' ? 0 : 400;
  }
  line_scanned_ = head.size();
  return in.size() >= with_crlf ? 414 : 0;
}

request_reader::result request_reader::parse(std::string_view in, std::size_t& used) {
  used = 0;
  if (in.empty()) return result::need_more;
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
  used = parser_->put(boost::asio::const_buffer(in.data(), in.size()), ec);
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
                    : ec == bhttp::error::bad_version  ? 505
                                                       : 400;
    parser_.reset();
    return result::error;
  }
  if (!parser_->is_done()) return result::need_more;
  if (req_.method == bhttp::verb::post && !parser_->chunked() && !parser_->content_length()) {
    // Neither Content-Length nor chunked: the body cannot be delimited.
    error_status_ = 411;
    parser_.reset();
    return result::error;
  }
  keep_alive_ = parser_->keep_alive();
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

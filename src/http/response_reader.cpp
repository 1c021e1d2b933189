#include "http/response_reader.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

namespace rapidrpc::http {

namespace bhttp = boost::beast::http;

void response_parser::on_response_impl(int code, string_view reason, int version, error_code&) {
  out_.status = code;
  out_.version = static_cast<unsigned>(version);
  out_.reason.assign(reason.data(), reason.size());
}

void response_parser::on_field_impl(field, string_view name_string, string_view value,
                                    error_code&) {
  if (is_header_done()) return;  // a trailer of a chunked body
  out_.fields.emplace_back(std::string(name_string.data(), name_string.size()),
                           std::string(value.data(), value.size()));
}

std::size_t response_parser::on_body_impl(string_view body, error_code&) {
  out_.body.append(body.data(), body.size());
  return body.size();
}

std::size_t response_parser::on_chunk_body_impl(std::uint64_t, string_view body, error_code&) {
  out_.body.append(body.data(), body.size());
  return body.size();
}

response_reader::response_reader(std::size_t max_head_bytes) : max_head_bytes_(max_head_bytes) {}

void response_reader::start(bool to_head) {
  to_head_ = to_head;
  started_ = false;
  restart();
}

void response_reader::restart() {
  res_ = response{};
  parser_.emplace(res_);
  parser_->header_limit(static_cast<std::uint32_t>(max_head_bytes_));
  parser_->body_limit(boost::none);  // the relayed program is trusted with its sizes
  parser_->eager(true);
  parser_->skip(to_head_);
}

response_reader::result response_reader::parse(std::string_view in, std::size_t& used) {
  used = 0;
  if (!parser_) return result::error;
  while (used < in.size()) {
    started_ = true;
    boost::system::error_code ec;
    const std::string_view rest = in.substr(used);
    const std::size_t n = parser_->put(boost::asio::const_buffer(rest.data(), rest.size()), ec);
    used += n;
    if (ec == bhttp::error::need_more) return result::need_more;
    if (ec) {
      parser_.reset();
      return result::error;
    }
    if (!parser_->is_done()) {
      if (n == 0) return result::need_more;
      continue;
    }
    if (res_.status >= 100 && res_.status < 200) {
      if (res_.status == 101) {  // a protocol switch cannot be relayed
        parser_.reset();
        return result::error;
      }
      restart();  // 100 Continue and the like: the final response follows
      continue;
    }
    res_.content_length = parser_->content_length().has_value();
    res_.keep_alive = parser_->keep_alive();
    res_.bodyless = to_head_ || res_.status == 204 || res_.status == 304;
    parser_.reset();
    return result::complete;
  }
  return result::need_more;
}

response_reader::result response_reader::finish() {
  if (!parser_ || !started_) return result::error;
  boost::system::error_code ec;
  parser_->put_eof(ec);
  if (ec || !parser_->is_done() || res_.status < 200) {
    parser_.reset();
    return result::error;
  }
  res_.content_length = false;
  res_.keep_alive = false;
  res_.bodyless = to_head_ || res_.status == 204 || res_.status == 304;
  parser_.reset();
  return result::complete;
}

}  // namespace rapidrpc::http

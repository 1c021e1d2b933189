#include "http/response_reader.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <string>

namespace rapidrpc::http {

namespace bhttp = boost::beast::http;

namespace {

// The end of a head's empty line in `s` (its index past it), looking from
// `from`; npos if none yet. Lines may end with a bare LF.
std::size_t head_end(std::string_view s, std::size_t from) {
  for (std::size_t i = s.find('\n', from); i != std::string_view::npos; i = s.find('\n', i + 1)) {
    if (i + 1 < s.size() && s[i + 1] == '\n') return i + 2;
    if (i + 2 < s.size() && s[i + 1] == '\r' && s[i + 2] == '\n') return i + 3;
  }
  return std::string_view::npos;
}

// Every line of `head` ended by CRLF, and each folded line joined to the
// one before it by a single space (its leading whitespace dropped).
std::string plain_head(std::string_view head) {
  std::string out;
  out.reserve(head.size() + 16);
  std::size_t pos = 0;
  while (pos < head.size()) {
    std::size_t eol = head.find('\n', pos);
    if (eol == std::string_view::npos) eol = head.size();
    std::string_view line = head.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = eol + 1;
    const bool folded = !out.empty() && !line.empty() && (line[0] == ' ' || line[0] == '\t');
    if (folded) {
      out.resize(out.size() - 2);  // the CRLF that ended the line it continues
      while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
      const auto text = line.find_first_not_of(" \t");
      out += ' ';
      if (text != std::string_view::npos) out.append(line.substr(text));
    } else {
      out.append(line);
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace

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
  head_.clear();
  head_fed_ = false;
  parser_.emplace(res_);
  parser_->header_limit(static_cast<std::uint32_t>(max_head_bytes_));
  parser_->body_limit(boost::none);  // the relayed program is trusted with its sizes
  parser_->eager(true);
  parser_->skip(to_head_);
}

bool response_reader::gather_head(std::string_view in, std::size_t& used) {
  const std::size_t had = head_.size();
  const std::size_t take = std::min(in.size() - used, max_head_bytes_ + 3 - had);
  head_.append(in.substr(used, take));
  const std::size_t end = head_end(head_, had >= 2 ? had - 2 : 0);
  if (end == std::string::npos) {
    used += take;
    return false;
  }
  used += end - had;
  head_.resize(end);
  return true;
}

response_reader::result response_reader::parse(std::string_view in, std::size_t& used) {
  used = 0;
  if (!parser_) return result::error;
  while (used < in.size()) {
    started_ = true;
    boost::system::error_code ec;
    if (!head_fed_) {
      if (!gather_head(in, used)) {
        if (head_.size() <= max_head_bytes_) return result::need_more;
        parser_.reset();
        return result::error;
      }
      head_fed_ = true;
      const std::string head = plain_head(head_);
      const std::size_t n = parser_->put(boost::asio::const_buffer(head.data(), head.size()), ec);
      if ((ec && ec != bhttp::error::need_more) || n != head.size() || !parser_->is_header_done()) {
        parser_.reset();
        return result::error;
      }
    } else {
      const std::string_view rest = in.substr(used);
      const std::size_t n = parser_->put(boost::asio::const_buffer(rest.data(), rest.size()), ec);
      used += n;
      if (ec == bhttp::error::need_more) return result::need_more;
      if (ec) {
        parser_.reset();
        return result::error;
      }
      if (!parser_->is_done() && n == 0) return result::need_more;
    }
    if (!parser_->is_done()) continue;
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
  if (!parser_ || !started_ || !head_fed_) {  // nothing, or a head cut short
    parser_.reset();
    return result::error;
  }
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

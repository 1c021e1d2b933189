#include "client/wire.hpp"

#include "client/json_reply.hpp"
#include "http/gzip.hpp"

#include <rapidrpc/literals.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>

#ifndef RAPIDRPC_CLIENT_VERSION
#define RAPIDRPC_CLIENT_VERSION "0.1"
#endif

namespace rapidrpc::client_detail {

namespace {

bool iequals(std::string_view a, std::string_view b) noexcept {
  return std::ranges::equal(a, b, [](char x, char y) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return lower(x) == lower(y);
  });
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110 token characters.
bool is_token(std::string_view s) noexcept {
  if (s.empty()) return false;
  constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
  return std::ranges::all_of(s, [&](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           extra.find(c) != std::string_view::npos;
  });
}

bool is_header_value(std::string_view s) noexcept {
  return std::ranges::none_of(s, [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

}  // namespace

std::string host_header(const url& target) {
  std::string out;
  bool ipv6 = target.host.find(':') != std::string::npos;
  if (ipv6) out += '[';
  out += target.host;
  if (ipv6) out += ']';
  if (target.port != (target.scheme == "https" ? "443" : "80")) {
    out += ':';
    out += target.port;
  }
  return out;
}

request_head::request_head(const url& target, const client_options& options) {
  constexpr std::array<std::string_view, 6> reserved = {
      "Host", "Content-Length", "Transfer-Encoding", "Content-Encoding", "Connection", "Expect"};
  bool own_agent = false, own_type = false, own_accept = false, own_auth = false;
  for (const auto& [name, val] : options.headers) {
    if (!is_token(name)) throw std::invalid_argument("bad header name: \"" + name + "\"");
    if (!is_header_value(val))
      throw std::invalid_argument("the value of header " + name + " holds CR, LF or NUL");
    for (auto r : reserved)
      if (iequals(name, r))
        throw std::invalid_argument("header " + name + " is set by the client itself");
    own_agent = own_agent || iequals(name, "User-Agent");
    own_type = own_type || iequals(name, "Content-Type");
    own_accept = own_accept || iequals(name, "Accept-Encoding");
    own_auth = own_auth || iequals(name, "Authorization");
  }
  if (!is_header_value(target.host) || !is_header_value(target.path) ||
      target.path.find(' ') != std::string::npos)
    throw std::invalid_argument("the URL cannot be sent in a request line");

  fixed_ = "POST ";
  fixed_ += target.path;
  fixed_ += " HTTP/1.1\r\nHost: ";
  fixed_ += host_header(target);
  fixed_ += "\r\n";
  if (!own_agent) fixed_ += "User-Agent: rapidrpc/" RAPIDRPC_CLIENT_VERSION "\r\n";
  if (!own_type)
    fixed_ += options.protocol == protocol::jsonrpc ? "Content-Type: application/json\r\n"
                                                    : "Content-Type: text/xml\r\n";
  if (options.accept_gzip && !own_accept) fixed_ += "Accept-Encoding: gzip\r\n";
  if ((!target.user.empty() || !target.password.empty()) && !own_auth) {
    std::string credentials = target.user + ':' + target.password;
    fixed_ += "Authorization: Basic ";
    append_base64(fixed_, credentials);
    fixed_ += "\r\n";
  }
  if (!options.keep_alive) fixed_ += "Connection: close\r\n";
  for (const auto& [name, val] : options.headers) {
    fixed_ += name;
    fixed_ += ": ";
    fixed_ += trim(val);
    fixed_ += "\r\n";
  }
}

void request_head::write(std::string& out, std::size_t content_length, bool gzip_body) const {
  out += fixed_;
  if (gzip_body) out += "Content-Encoding: gzip\r\n";
  out += "Content-Length: ";
  out += std::to_string(content_length);
  out += "\r\n\r\n";
}

namespace {

// The status and Content-Encoding checks both protocols share; inflates
// `body` in place. An error if the response cannot be used.
std::optional<transport_error> check_http(int status, std::string_view reason,
                                          std::string_view content_encoding, std::string& body,
                                          std::size_t max_body_bytes, std::string& scratch) {
  using why = transport_error::reason;
  if (status != 200) {
    std::string message = "HTTP status " + std::to_string(status);
    if (!reason.empty()) {
      message += ' ';
      message.append(reason.substr(0, 100));
    }
    return transport_error(why::http_status, message, status);
  }
  content_encoding = trim(content_encoding);
  if (iequals(content_encoding, "gzip") || iequals(content_encoding, "x-gzip")) {
    switch (http::gunzip(body, scratch, max_body_bytes)) {
      case http::inflate_result::ok:
        break;
      case http::inflate_result::too_large:
        return transport_error(why::bad_response, "the inflated response is larger than " +
                                                      std::to_string(max_body_bytes) + " bytes");
      case http::inflate_result::corrupt:
        return transport_error(why::bad_response, "the gzip response body is corrupt");
    }
    body.swap(scratch);
  } else if (!content_encoding.empty() && !iequals(content_encoding, "identity")) {
    return transport_error(why::bad_response, "unsupported response Content-Encoding: " +
                                                  std::string(content_encoding.substr(0, 40)));
  }
  return std::nullopt;
}

}  // namespace

call_result interpret_response(int status, std::string_view reason,
                               std::string_view content_encoding, std::string& body,
                               std::size_t max_body_bytes, xmlrpc::parser& parser,
                               std::string& scratch) {
  using why = transport_error::reason;
  if (auto e = check_http(status, reason, content_encoding, body, max_body_bytes, scratch))
    return std::move(*e);
  parser.reset();
  if (!parser.parse(body))
    return transport_error(why::bad_response, "the response is not an XML-RPC methodResponse: " +
                                                  parser.error().message);
  auto& response = parser.response();
  if (auto* f = std::get_if<fault>(&response)) return std::move(*f);
  return std::get<value>(std::move(response));
}

call_result interpret_json_response(int status, std::string_view reason,
                                    std::string_view content_encoding, std::string& body,
                                    std::size_t max_body_bytes, std::uint64_t id,
                                    std::string& scratch) {
  if (auto e = check_http(status, reason, content_encoding, body, max_body_bytes, scratch))
    return std::move(*e);
  return result_for(read_json_reply(body), id);
}

array multicall_params(const std::vector<std::pair<std::string, array>>& calls) {
  array entries;
  entries.reserve(calls.size());
  for (const auto& [name, params] : calls) {
    structure entry;
    entry.emplace("methodName", name);
    entry.emplace("params", params);
    entries.emplace_back(std::move(entry));
  }
  return array{value(std::move(entries))};
}

std::vector<outcome> split_multicall(value&& result, std::size_t count) {
  using why = transport_error::reason;
  auto* entries = result.get_if<array>();
  if (!entries)
    throw transport_error(
        why::bad_response,
        "system.multicall returned a " + std::string(kind_name(result.type())) + ", not an array");
  if (entries->size() != count)
    throw transport_error(why::bad_response, "system.multicall returned " +
                                                 std::to_string(entries->size()) + " results for " +
                                                 std::to_string(count) + " calls");
  std::vector<outcome> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    value& entry = (*entries)[i];
    if (auto* one = entry.get_if<array>(); one && one->size() == 1) {
      out.emplace_back(std::move((*one)[0]));
      continue;
    }
    if (auto* s = entry.get_if<structure>()) {
      auto code = s->find("faultCode");
      auto text = s->find("faultString");
      const std::string* message = text == s->end() ? nullptr : text->second.get_if<std::string>();
      if (code != s->end() && message) {
        if (auto* c = code->second.get_if<std::int32_t>()) {
          out.emplace_back(fault(*c, *message));
          continue;
        }
        if (auto* c = code->second.get_if<std::int64_t>();
            c && *c >= INT32_MIN && *c <= INT32_MAX) {
          out.emplace_back(fault(static_cast<std::int32_t>(*c), *message));
          continue;
        }
      }
    }
    out.emplace_back(
        fault(fault_code::transport_error, "system.multicall result " + std::to_string(i) +
                                               " is neither [value] nor {faultCode, faultString}"));
  }
  return out;
}

}  // namespace rapidrpc::client_detail

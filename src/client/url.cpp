// url::parse: the http:// and https:// URLs a client accepts.
#include <rapidrpc/client.hpp>

#include "text/text.hpp"

#include <boost/asio/ip/address_v6.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace rapidrpc {

namespace {

[[noreturn]] void bad(std::string_view why) {
  throw std::invalid_argument("bad URL: " + std::string(why));
}

std::string percent_decode(std::string_view s, std::string_view what) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int hi = i + 2 < s.size() ? detail::hex_value(s[i + 1]) : -1;
    int lo = i + 2 < s.size() ? detail::hex_value(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) bad("bad percent escape in the " + std::string(what));
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// Characters that cannot appear unescaped anywhere in a URL we send.
bool has_forbidden(std::string_view s) noexcept {
  return std::ranges::any_of(s, [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

bool iequals_prefix(std::string_view text, std::string_view prefix) noexcept {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

}  // namespace

url url::parse(std::string_view text) {
  url out;
  if (iequals_prefix(text, "https://")) {
    out.scheme = "https";
    out.port = "443";
    text.remove_prefix(8);
  } else if (iequals_prefix(text, "http://")) {
    text.remove_prefix(7);
  } else {
    if (text.find("://") != std::string_view::npos)
      bad("only http:// and https:// URLs are supported");
    bad("the URL must start with http:// or https://");
  }
  if (has_forbidden(text)) bad("spaces and control characters must be percent-encoded");

  // The fragment is never sent.
  if (auto hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);

  auto authority_end = text.find_first_of("/?");
  std::string_view authority = text.substr(0, authority_end);
  std::string_view rest =
      authority_end == std::string_view::npos ? std::string_view{} : text.substr(authority_end);

  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority.remove_prefix(at + 1);
    auto colon = userinfo.find(':');
    out.user = percent_decode(userinfo.substr(0, colon), "user name");
    if (colon != std::string_view::npos)
      out.password = percent_decode(userinfo.substr(colon + 1), "password");
  }

  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) bad("unterminated IPv6 address");
    std::string host(authority.substr(1, close - 1));
    boost::system::error_code ec;
    boost::asio::ip::make_address_v6(host, ec);
    if (ec) bad("\"" + host + "\" is not an IPv6 address");
    out.host = std::move(host);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad("unexpected text after the IPv6 address");
      port = after.substr(1);
    }
  } else {
    auto colon = authority.find(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    if (out.host.find_first_of("[]") != std::string::npos)
      bad("brackets around a host that is not IPv6");
  }
  if (out.host.empty()) bad("no host");
  if (out.host.find('%') != std::string::npos) bad("percent escapes in the host are not supported");

  if (!port.empty()) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535 ||
        !std::ranges::all_of(port, [](char c) { return c >= '0' && c <= '9'; }))
      bad("the port must be a number from 1 to 65535");
    out.port = std::to_string(value);
  }

  if (rest.empty()) {
    out.path = "/RPC2";
  } else if (rest.front() == '?') {
    out.path = "/";
    out.path += rest;
  } else {
    out.path = std::string(rest);
  }
  return out;
}

}  // namespace rapidrpc

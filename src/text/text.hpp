// Private, header-only: small text helpers the library and the command-line
// client share (decimal numbers, hex digits, HTML escaping). Below every
// other folder: it includes none of the project's.
#pragma once

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>

namespace rapidrpc::detail {

/// Lower-case hex digits, by value.
inline constexpr char hex_digits[] = "0123456789abcdef";

/// The value of the hex digit `c` (either case), or -1.
constexpr int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Appends `n` in decimal, as std::to_chars writes it.
template <std::integral Int>
void append_decimal(std::string& out, Int n) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
}

/// Appends `text` with HTML's special characters escaped (& < > " '), so
/// that it shows as text in an element or in a quoted attribute.
inline void append_html_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace rapidrpc::detail

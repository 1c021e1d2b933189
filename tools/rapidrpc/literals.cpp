#include "literals.hpp"

#include "json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

namespace rapidrpc::cli {

const char* const argument_forms_help =
    "Arguments (one XML-RPC parameter each):\n"
    "  i/3                   int (i4, 32-bit)\n"
    "  I/9000000000          i8 (64-bit)\n"
    "  d/2.5                 double\n"
    "  b/t b/f b/true b/false  boolean\n"
    "  s/text                string (everything after s/, may be empty)\n"
    "  n/                    nil\n"
    "  h/48656c6c6f          base64 bytes, given in hex\n"
    "  6/SGVsbG8=            base64 bytes, given as base64\n"
    "  8/20240131T12:30:00   dateTime.iso8601 (also 8/2024-01-31T12:30:00)\n"
    "  '{\"a\":[1,2.5,\"x\",null]}'  JSON: object -> struct, array -> array, string,\n"
    "                        true/false -> boolean, null -> nil, integer -> int (i8 if\n"
    "                        beyond 32 bits), other number -> double\n"
    "  3  -1.5  true  null   a bare JSON number or word is JSON too\n"
    "  text                  anything else is a string";

namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw argument_error("argument '" + std::string(text) + "': " + why);
}

template <class Int>
Int parse_int(std::string_view whole, std::string_view digits, const char* type) {
  // Strict: optional sign, decimal digits, nothing else.
  std::string_view d = digits;
  bool plus = !d.empty() && d.front() == '+';
  if (plus) d.remove_prefix(1);
  if (d.empty() || d.front() == '+' || (d.front() == '-' && d.size() == 1))
    bad(whole, std::string("expected a decimal ") + type);
  Int v{};
  auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
  if (ec == std::errc::result_out_of_range) bad(whole, std::string("out of range for ") + type);
  if (ec != std::errc() || p != d.data() + d.size()) bad(whole, std::string("expected a decimal ") + type);
  return v;
}

double parse_double(std::string_view whole, std::string_view text) {
  // An optional sign, digits with an optional fraction, an optional exponent.
  std::string_view t = text;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  std::size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  std::size_t digits = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i, ++digits;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) bad(whole, "expected a decimal number");
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) bad(whole, "expected exponent digits");
  }
  if (i != t.size()) bad(whole, "expected a decimal number");
  double d = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
  if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(d))
    bad(whole, "out of the double range");
  return d;
}

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bytes parse_hex(std::string_view whole, std::string_view text) {
  if (text.size() % 2) bad(whole, "hex needs an even number of digits");
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) bad(whole, "not a hex digit");
    out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
  }
  return bytes(std::move(out));
}

int b64_digit(char c) noexcept {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bytes parse_base64(std::string_view whole, std::string_view text) {
  if (text.size() % 4) bad(whole, "base64 must be padded with '=' to a multiple of 4");
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    unsigned n = 0;
    for (int k = 0; k < 4; ++k) {
      int d = k < 4 - pad ? b64_digit(text[i + static_cast<std::size_t>(k)]) : 0;
      if (d < 0) bad(whole, "not base64");
      n = (n << 6) | static_cast<unsigned>(d);
    }
    if ((pad == 1 && (n & 0xFF)) || (pad == 2 && (n & 0xFFFF)))
      bad(whole, "not canonical base64 (unused bits set)");
    out.push_back(static_cast<std::uint8_t>(n >> 16));
    if (pad < 2) out.push_back(static_cast<std::uint8_t>((n >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<std::uint8_t>(n & 0xFF));
  }
  return bytes(std::move(out));
}

bool looks_like_json(std::string_view t) noexcept {
  if (t.empty()) return false;
  char c = t.front();
  if (c == '{' || c == '[' || c == '"') return true;
  if (t == "true" || t == "false" || t == "null") return true;
  // A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  std::size_t i = 0;
  auto digit = [&](std::size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
  if (t[i] == '-') ++i;
  if (!digit(i)) return false;
  if (t[i] == '0') ++i;
  else while (digit(i)) ++i;
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == t.size();
}

}  // namespace

bool parse_date_time(std::string_view t, date_time& out) noexcept {
  // YYYYMMDDTHH:MM:SS or YYYY-MM-DDTHH:MM:SS
  auto num = [&](std::size_t at, std::size_t n, int& v) {
    if (at + n > t.size()) return false;
    v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      v = v * 10 + (t[i] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, s;
  std::size_t p = 0;
  if (!num(p, 4, y)) return false;
  p = 4;
  bool dashes = t.size() > 4 && t[4] == '-';
  if (dashes) ++p;
  if (!num(p, 2, mo)) return false;
  p += 2;
  if (dashes) {
    if (p >= t.size() || t[p] != '-') return false;
    ++p;
  }
  if (!num(p, 2, d)) return false;
  p += 2;
  if (p >= t.size() || t[p] != 'T') return false;
  ++p;
  if (!num(p, 2, h) || p + 2 >= t.size() || t[p + 2] != ':') return false;
  p += 3;
  if (!num(p, 2, mi) || p + 2 >= t.size() || t[p + 2] != ':') return false;
  p += 3;
  if (!num(p, 2, s) || p + 2 != t.size()) return false;
  static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1) return false;
  if (d > days[mo - 1] + (mo == 2 && leap ? 1 : 0)) return false;
  if (h > 23 || mi > 59 || s > 60) return false;
  out = date_time{static_cast<std::int16_t>(y), static_cast<std::uint8_t>(mo), static_cast<std::uint8_t>(d),
                  static_cast<std::uint8_t>(h), static_cast<std::uint8_t>(mi), static_cast<std::uint8_t>(s)};
  return true;
}

value parse_argument(std::string_view text) {
  if (looks_like_json(text)) {
    try {
      return parse_json(text);
    } catch (const json_error& e) {
      bad(text, e.what());
    }
  }
  auto slash = text.find('/');
  if (slash == 1) {
    std::string_view rest = text.substr(2);
    switch (text[0]) {
      case 'i': return value(parse_int<std::int32_t>(text, rest, "32-bit int"));
      case 'I': return value(parse_int<std::int64_t>(text, rest, "64-bit int"));
      case 'd': return value(parse_double(text, rest));
      case 's': return value(std::string(rest));
      case 'b':
        if (rest == "t" || rest == "true") return value(true);
        if (rest == "f" || rest == "false") return value(false);
        bad(text, "a boolean is b/t, b/f, b/true or b/false");
      case 'n':
        if (!rest.empty()) bad(text, "nil takes no value: write n/");
        return value(nil);
      case 'h': return value(parse_hex(text, rest));
      case '6': return value(parse_base64(text, rest));
      case '8': {
        date_time t;
        if (!parse_date_time(rest, t))
          bad(text, "a dateTime is 8/YYYYMMDDTHH:MM:SS or 8/YYYY-MM-DDTHH:MM:SS, fields in range");
        return value(t);
      }
      default:
        bad(text, std::string("unknown type prefix '") + text[0] +
                      "/' (see --help; write s/... for a string)");
    }
  }
  return value(std::string(text));
}

}  // namespace rapidrpc::cli

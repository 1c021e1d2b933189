#include "arguments.hpp"
#include "text/text.hpp"

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/literals.hpp>

#include <cstdint>
#include <string>
#include <variant>

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
    "                        beyond 32 bits), other number -> double,\n"
    "                        {\"$base64\":\"SGk=\"} -> base64,\n"
    "                        {\"$datetime\":\"2024-01-31T12:30:00\"} -> dateTime.iso8601\n"
    "  3  -1.5  true  null   a bare JSON number or word is JSON too\n"
    "  text                  anything else is a string";

namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw argument_error("argument '" + std::string(text) + "': " + why);
}

template <class Int>
Int parse_int(std::string_view whole, std::string_view digits, const char* type) {
  Int v{};
  switch (parse_integer(digits, v)) {
    case literal_status::ok:
      return v;
    case literal_status::out_of_range:
      bad(whole, std::string("out of range for ") + type);
    case literal_status::malformed:
      break;
  }
  bad(whole, std::string("expected a decimal ") + type);
}

double parse_decimal(std::string_view whole, std::string_view text) {
  double d = 0;
  switch (parse_double(text, d)) {
    case literal_status::ok:
      return d;
    case literal_status::out_of_range:
      bad(whole, "out of the double range");
    case literal_status::malformed:
      break;
  }
  bad(whole, "expected a decimal number");
}

bytes parse_hex(std::string_view whole, std::string_view text) {
  if (text.size() % 2) bad(whole, "hex needs an even number of digits");
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    int hi = rapidrpc::detail::hex_value(text[i]), lo = rapidrpc::detail::hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) bad(whole, "not a hex digit");
    out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
  }
  return bytes(std::move(out));
}

bytes parse_base64(std::string_view whole, std::string_view text) {
  bytes b;
  if (!decode_base64(text, b.data))
    bad(whole, "not canonical base64 (the standard alphabet, '=' padding to a multiple of 4)");
  return b;
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
  if (t[i] == '0')
    ++i;
  else
    while (digit(i)) ++i;
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

value parse_json_argument(std::string_view what, std::string_view text) {
  auto r = jsonrpc::parse_value(text);
  if (auto* e = std::get_if<jsonrpc::error_reply>(&r))
    throw argument_error(std::string(what) + ": " + e->detail);
  return std::get<value>(std::move(r));
}

value parse_argument(std::string_view text) {
  if (looks_like_json(text))
    return parse_json_argument("argument '" + std::string(text) + "'", text);
  auto slash = text.find('/');
  if (slash == 1) {
    std::string_view rest = text.substr(2);
    switch (text[0]) {
      case 'i':
        return value(parse_int<std::int32_t>(text, rest, "32-bit int"));
      case 'I':
        return value(parse_int<std::int64_t>(text, rest, "64-bit int"));
      case 'd':
        return value(parse_decimal(text, rest));
      case 's':
        return value(std::string(rest));
      case 'b':
        if (rest == "t" || rest == "true") return value(true);
        if (rest == "f" || rest == "false") return value(false);
        bad(text, "a boolean is b/t, b/f, b/true or b/false");
      case 'n':
        if (!rest.empty()) bad(text, "nil takes no value: write n/");
        return value(nil);
      case 'h':
        return value(parse_hex(text, rest));
      case '6':
        return value(parse_base64(text, rest));
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

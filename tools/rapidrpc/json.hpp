// JSON <-> rapidrpc::value for the command line: a small, strict RFC 8259
// parser and a printer. No I/O.
//
// Reading (command-line arguments, --expect):
//   object -> struct (a repeated member name is an error), array -> array,
//   string -> string, true/false -> boolean, null -> nil,
//   integer (no fraction or exponent) -> i4 if it fits in 32 bits, else i8
//   (beyond 64 bits is an error), any other number -> double.
// Writing (--json and the readable form's containers):
//   i4/i8 -> integer, double -> shortest round-trip number (always with a '.'
//   or an exponent, so it reads back as a double), nil -> null,
//   base64 -> {"base64": "..."}, dateTime -> {"dateTime.iso8601": "YYYYMMDDTHH:MM:SS"}.
//
// Threading: free functions, no shared state.
#pragma once

#include <rapidrpc/value.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rapidrpc::cli {

/// A JSON text that could not be read: the message says what and where.
class json_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Limits of the reader.
inline constexpr std::size_t json_max_depth = 64;  ///< nesting, as XML-RPC's parser allows

/// Parses one JSON text (surrounding whitespace allowed, nothing else).
/// Throws json_error if it is not valid JSON, not valid UTF-8, nests deeper
/// than json_max_depth, repeats a member name, or holds an integer beyond
/// 64 bits or a number beyond the double range.
value parse_json(std::string_view text);

/// How write_json() lays out containers.
struct json_style {
  int indent = 0;  ///< spaces per level; 0: everything on one line, no spaces
};

/// Appends `v` as JSON (see the mapping above).
void write_json(std::string& out, const value& v, json_style style = {});

/// `v` as JSON.
std::string to_json(const value& v, json_style style = {});

/// Appends `s` as a JSON string literal (quotes included).
void write_json_string(std::string& out, std::string_view s);

/// Appends the shortest decimal text that reads back as exactly `d` (finite
/// values; "1e+100", "2.5", "3.0").
void append_number(std::string& out, double d);

/// Appends "YYYYMMDDTHH:MM:SS".
void append_date_time(std::string& out, const date_time& t);

/// Appends `data` as standard, padded base64.
void append_base64(std::string& out, const std::vector<std::uint8_t>& data);

}  // namespace rapidrpc::cli

// The baseline reader: the small, strict, hand-written RFC 8259 parser the
// command line had before it used the library's JSON-RPC codec (moved here
// from tools/rapidrpc/json.hpp so the measurement can still be rerun), with
// the two writers the inputs use. No I/O.
//
// Reading:
//   object -> struct (a repeated member name is an error), array -> array,
//   string -> string, true/false -> boolean, null -> nil,
//   integer (no fraction or exponent) -> i4 if it fits in 32 bits, else i8
//   (beyond 64 bits is an error), any other number -> double.
//
// Threading: free functions, no shared state.
#pragma once

#include <rapidrpc/value.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace json_choice::baseline {

using rapidrpc::value;

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

/// Appends the shortest decimal text that reads back as exactly `d` (finite
/// values; "1e+100", "2.5", "3.0").
void append_number(std::string& out, double d);

}  // namespace json_choice::baseline

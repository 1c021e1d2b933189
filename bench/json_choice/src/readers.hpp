// One JSON reader per candidate library, each turning a JSON text straight
// into rapidrpc::value with the mapping of json.hpp (the command line's old reader):
//   object -> struct (a repeated member name is an error), array -> array,
//   string -> string, true/false -> boolean, null -> nil,
//   integer -> i4 if it fits in 32 bits, else i8 (beyond 64 bits: error),
//   any other number -> double (beyond the double range: error),
//   nesting deeper than max_depth: error; the whole text must be one value.
// All throw read_error with a message on bad input. A reader object holds the
// library's reusable parser state: one per thread (or per connection).
#pragma once

#include <rapidrpc/value.hpp>

#include <simdjson.h>

#include <boost/json/basic_parser.hpp>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace json_choice {

inline constexpr std::size_t max_depth = 64;  // as the baseline (json.hpp) and xmlrpc-c

class read_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// simdjson 3 On Demand: pull the tokens, build the value recursively (the
// recursion is bounded by max_depth).
class simdjson_reader {
 public:
  simdjson_reader();

  // Zero-copy: `body` must have body.capacity() >= body.size() + SIMDJSON_PADDING
  // (reserve it when the body is read); otherwise this copies like parse_copy.
  rapidrpc::value parse_in_place(const std::string& body);
  // Copies `text` into a reusable padded buffer owned by the reader, then parses.
  rapidrpc::value parse_copy(std::string_view text);
  // Copies `text` into a fresh simdjson::padded_string (one allocation), then parses.
  rapidrpc::value parse_padded_string(std::string_view text);

  static const char* active_implementation();
  static const char* builtin_implementation();

 private:
  rapidrpc::value parse(simdjson::padded_string_view text);

  simdjson::ondemand::parser parser_;
  std::string scratch_;
};

// RapidJSON 1.1 SAX Reader with UTF-8 validation; numbers come as text
// (kParseNumbersAsStringsFlag) so integers beyond 64 bits can be told from
// doubles, and are converted with std::from_chars.
class rapidjson_reader {
 public:
  rapidjson_reader();
  ~rapidjson_reader();
  rapidjson_reader(const rapidjson_reader&) = delete;
  rapidjson_reader& operator=(const rapidjson_reader&) = delete;

  rapidrpc::value parse(std::string_view text);
  // RapidJSON's own number parsing (Int/Uint/Int64/Uint64/Double events):
  // faster, but an integer beyond 64 bits silently becomes a double.
  rapidrpc::value parse_native_numbers(std::string_view text);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Boost.JSON 1.81 basic_parser (SAX, non-recursive, push-style: input may
// arrive in pieces).
class boost_json_reader {
 public:
  boost_json_reader();
  ~boost_json_reader();
  boost_json_reader(const boost_json_reader&) = delete;
  boost_json_reader& operator=(const boost_json_reader&) = delete;

  rapidrpc::value parse(std::string_view text);
  // The same, fed in `piece`-byte pieces (write_some with more=true), as
  // bytes would arrive from a socket.
  rapidrpc::value parse_in_pieces(std::string_view text, std::size_t piece);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// The baseline: json.cpp (baseline::parse_json, the command line's reader
// before it used the library's codec), with its
// json_error turned into read_error.
rapidrpc::value parse_baseline(std::string_view text);

}  // namespace json_choice

// Command-line arguments as XML-RPC values: xmlrpc-c's typed forms
// ("i/3", "s/text", "b/t", ...), JSON, or a bare word (a string). No I/O.
#pragma once

#include <rapidrpc/value.hpp>

#include <stdexcept>
#include <string_view>

namespace rapidrpc::cli {

/// An argument that is not a valid value; the message says why.
class argument_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The forms parse_argument() accepts, as shown by --help.
extern const char* const argument_forms_help;

/// One command-line argument as a value:
///
///   i/N   int (i4, 32-bit)         I/N   i8 (64-bit)
///   d/X   double                   b/t b/f b/true b/false   boolean
///   s/T   string (anything after "s/", may be empty)
///   n/    nil                      h/HEX   base64 bytes given in hex
///   6/B64 base64 bytes given as base64
///   8/YYYYMMDDTHH:MM:SS (or 8/YYYY-MM-DDTHH:MM:SS)   dateTime.iso8601
///
/// Text starting with '{', '[' or '"', and the words true, false, null and
/// JSON numbers, are read as JSON by the JSON-RPC codec, with its mapping
/// (jsonrpc::parse_value; docs/jsonrpc.md). Anything else without a
/// known "X/" prefix is a string. Throws argument_error for a malformed
/// typed form or JSON text, and for an unknown one-letter prefix ("x/1").
value parse_argument(std::string_view text);

/// A JSON text (an argument, --expect) as a value, by the JSON-RPC codec's
/// mapping. Throws argument_error, naming `what`, if it is not valid JSON
/// or holds what no value can (a repeated member name, an integer beyond
/// 64 bits, nesting deeper than 64 levels).
value parse_json_argument(std::string_view what, std::string_view text);

}  // namespace rapidrpc::cli

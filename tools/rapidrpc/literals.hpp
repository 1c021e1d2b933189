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
/// JSON numbers, are read as JSON (see json.hpp). Anything else without a
/// known "X/" prefix is a string. Throws argument_error for a malformed
/// typed form or JSON text, and for an unknown one-letter prefix ("x/1").
value parse_argument(std::string_view text);

/// "YYYYMMDDTHH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" with every field in range.
bool parse_date_time(std::string_view text, date_time& out) noexcept;

}  // namespace rapidrpc::cli

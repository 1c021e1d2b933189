// Scalar literals: the text forms of integers, doubles, dates and base64
// bytes, strict on reading and canonical on writing. The XML-RPC and
// JSON-RPC codecs, the client and the rapidrpc command line all read and
// write these forms through this header, so they agree on every one.
//
// Threading: free functions, no shared state.
#pragma once

#include <rapidrpc/value.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc {

/// The outcome of parsing a numeric literal.
enum class literal_status : std::uint8_t { ok, malformed, out_of_range };

/// An optional '+' or '-', then one or more ASCII digits, nothing else (no
/// spaces, no hex; leading zeros allowed). `out` is set only on ok.
literal_status parse_integer(std::string_view text, std::int32_t& out) noexcept;
/// The same for 64 bits.
literal_status parse_integer(std::string_view text, std::int64_t& out) noexcept;

/// An optional sign, digits with an optional fraction (at least one digit in
/// all), then an optional exponent ([eE][+-]?digits); no spaces, inf, nan or
/// hex. Beyond the double range is out_of_range. `out` is set only on ok.
literal_status parse_double(std::string_view text, double& out) noexcept;

/// Appends the shortest text that reads back as exactly `d`, always with a
/// '.' or an exponent: plain decimal ("0.1", "3.0") for zero and
/// 1e-7 <= |d| < 1e21, exponent form ("1e+100") outside. Returns false,
/// appending nothing, if `d` is not finite.
bool append_double(std::string& out, double d);

/// The two text forms of a date_time. Either may end in a fraction of a
/// second, ".f" to ".ffffff" (microseconds).
enum class date_format : std::uint8_t {
  basic,     ///< "YYYYMMDDTHH:MM:SS", XML-RPC's dateTime.iso8601
  extended,  ///< "YYYY-MM-DDTHH:MM:SS", JSON-RPC's {"$datetime": ...}
};

/// True if every field of `t` is in range: year 0..9999, a day valid for
/// the month (leap years included), hour 0..23, minute 0..59, second 0..60,
/// microsecond 0..999999.
bool is_valid(const date_time& t) noexcept;

/// Reads either form of date_format, or ISO 8601's basic form without
/// colons ("YYYYMMDDTHHMMSS"), with every field in range (is_valid),
/// and a fraction of 1 to 6 digits after a '.' if there is one. No time
/// zone: a 'Z' or an offset is refused, not dropped. `out` is set only on
/// success.
bool parse_date_time(std::string_view text, date_time& out) noexcept;

/// Appends `t` in `format`, with ".ffffff" (six digits) when t.microsecond
/// is not 0. The caller checks is_valid(t) first.
void append_date_time(std::string& out, const date_time& t,
                      date_format format = date_format::basic);

/// Decodes base64: the standard alphabet, '=' padding to a multiple of four,
/// the unused bits of the last group zero (canonical). Space, tab, CR and LF
/// may appear anywhere and are skipped. Appends the bytes to `out`; on
/// false, `out` holds partial data.
bool decode_base64(std::string_view text, std::vector<std::uint8_t>& out);

/// Appends canonical base64 of `data` (standard alphabet, padded, no line
/// breaks): the one text decode_base64 accepts without spaces.
void append_base64(std::string& out, std::span<const std::uint8_t> data);

/// The same for the bytes of a string (e.g. Basic credentials).
void append_base64(std::string& out, std::string_view data);

}  // namespace rapidrpc

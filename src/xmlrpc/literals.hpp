// Scalar literals of XML-RPC values: strict parsing and canonical writing.
// Shared by the parser and the writers so both agree on every form.
#pragma once

#include <rapidrpc/value.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc::xmlrpc::detail {

/// The outcome of parsing a numeric literal.
enum class literal_status : std::uint8_t { ok, malformed, out_of_range };

/// <int>, <i4>, <i8>: an optional '+' or '-', then one or more ASCII digits,
/// nothing else (no spaces, no hex). Leading zeros are allowed.
literal_status parse_integer(std::string_view text, std::int32_t& out) noexcept;
literal_status parse_integer(std::string_view text, std::int64_t& out) noexcept;

/// <boolean>: exactly "0" or "1".
bool parse_boolean(std::string_view text, bool& out) noexcept;

/// <double>: an optional sign, digits with an optional fraction (at least one
/// digit in all), then an optional exponent ([eE][+-]?digits). No spaces, no
/// inf/nan, no hex. Values beyond the double range are out_of_range.
literal_status parse_double(std::string_view text, double& out) noexcept;

/// <dateTime.iso8601>: "YYYYMMDDTHH:MM:SS" or "YYYY-MM-DDTHH:MM:SS", fields in
/// range (day valid for the month, second 0..60), no time zone or fraction.
bool parse_date_time(std::string_view text, date_time& out) noexcept;

/// True if every field of `t` is in range (the same rules as parse_date_time).
bool is_valid(const date_time& t) noexcept;

/// <base64>: the standard alphabet with '=' padding to a multiple of four,
/// unused bits of the last group zero (canonical). Space, tab, CR and LF may
/// appear anywhere and are skipped. Appends the bytes to `out`; on false,
/// `out` holds partial data.
bool decode_base64(std::string_view text, std::vector<std::uint8_t>& out);

/// Appends canonical base64 (standard alphabet, padded, no line breaks).
void append_base64(std::string& out, std::span<const std::uint8_t> data);

/// Appends the shortest text that parses back to exactly `d`: plain decimal
/// ("0.1", "3.0") for 1e-7 <= |d| < 1e21 and zero, exponent form ("1e+100")
/// outside that range. Returns false (appending nothing) if `d` is not finite.
bool append_double(std::string& out, double d);

/// Appends "YYYYMMDDTHH:MM:SS". The caller checks is_valid() first.
void append_date_time(std::string& out, const date_time& t);

}  // namespace rapidrpc::xmlrpc::detail

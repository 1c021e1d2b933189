// The scalar literals (include/rapidrpc/literals.hpp).
#include <rapidrpc/literals.hpp>

#include "value/decimal.hpp"
#include "value/sink.hpp"

#include <fmt/format.h>  // fmt::detail::dragonbox

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <system_error>

namespace rapidrpc {
namespace {

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

template <class Int>
literal_status parse_integer_as(std::string_view text, Int& out) noexcept {
  const char* p = text.data();
  const char* const end = p + text.size();
  const char* number = p;  // where std::from_chars starts: it takes '-' but not '+'
  if (p != end && (*p == '+' || *p == '-')) {
    if (*p == '+') ++number;
    ++p;
  }
  if (p == end || !is_digit(*p)) return literal_status::malformed;
  // Up to 18 digits cannot overflow 64 bits: gathered here, range-checked
  // once (std::from_chars checks at every digit).
  if (end - p <= 18) {
    std::uint64_t magnitude = 0;
    for (; p != end; ++p) {
      const auto digit = static_cast<unsigned>(*p - '0');
      if (digit > 9) return literal_status::malformed;
      magnitude = magnitude * 10 + digit;
    }
    const bool negative = *text.data() == '-';
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<Int>::max());
    if (magnitude > max + (negative ? 1 : 0)) return literal_status::out_of_range;
    // Two's complement: the negation of the magnitude, taken modulo 2^64,
    // is the value (the most negative one included).
    out = static_cast<Int>(negative ? 0 - magnitude : magnitude);
    return literal_status::ok;
  }
  Int v{};
  auto [ptr, ec] = std::from_chars(number, end, v, 10);
  if (ptr != end) return literal_status::malformed;
  if (ec == std::errc::result_out_of_range) return literal_status::out_of_range;
  if (ec != std::errc{}) return literal_status::malformed;
  out = v;
  return literal_status::ok;
}

// Two ASCII digits at p, as a number; -1 if either is not a digit.
int two_digits(const char* p) noexcept {
  if (!is_digit(p[0]) || !is_digit(p[1])) return -1;
  return (p[0] - '0') * 10 + (p[1] - '0');
}

constexpr bool is_leap_year(int y) noexcept { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int year, int month) noexcept {
  static constexpr std::array<int, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : days[static_cast<std::size_t>(month - 1)];
}

}  // namespace

literal_status parse_integer(std::string_view text, std::int32_t& out) noexcept {
  return parse_integer_as(text, out);
}

literal_status parse_integer(std::string_view text, std::int64_t& out) noexcept {
  return parse_integer_as(text, out);
}

literal_status parse_double(std::string_view text, double& out) noexcept {
  const char* p = text.data();
  const char* const end = p + text.size();
  const char* number = p;
  if (p != end && (*p == '+' || *p == '-')) {
    if (*p == '+') ++number;
    ++p;
  }
  // Check the grammar first: std::from_chars would also take "inf", "nan".
  // The digits are gathered on the way, for the exact short case below.
  std::size_t digits = 0;
  std::size_t fraction_digits = 0;
  std::uint64_t mantissa = 0;  // wraps past 19 digits; only used up to 15
  while (p != end && is_digit(*p))
    mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0'), ++digits;
  if (p != end && *p == '.') {
    ++p;
    while (p != end && is_digit(*p)) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
      ++digits;
      ++fraction_digits;
    }
  }
  if (digits == 0) return literal_status::malformed;
  bool exponent = false;
  if (p != end && (*p == 'e' || *p == 'E')) {
    exponent = true;
    ++p;
    if (p != end && (*p == '+' || *p == '-')) ++p;
    if (p == end || !is_digit(*p)) return literal_status::malformed;
    while (p != end && is_digit(*p)) ++p;
  }
  if (p != end) return literal_status::malformed;
  if (!exponent && digits <= detail::max_short_decimal_digits) {
    out = detail::exact_short_decimal(mantissa, fraction_digits, *text.data() == '-');
    return literal_status::ok;
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(number, end, v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return literal_status::out_of_range;
  if (ec != std::errc{} || ptr != end || !std::isfinite(v)) return literal_status::malformed;
  out = v;
  return literal_status::ok;
}

bool is_valid(const date_time& t) noexcept {
  return t.year >= 0 && t.year <= 9999 && t.month >= 1 && t.month <= 12 && t.day >= 1 &&
         t.day <= days_in_month(t.year, t.month) && t.hour <= 23 && t.minute <= 59 &&
         t.second <= 60 && t.microsecond <= 999'999;
}

bool parse_date_time(std::string_view text, date_time& out) noexcept {
  // A fraction of a second: '.' and 1 to 6 digits, after either form.
  std::uint32_t microsecond = 0;
  if (const auto dot = text.find('.'); dot != std::string_view::npos) {
    const std::string_view digits = text.substr(dot + 1);
    if (digits.empty() || digits.size() > 6) return false;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      microsecond = microsecond * 10 + static_cast<std::uint32_t>(c - '0');
    }
    for (std::size_t i = digits.size(); i < 6; ++i) microsecond *= 10;
    text = text.substr(0, dot);
  }
  // The fields of the three forms: XML-RPC's YYYYMMDDTHH:MM:SS (17 chars),
  // ISO 8601's basic YYYYMMDDTHHMMSS (15, which some clients send) and
  // extended YYYY-MM-DDTHH:MM:SS (19). The date's and the time's
  // separators are not mixed across forms.
  bool extended = false;    // '-' in the date
  bool time_colons = true;  // ':' in the time
  if (text.size() == 19) {
    extended = true;
    if (text[4] != '-' || text[7] != '-') return false;
  } else if (text.size() == 15) {
    time_colons = false;
  } else if (text.size() != 17) {
    return false;
  }
  const char* s = text.data();
  const std::size_t t_at = extended ? 10 : 8;
  const std::size_t step = time_colons ? 3 : 2;  // from one time field to the next
  if (s[t_at] != 'T') return false;
  if (time_colons && (s[t_at + 3] != ':' || s[t_at + 6] != ':')) return false;
  const int century = two_digits(s);
  const int year_in_century = two_digits(s + 2);
  const int month = two_digits(s + (extended ? 5 : 4));
  const int day = two_digits(s + (extended ? 8 : 6));
  const int hour = two_digits(s + t_at + 1);
  const int minute = two_digits(s + t_at + 1 + step);
  const int second = two_digits(s + t_at + 1 + 2 * step);
  if (century < 0 || year_in_century < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 ||
      second < 0) {
    return false;
  }
  date_time t;
  t.year = static_cast<std::int16_t>(century * 100 + year_in_century);
  t.month = static_cast<std::uint8_t>(month);
  t.day = static_cast<std::uint8_t>(day);
  t.hour = static_cast<std::uint8_t>(hour);
  t.minute = static_cast<std::uint8_t>(minute);
  t.second = static_cast<std::uint8_t>(second);
  t.microsecond = microsecond;
  if (!is_valid(t)) return false;
  out = t;
  return true;
}

namespace {

constexpr auto powers_of_10 = [] {
  std::array<std::uint64_t, 20> p{1};
  for (std::size_t i = 1; i < p.size(); ++i) p[i] = p[i - 1] * 10;
  return p;
}();

// How many decimal digits v has (1 for 0): log10 from the bit width, then
// one comparison.
int decimal_digits(std::uint64_t v) noexcept {
  const int estimate = static_cast<int>((std::bit_width(v) * 1233) >> 12);
  return estimate + (v >= powers_of_10[estimate] ? 1 : 0) + (v == 0 ? 1 : 0);
}

// The eight decimal digits of v < 10^8 (leading zeros included) as ASCII in
// one word, the first digit in the lowest byte, without a division: v is
// split into two halves of four digits, each half into two pairs, each
// pair into two digits, every lane at once; a multiplication and a shift
// stand for each division by 10^4, 100 and 10 (exact in these ranges:
// 10486 / 2^20 for 100 below 10^4, 103 / 2^10 for 10 below 100).
std::uint64_t eight_digits(std::uint64_t v) noexcept {
  const std::uint64_t halves = (v / 10000) | ((v % 10000) << 32);
  const std::uint64_t hundreds = ((halves * 10486) >> 20) & 0x0000007F0000007FU;
  const std::uint64_t pairs = hundreds | ((halves - 100 * hundreds) << 16);
  const std::uint64_t tens = ((pairs * 103) >> 10) & 0x000F000F000F000FU;
  const std::uint64_t digits = tens | ((pairs - 10 * tens) << 8);
  return digits + 0x3030303030303030U;
}

// The last n (1..8) of v's eight digits at p, as one 8-byte store.
char* put_digits(char* p, std::uint64_t v, int n) noexcept {
  const std::uint64_t word = eight_digits(v) >> (8 * (8 - n));
  std::memcpy(p, &word, 8);
  return p + n;
}

// v's n digits (n = decimal_digits(v)) at p, eight at a time: the first
// group has what is left over (1 to 8 digits), the others eight each.
char* put_decimal(char* p, std::uint64_t v, int n) noexcept {
  if (n <= 8) return put_digits(p, v, n);
  if (n <= 16) {
    p = put_digits(p, v / 100'000'000, n - 8);
    return put_digits(p, v % 100'000'000, 8);
  }
  constexpr std::uint64_t e16 = 10'000'000'000'000'000;
  p = put_digits(p, v / e16, n - 16);
  p = put_digits(p, v % e16 / 100'000'000, 8);
  return put_digits(p, v % 100'000'000, 8);
}

}  // namespace

char* detail::write_unsigned(char* at, std::uint64_t v) noexcept {
  return put_decimal(at, v, decimal_digits(v));
}

char* detail::write_integer(char* at, std::int64_t i) noexcept {
  std::uint64_t magnitude = static_cast<std::uint64_t>(i);
  if (i < 0) {
    *at++ = '-';
    magnitude = 0 - magnitude;  // also right for INT64_MIN
  }
  return put_decimal(at, magnitude, decimal_digits(magnitude));
}

namespace {

// The shortest digits of a double that is exactly a short decimal: 0 <
// magnitude < 2^53 is m * 2^e with m odd, and for e = -f < 0 that is
// m * 5^f / 10^f, so when m * 5^f (or, for e >= 0, the integer itself) has
// at most 15 digits, it is the whole decimal expansion. No other decimal of
// at most 15 significant digits rounds to the same double (DBL_DIG: such
// decimals come back from a double unchanged), so no shorter text reads
// back as it: these are the digits Dragonbox finds, without its 128-bit
// arithmetic (about 20 instructions here against its 180).
// Integers, halves, quarters, 0.15625: what binary floating point holds
// exactly, and what programs often send.
bool exact_short_digits(double magnitude, std::uint64_t& significand, int& exponent) noexcept {
  constexpr std::uint64_t limit = 1'000'000'000'000'000;  // 10^15
  static constexpr auto powers_of_5 = [] {                // 5^0 .. 5^21, the last below 10^15
    std::array<std::uint64_t, 22> p{1};
    for (std::size_t i = 1; i < p.size(); ++i) p[i] = p[i - 1] * 5;
    return p;
  }();
  static constexpr auto largest_m = [] {  // m * 5^f < 10^15 while m <= largest_m[f]
    std::array<std::uint64_t, powers_of_5.size()> m{};
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = (limit - 1) / powers_of_5[i];
    return m;
  }();
  const auto bits = std::bit_cast<std::uint64_t>(magnitude);
  const int biased = static_cast<int>(bits >> 52);
  if (biased == 0) return false;  // subnormal
  std::uint64_t m = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
  const int zeros = std::countr_zero(m);
  m >>= zeros;
  const int e = biased - 1075 + zeros;  // magnitude = m * 2^e
  if (e >= 0) {
    m <<= e;  // below 2^53 (the caller's range)
    if (m >= limit) return false;
    significand = m;
    exponent = 0;
    return true;
  }
  const int f = -e;
  if (f >= static_cast<int>(powers_of_5.size()) || m > largest_m[f]) return false;
  significand = m * powers_of_5[f];
  exponent = e;
  return true;
}

}  // namespace

char* detail::write_double(char* at, double d) noexcept {
  if (!std::isfinite(d)) return nullptr;
  // Plain decimal where it stays short (the spec's grammar has no exponent),
  // the exponent form outside; both are the shortest that round-trip.
  const double magnitude = std::fabs(d);
  const bool plain = magnitude == 0 || (magnitude >= 1e-7 && magnitude < 1e21);
  // From 2^53 up a plain double is an integer, which std::to_chars writes
  // exactly (its digits, not the shortest ones padded with zeros). At most
  // 22 digits (below 1e21) and ".0", or 17 digits, a point and "e+308", and
  // a sign.
  if (magnitude == 0 || magnitude >= 0x1p53) {
    char* const end = at + max_double_chars;
    char* p = plain ? std::to_chars(at, end, d, std::chars_format::fixed).ptr
                    : std::to_chars(at, end, d, std::chars_format::scientific).ptr;
    if (plain && std::string_view(at, static_cast<std::size_t>(p - at)).find('.') ==
                     std::string_view::npos) {
      *p++ = '.';
      *p++ = '0';
    }
    return p;
  }
  // Elsewhere the same text, laid out from the shortest digits alone. A
  // double that is exactly a short decimal has them at hand (all such
  // doubles lie in the plain range); for the rest, fmt's Dragonbox (in its
  // detail namespace: fmt 9 has no public call that gives only the digits)
  // finds them in a third of std::to_chars's time, which was a fifth of a
  // large JSON-RPC echo's CPU (docs/benchmarks.md). A unit test compares the
  // text with std::to_chars's over many doubles of both kinds.
  std::uint64_t significand = 0;
  int exponent10 = 0;
  if (!exact_short_digits(magnitude, significand, exponent10)) {
    const auto decimal = fmt::detail::dragonbox::to_decimal(magnitude);
    significand = decimal.significand;
    exponent10 = decimal.exponent;
  }
  const int n = decimal_digits(significand);  // at most 17
  const int point = n + exponent10;           // digits before the decimal point
  char* p = at;
  const auto zeros = [&p](int count) {  // at most 16 (below 2^53, 16 digits)
    std::memset(p, '0', 16);
    p += count;
  };
  if (d < 0) *p++ = '-';
  if (plain) {
    // The digits are written where they go: copying them from a buffer
    // just written (as this did) waits on those byte stores, and perf put
    // most of the time of writing a double on that wait. The text is at
    // most 26 characters: a sign, "0.", six zeros and 17 digits; or a
    // sign, 16 digits and ".0". Zeros are set 16 at a time from at most 17
    // characters in, digits moved 16 at a time to at most 18 in: the room
    // (max_double_chars) covers both.
    if (point <= 0) {
      *p++ = '0';
      *p++ = '.';
      zeros(-point);
      return put_decimal(p, significand, n);
    }
    if (point >= n) {
      p = put_decimal(p, significand, n);
      zeros(point - n);
      *p++ = '.';
      *p++ = '0';
      return p;
    }
    // A point among the digits: the digits, then those after the point one
    // place on (at most 16: the 16 bytes from the point copied through a
    // register). The copy waits on the digits' stores, as the loop of byte
    // copies it replaced did; but the compiler had made that loop a call to
    // memmove, a twentieth of a large JSON-RPC echo's server time.
    put_decimal(p, significand, n);
    char after[16];
    std::memcpy(after, p + point, 16);
    std::memcpy(p + point + 1, after, 16);
    p[point] = '.';
    return p + n + 1;
  }
  // The exponent form: a sign, 17 digits, a point and "e-324" at most.
  char digits[32];
  put_decimal(digits, significand, n);
  *p++ = digits[0];
  if (n > 1) {
    *p++ = '.';
    std::memcpy(p, digits + 1, static_cast<std::size_t>(n - 1));
    p += n - 1;
  }
  const int exponent = point - 1;
  *p++ = 'e';
  *p++ = exponent < 0 ? '-' : '+';
  if (std::abs(exponent) < 10) *p++ = '0';  // at least two digits, as printf's %e
  return std::to_chars(p, at + max_double_chars, std::abs(exponent)).ptr;
}

bool append_double(std::string& out, double d) {
  char text[detail::max_double_chars];
  const char* end = detail::write_double(text, d);
  if (end == nullptr) return false;
  out.append(text, static_cast<std::size_t>(end - text));
  return true;
}

char* detail::write_date_time(char* p, const date_time& t, date_format format) noexcept {
  const bool extended = format == date_format::extended;
  auto put2 = [&p](int v) {
    *p++ = static_cast<char>('0' + v / 10);
    *p++ = static_cast<char>('0' + v % 10);
  };
  put2(t.year / 100);
  put2(t.year % 100);
  if (extended) *p++ = '-';
  put2(t.month);
  if (extended) *p++ = '-';
  put2(t.day);
  *p++ = 'T';
  put2(t.hour);
  *p++ = ':';
  put2(t.minute);
  *p++ = ':';
  put2(t.second);
  if (t.microsecond != 0) {
    *p++ = '.';
    std::uint32_t f = t.microsecond;
    for (int i = 5; i >= 0; --i) {
      p[i] = static_cast<char>('0' + f % 10);
      f /= 10;
    }
    p += 6;
  }
  return p;
}

void append_date_time(std::string& out, const date_time& t, date_format format) {
  char text[detail::max_date_time_chars];
  const char* end = detail::write_date_time(text, t, format);
  out.append(text, static_cast<std::size_t>(end - text));
}

}  // namespace rapidrpc

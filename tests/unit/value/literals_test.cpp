// The scalar literals (include/rapidrpc/literals.hpp) that the codecs, the
// client and the command line share.
#include <rapidrpc/literals.hpp>

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rapidrpc {
namespace {

TEST(Literals, IntegersTakeASignAndDigitsOnly) {
  std::int32_t i = 0;
  EXPECT_EQ(parse_integer("+17", i), literal_status::ok);
  EXPECT_EQ(i, 17);
  EXPECT_EQ(parse_integer("-2147483648", i), literal_status::ok);
  EXPECT_EQ(i, -2147483648);
  EXPECT_EQ(parse_integer("0002147483647", i), literal_status::ok);
  EXPECT_EQ(i, 2147483647);
  EXPECT_EQ(parse_integer("2147483648", i), literal_status::out_of_range);
  EXPECT_EQ(parse_integer("2147483648x", i), literal_status::malformed);
  EXPECT_EQ(parse_integer("+-1", i), literal_status::malformed);
  EXPECT_EQ(parse_integer("-+1", i), literal_status::malformed);
  EXPECT_EQ(parse_integer("", i), literal_status::malformed);
  EXPECT_EQ(i, 2147483647);  // untouched on failure
  std::int64_t l = 0;
  EXPECT_EQ(parse_integer("-9223372036854775808", l), literal_status::ok);
  EXPECT_EQ(l, INT64_MIN);
  EXPECT_EQ(parse_integer("9223372036854775808", l), literal_status::out_of_range);
}

// What an integer literal means, by std::from_chars: an optional sign and
// digits, nothing else.
template <class Int>
std::optional<std::pair<literal_status, Int>> reference_integer(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
  if (digits.empty() || digits[0] < '0' || digits[0] > '9')
    return std::pair{literal_status::malformed, Int{}};
  const char* from = text[0] == '+' ? text.data() + 1 : text.data();
  Int v{};
  auto [ptr, ec] = std::from_chars(from, text.data() + text.size(), v);
  if (ptr != text.data() + text.size()) return std::pair{literal_status::malformed, Int{}};
  if (ec == std::errc::result_out_of_range) return std::pair{literal_status::out_of_range, Int{}};
  return std::pair{literal_status::ok, v};
}

template <class Int>
void integers_read_as_from_chars_does() {
  std::mt19937_64 rng(7);
  const std::string junk = "x+- .e";
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    switch (rng() % 4) {
      case 0:
        text += '-';
        break;
      case 1:
        text += '+';
        break;
      default:
        break;
    }
    const std::size_t zeros = rng() % 8 == 0 ? rng() % 3 : 0;
    text.append(zeros, '0');
    const std::size_t n = rng() % 22;
    for (std::size_t k = 0; k < n; ++k) text += static_cast<char>('0' + rng() % 10);
    if (rng() % 16 == 0) text.insert(rng() % (text.size() + 1), 1, junk[rng() % junk.size()]);
    if (rng() % 8 == 0) {  // near the limits
      const auto edge =
          rng() % 2 ? std::numeric_limits<Int>::max() : std::numeric_limits<Int>::min();
      text = std::to_string(edge + static_cast<Int>(rng() % 2 ? 0 : (edge > 0 ? -1 : 1)));
      if (rng() % 2) text += std::to_string(rng() % 10);
    }
    const auto expected = reference_integer<Int>(text);
    Int got = 42;
    const literal_status status = parse_integer(text, got);
    ASSERT_EQ(status, expected->first) << text;
    if (status == literal_status::ok)
      ASSERT_EQ(got, expected->second) << text;
    else
      ASSERT_EQ(got, 42) << text;
  }
}

TEST(Literals, IntegersReadAsFromCharsReadsThem) {
  integers_read_as_from_chars_does<std::int32_t>();
  integers_read_as_from_chars_does<std::int64_t>();
}

TEST(Literals, DoublesFollowTheDecimalGrammarWithAnOptionalExponent) {
  double d = 0;
  EXPECT_EQ(parse_double("-1.5e+3", d), literal_status::ok);
  EXPECT_EQ(d, -1500.0);
  EXPECT_EQ(parse_double("+.25", d), literal_status::ok);
  EXPECT_EQ(d, 0.25);
  EXPECT_EQ(parse_double("5e-324", d), literal_status::ok);
  EXPECT_GT(d, 0.0);
  EXPECT_EQ(parse_double("1.7976931348623157e308", d), literal_status::ok);
  EXPECT_EQ(parse_double("1.7976931348623159e308", d), literal_status::out_of_range);
  EXPECT_EQ(parse_double("+inf", d), literal_status::malformed);
  EXPECT_EQ(parse_double("1e+-3", d), literal_status::malformed);
  EXPECT_EQ(parse_double("+", d), literal_status::malformed);
}

TEST(Literals, DatesValidateEveryField) {
  date_time t;
  EXPECT_TRUE(parse_date_time("20000229T23:59:60", t));
  EXPECT_EQ(t, (date_time{2000, 2, 29, 23, 59, 60}));
  EXPECT_TRUE(parse_date_time("1999-12-31T00:00:00", t));
  EXPECT_EQ(t, (date_time{1999, 12, 31, 0, 0, 0}));
  EXPECT_FALSE(parse_date_time("21000229T00:00:00", t));  // 2100 is not a leap year
  EXPECT_FALSE(parse_date_time("1999-12-31T00:00", t));
  EXPECT_FALSE(parse_date_time("1999-1231T00:00:00", t));
  EXPECT_FALSE(parse_date_time("199912-31T00:00:00", t));
  EXPECT_FALSE(parse_date_time("19991231 00:00:00", t));
  EXPECT_FALSE(parse_date_time("19991231T00-00-00", t));
  for (int month = 1; month <= 12; ++month) {
    static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    char text[32];
    std::snprintf(text, sizeof text, "2023%02d%02dT00:00:00", month, days[month - 1]);
    EXPECT_TRUE(parse_date_time(text, t)) << text;
    std::snprintf(text, sizeof text, "2023%02d%02dT00:00:00", month, days[month - 1] + 1);
    EXPECT_FALSE(parse_date_time(text, t)) << text;
  }
  std::string out;
  append_date_time(out, date_time{7, 3, 4, 5, 6, 7});
  EXPECT_EQ(out, "00070304T05:06:07");
  append_date_time(out, date_time{2024, 1, 31, 12, 30, 0}, date_format::extended);
  EXPECT_EQ(out, "00070304T05:06:072024-01-31T12:30:00");
}

TEST(Literals, DatesKeepAFractionToTheMicrosecond) {
  // xmlrpc-c writes six digits; fewer are tenths, hundredths, ...
  date_time t;
  ASSERT_TRUE(parse_date_time("19980717T14:08:55.123456", t));
  EXPECT_EQ(t, (date_time{1998, 7, 17, 14, 8, 55, 123456}));
  ASSERT_TRUE(parse_date_time("1998-07-17T14:08:55.5", t));
  EXPECT_EQ(t, (date_time{1998, 7, 17, 14, 8, 55, 500000}));
  ASSERT_TRUE(parse_date_time("19980717T14:08:55.000001", t));
  EXPECT_EQ(t.microsecond, 1u);
  ASSERT_TRUE(parse_date_time("19980717T14:08:55.000000", t));
  EXPECT_EQ(t, (date_time{1998, 7, 17, 14, 8, 55, 0}));
  // Time zones are refused, not dropped; so are fractions that cannot be
  // kept exactly, and anything that is not a fraction.
  for (const char* text :
       {"19980717T14:08:55Z", "19980717T14:08:55+01:00", "19980717T14:08:55.123Z",
        "19980717T14:08:55.123+0100", "19980717T14:08:55.1234567", "19980717T14:08:55.",
        "19980717T14:08:55.12a", "19980717T14:08:55,5", "19980717T14:08.5:55",
        "19980717.5T14:08:55", ".5", "1998-07-17", "19980717", "19980717T14:08:55.-1"}) {
    EXPECT_FALSE(parse_date_time(text, t)) << text;
  }
  std::string out;
  append_date_time(out, date_time{1998, 7, 17, 14, 8, 55, 123456});
  EXPECT_EQ(out, "19980717T14:08:55.123456");
  out.clear();
  append_date_time(out, date_time{1998, 7, 17, 14, 8, 55, 50}, date_format::extended);
  EXPECT_EQ(out, "1998-07-17T14:08:55.000050");
  EXPECT_FALSE(is_valid(date_time{1998, 7, 17, 14, 8, 55, 1000000}));
}

TEST(Literals, DatesReadBackInBothForms) {
  for (const date_time t : {date_time{0, 1, 1, 0, 0, 0}, date_time{9999, 12, 31, 23, 59, 60},
                            date_time{2024, 2, 29, 7, 8, 9}, date_time{2024, 2, 29, 7, 8, 9, 1},
                            date_time{9999, 12, 31, 23, 59, 60, 999999}}) {
    ASSERT_TRUE(is_valid(t));
    for (const date_format f : {date_format::basic, date_format::extended}) {
      std::string text;
      append_date_time(text, t, f);
      EXPECT_EQ(text.size(), (f == date_format::basic ? 17u : 19u) + (t.microsecond ? 7u : 0u))
          << text;
      date_time back;
      ASSERT_TRUE(parse_date_time(text, back)) << text;
      EXPECT_EQ(back, t) << text;
    }
  }
  EXPECT_FALSE(is_valid(date_time{2023, 2, 29, 0, 0, 0}));
  EXPECT_FALSE(is_valid(date_time{2024, 13, 1, 0, 0, 0}));
  EXPECT_FALSE(is_valid(date_time{2024, 1, 1, 24, 0, 0}));
  EXPECT_FALSE(is_valid(date_time{-1, 1, 1, 0, 0, 0}));
}

TEST(Literals, Base64IsStrictButSkipsWhitespace) {
  auto decode = [](std::string_view s) -> std::optional<std::string> {
    std::vector<std::uint8_t> out;
    if (!decode_base64(s, out)) return std::nullopt;
    return std::string(out.begin(), out.end());
  };
  EXPECT_EQ(decode(""), "");
  EXPECT_EQ(decode(" \r\n\t"), "");
  EXPECT_EQ(decode("YQ=="), "a");
  EXPECT_EQ(decode("YWI="), "ab");
  EXPECT_EQ(decode("YWJj"), "abc");
  EXPECT_EQ(decode("Y W\nJ j\r\n"), "abc");
  EXPECT_EQ(decode("YQ = =\n"), "a");
  EXPECT_EQ(decode("+/+/"), "\xfb\xff\xbf");
  EXPECT_EQ(decode("YR=="), std::nullopt);  // unused bits set
  EXPECT_EQ(decode("YWJ="), std::nullopt);
  EXPECT_EQ(decode("YQ="), std::nullopt);
  EXPECT_EQ(decode("YQ"), std::nullopt);
  EXPECT_EQ(decode("YQ==YQ=="), std::nullopt);
  EXPECT_EQ(decode("Y==="), std::nullopt);
  EXPECT_EQ(decode("===="), std::nullopt);
  std::string out;
  const std::uint8_t data[] = {0xfb, 0xff, 0xbf, 0x00};
  append_base64(out, data);
  EXPECT_EQ(out, "+/+/AA==");
  out.clear();
  append_base64(out, std::string_view("Aladdin:open sesame"));
  EXPECT_EQ(out, "QWxhZGRpbjpvcGVuIHNlc2FtZQ==");  // RFC 7617's example
}

TEST(Literals, Base64RoundTripsEveryLengthAndByte) {
  std::vector<std::uint8_t> data;
  for (int n = 0; n < 300; ++n) {
    std::string text;
    append_base64(text, data);
    EXPECT_EQ(text.size(), (data.size() + 2) / 3 * 4);
    std::vector<std::uint8_t> back;
    ASSERT_TRUE(decode_base64(text, back)) << text;
    EXPECT_EQ(back, data);
    data.push_back(static_cast<std::uint8_t>(n * 37 + 11));
  }
}

TEST(Literals, DoublesAreShortestAndReadBackExactly) {
  const auto text = [](double d) {
    std::string out;
    EXPECT_TRUE(append_double(out, d));
    return out;
  };
  EXPECT_EQ(text(0.1), "0.1");
  EXPECT_EQ(text(3.0), "3.0");
  EXPECT_EQ(text(-0.0), "-0.0");
  EXPECT_EQ(text(1000.0), "1000.0");
  EXPECT_EQ(text(2.5e-8), "2.5e-08");
  EXPECT_EQ(text(1e100), "1e+100");
  std::string out = "x";
  EXPECT_FALSE(append_double(out, INFINITY));
  EXPECT_FALSE(append_double(out, NAN));
  EXPECT_EQ(out, "x");
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    const std::string t = text(d);
    double back = 0;
    ASSERT_EQ(parse_double(t, back), literal_status::ok) << t;
    EXPECT_EQ(std::memcmp(&back, &d, sizeof d), 0) << t;
    EXPECT_NE(t.find_first_of(".e"), std::string::npos) << t;
  }
}

// Short decimals take a path of their own (a division of two exact doubles);
// every text must still read as std::from_chars reads it, the nearest double.
TEST(Literals, ShortDecimalsReadAsStdFromCharsReadsThem) {
  std::vector<std::string> cases = {"0",
                                    "-0",
                                    "+0.0",
                                    "-0.0",
                                    ".5",
                                    "5.",
                                    "1.5",
                                    "-1.5",
                                    "+2.25",
                                    "0.1",
                                    "0.3",
                                    "999999999999999",
                                    "0.000000000000001",
                                    "123456789012345",
                                    "1234567890.12345",
                                    "9007199254740993",
                                    "0.1234567890123456",
                                    "00000000000000.5"};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300000; ++i) {
    const std::uint64_t bits = rng();
    const int digits = 1 + static_cast<int>(bits % 17);  // up to 17: past the short case
    const int point = static_cast<int>((bits >> 8) % (digits + 1));  // digits before '.'
    std::string t = (bits >> 20) % 3 == 0 ? "-" : "";
    for (int d = 0; d < digits; ++d) {
      if (d == point) t += '.';
      t += static_cast<char>('0' + (rng() % 10));
    }
    cases.push_back(t);
  }
  for (const std::string& t : cases) {
    double got = 0;
    ASSERT_EQ(parse_double(t, got), literal_status::ok) << t;
    double want = 0;
    const char* from = t.data() + (t[0] == '+' ? 1 : 0);
    const auto r = std::from_chars(from, t.data() + t.size(), want);
    ASSERT_EQ(r.ptr, t.data() + t.size()) << t;
    ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0) << t << ": " << got << " vs " << want;
  }
}

// append_double lays out Dragonbox's shortest digits itself; the text must be
// std::to_chars's, byte for byte, on both sides of every boundary it has.
TEST(Literals, DoublesAreWrittenAsStdToCharsWritesThem) {
  const auto reference = [](double d) {
    const double magnitude = std::fabs(d);
    const bool plain = magnitude == 0 || (magnitude >= 1e-7 && magnitude < 1e21);
    char buf[400];
    const auto r = plain ? std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string t(buf, r.ptr);
    if (plain && t.find('.') == std::string::npos) t += ".0";
    return t;
  };
  std::vector<double> cases = {0.0,
                               -0.0,
                               1.0,
                               -1.0,
                               0.5,
                               1e-7,
                               9.999e-8,
                               1e21,
                               9.99e20,
                               0x1p53,
                               0x1p53 - 1,
                               0x1p53 + 2,
                               1e16,
                               123.456,
                               1e-5,
                               5e-324,
                               1.7976931348623157e308};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-9, 23);
  for (int i = 0; i < 200000; ++i) {
    // Random bits (mostly the exponent form), random magnitudes across the
    // plain range, and short decimals as people send them.
    const std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isfinite(d)) cases.push_back(d);
    cases.push_back(std::pow(10.0, exponent(rng)) * (bits & 1 ? -1 : 1));
    cases.push_back(static_cast<double>(static_cast<std::int64_t>(bits % 2000001) - 1000000) /
                    std::pow(10.0, static_cast<int>(bits >> 60)));
    // Exact short decimals (an integer over a power of two) and the doubles
    // next to them, on both sides of 15 digits.
    const double dyadic = std::ldexp(static_cast<double>(bits >> (11 + (bits & 31))),
                                     -static_cast<int>((bits >> 5) % 64));
    cases.push_back(dyadic);
    cases.push_back(std::nextafter(dyadic, 0.0));
    cases.push_back(std::nextafter(dyadic, 1e300));
  }
  for (std::uint64_t m = 1; m < 4096; m += 2)  // m * 5^f just below and above 10^15
    for (int f = 1; f <= 22; ++f) cases.push_back(std::ldexp(static_cast<double>(m), -f));
  for (double v = 999'999'999'999'990; v <= 1'000'000'000'000'010; ++v) cases.push_back(v);
  for (double d : cases) {
    std::string got;
    ASSERT_TRUE(append_double(got, d));
    ASSERT_EQ(got, reference(d)) << std::hexfloat << d;
  }
}

}  // namespace
}  // namespace rapidrpc

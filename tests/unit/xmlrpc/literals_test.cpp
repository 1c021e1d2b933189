// The scalar literal functions shared by the parser and the writers.
#include "xmlrpc/literals.hpp"

#include <gtest/gtest.h>

namespace rapidrpc::xmlrpc::detail {
namespace {

TEST(XmlrpcLiterals, IntegersTakeASignAndDigitsOnly) {
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

TEST(XmlrpcLiterals, DoublesFollowTheDecimalGrammarWithAnOptionalExponent) {
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

TEST(XmlrpcLiterals, DatesValidateEveryField) {
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
}

TEST(XmlrpcLiterals, Base64IsStrictButSkipsWhitespace) {
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
}

}  // namespace
}  // namespace rapidrpc::xmlrpc::detail

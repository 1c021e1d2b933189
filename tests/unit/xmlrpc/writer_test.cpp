// The writers: exact output, round trips through the parser, escaping, and
// the values XML cannot carry.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace rapidrpc::xmlrpc {
namespace {

std::string value_xml(const value& v) {
  std::string out;
  write_value(out, v);
  return out;
}

// write_response, then parse_response: the value that comes back.
value round_trip(const value& v) {
  std::string doc;
  write_response(doc, v);
  const auto r = parse_response(doc);
  if (const auto* e = std::get_if<parse_error>(&r)) {
    ADD_FAILURE() << e->message << "\n" << doc;
    return {};
  }
  return std::get<value>(std::get<outcome>(r));
}

TEST(XmlrpcWriter, WritesEachTypeCompactly) {
  EXPECT_EQ(value_xml(nil), "<value><nil/></value>");
  EXPECT_EQ(value_xml(-42), "<value><int>-42</int></value>");
  EXPECT_EQ(value_xml(std::int64_t{1} << 40), "<value><i8>1099511627776</i8></value>");
  EXPECT_EQ(value_xml(true), "<value><boolean>1</boolean></value>");
  EXPECT_EQ(value_xml(false), "<value><boolean>0</boolean></value>");
  EXPECT_EQ(value_xml(2.5), "<value><double>2.5</double></value>");
  EXPECT_EQ(value_xml("a b"), "<value><string>a b</string></value>");
  EXPECT_EQ(value_xml(""), "<value><string></string></value>");
  EXPECT_EQ(value_xml(date_time{2024, 2, 29, 1, 2, 3}),
            "<value><dateTime.iso8601>20240229T01:02:03</dateTime.iso8601></value>");
  EXPECT_EQ(value_xml(date_time{1998, 7, 17, 14, 8, 55, 123456}),
            "<value><dateTime.iso8601>19980717T14:08:55.123456</dateTime.iso8601></value>");
  EXPECT_EQ(value_xml(bytes("hello")), "<value><base64>aGVsbG8=</base64></value>");
  EXPECT_EQ(value_xml(array{}), "<value><array><data></data></array></value>");
  EXPECT_EQ(value_xml(array{1, "x"}),
            "<value><array><data><value><int>1</int></value><value><string>x</string></value>"
            "</data></array></value>");
  EXPECT_EQ(value_xml(structure{}), "<value><struct></struct></value>");
  EXPECT_EQ(value_xml(structure{{"b", 2}, {"a", 1}}),  // members in the order inserted
            "<value><struct><member><name>b</name><value><int>2</int></value></member>"
            "<member><name>a</name><value><int>1</int></value></member></struct></value>");
}

TEST(XmlrpcWriter, WritesWholeDocuments) {
  std::string out;
  write_call(out, "sample.add", array{1, 2});
  EXPECT_EQ(out,
            "<?xml version=\"1.0\"?>\n<methodCall><methodName>sample.add</methodName><params>"
            "<param><value><int>1</int></value></param><param><value><int>2</int></value></param>"
            "</params></methodCall>");
  out.clear();
  write_call(out, "system.listMethods", {});
  EXPECT_EQ(out,
            "<?xml version=\"1.0\"?>\n<methodCall><methodName>system.listMethods</methodName>"
            "<params></params></methodCall>");
  out.clear();
  write_response(out, "ok");
  EXPECT_EQ(out,
            "<?xml version=\"1.0\"?>\n<methodResponse><params><param><value><string>ok</string>"
            "</value></param></params></methodResponse>");
  out.clear();
  write_fault(out, -32601, "no <such> method");
  EXPECT_EQ(
      out,
      "<?xml version=\"1.0\"?>\n<methodResponse><fault><value><struct><member><name>faultCode"
      "</name><value><int>-32601</int></value></member><member><name>faultString</name><value>"
      "<string>no &lt;such&gt; method</string></value></member></struct></value></fault>"
      "</methodResponse>");
}

TEST(XmlrpcWriter, AppendsToWhatIsAlreadyThere) {
  std::string out = "HTTP/1.1 200 OK\r\n\r\n";
  write_response(out, 1);
  EXPECT_TRUE(out.starts_with("HTTP/1.1 200 OK\r\n\r\n<?xml"));
  EXPECT_TRUE(out.ends_with("</methodResponse>"));
}

TEST(XmlrpcWriter, EveryTypeRoundTrips) {
  const std::vector<value> values = {
      nil,
      0,
      std::numeric_limits<std::int32_t>::min(),
      std::numeric_limits<std::int32_t>::max(),
      std::int64_t{0},
      std::numeric_limits<std::int64_t>::min(),
      std::numeric_limits<std::int64_t>::max(),
      true,
      false,
      0.0,
      -1.25,
      "text",
      "",
      date_time{},
      date_time{0, 1, 1, 0, 0, 0},
      date_time{9999, 12, 31, 23, 59, 60},
      date_time{2000, 2, 29, 12, 30, 45},
      bytes(),
      bytes("\x00\x01\xfe\xff"),
      array{},
      array{nil, 1, std::int64_t{2}, "three", array{array{}}, structure{}},
      structure{},
      structure{{"", 1}, {"nested", structure{{"deeper", array{bytes("x"), date_time{}}}}}},
  };
  for (const value& v : values) {
    SCOPED_TRACE(test::describe(v));
    EXPECT_EQ(round_trip(v), v);
  }
}

TEST(XmlrpcWriter, CallsAndFaultsRoundTrip) {
  std::string doc;
  const array params{1, "two", array{3.5}, structure{{"k", nil}}};
  write_call(doc, "a.b:c/d_e", params);
  const auto call = parse_call(doc);
  ASSERT_TRUE(std::holds_alternative<method_call>(call)) << doc;
  EXPECT_EQ(std::get<method_call>(call).method, "a.b:c/d_e");
  EXPECT_EQ(std::get<method_call>(call).params, params);

  doc.clear();
  write_fault(doc, std::numeric_limits<std::int32_t>::min(), "went <wrong> & \r\n stayed");
  const auto r = parse_response(doc);
  ASSERT_TRUE(std::holds_alternative<outcome>(r)) << doc;
  const auto& f = std::get<fault>(std::get<outcome>(r));
  EXPECT_EQ(f.code(), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(f.message(), "went <wrong> & \r\n stayed");
}

TEST(XmlrpcWriter, EscapedTextRoundTrips) {
  const std::vector<std::string> texts = {
      "<&>",
      "&amp; is not unescaped twice",
      "]]> ends CDATA",
      "carriage\rreturn",
      "crlf\r\n and lf\n",
      "\r",
      "\t tab",
      "  leading and trailing  ",
      "\n",
      "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",  // Latin-1 supplement, CJK
      "\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbd",     // astral plane: U+1F600, U+10FFFD
      "\xef\xbf\xbd\xee\x80\x80",              // U+FFFD, U+E000
      "'quotes' \"double\"",
  };
  for (const std::string& t : texts) {
    SCOPED_TRACE(to_debug_string(value(t)));
    EXPECT_EQ(round_trip(t), value(t));
    EXPECT_EQ(round_trip(structure{{t, t}}), value(structure{{t, t}}));
  }
  EXPECT_EQ(value_xml("a\rb<c>&"), "<value><string>a&#13;b&lt;c&gt;&amp;</string></value>");
}

// Plain runs are skipped sixteen bytes at a time: a character to escape
// (or a multi-byte one, a tab) at every position of strings of every length
// up to 40 comes out as written one byte at a time.
TEST(XmlrpcWriter, EveryPositionOfAnEscapeInStringsOfEveryLength) {
  const std::pair<std::string, std::string> specials[] = {
      {"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"},    {"\r", "&#13;"},
      {"\t", "\t"},   {"\n", "\n"},  {"\x7f", "\x7f"}, {"\xC3\xA9", "\xC3\xA9"},
      {"\"", "\""},   {"]", "]"}};
  for (std::size_t len = 1; len <= 40; ++len) {
    for (std::size_t at = 0; at < len; ++at) {
      for (const auto& [raw, escaped] : specials) {
        std::string s(len, 'a');
        s.replace(at, 1, raw);
        const std::string expected = "<value><string>" + std::string(at, 'a') + escaped +
                                     std::string(len - at - 1, 'a') + "</string></value>";
        ASSERT_EQ(value_xml(value(s)), expected) << "length " << len << ", at " << at;
      }
    }
  }
}

TEST(XmlrpcWriter, RefusesTextXmlCannotCarryAndLeavesOutputUnchanged) {
  const std::vector<std::string> bad = {
      std::string("nul\0", 4),
      "\x01",
      "bell\x07",
      "\x1f",
      "\xff",              // not UTF-8
      "\x80",              // stray continuation byte
      "\xc0\xaf",          // overlong
      "\xe0\x80\xaf",      // overlong
      "\xf0\x80\x80\xaf",  // overlong
      "\xed\xa0\x80",      // surrogate
      "\xf4\x90\x80\x80",  // above U+10FFFF
      "\xe2\x82",          // truncated
      "\xef\xbf\xbe",      // U+FFFE
      "\xef\xbf\xbf",      // U+FFFF
  };
  for (const std::string& t : bad) {
    SCOPED_TRACE(to_debug_string(value(t)));
    std::string out = "kept";
    EXPECT_THROW(write_value(out, array{1, t}), std::invalid_argument);
    EXPECT_THROW(write_response(out, structure{{t, 1}}), std::invalid_argument);
    EXPECT_THROW(write_call(out, t, {}), std::invalid_argument);
    EXPECT_THROW(write_call(out, "m", {t}), std::invalid_argument);
    EXPECT_EQ(out, "kept");
  }
}

TEST(XmlrpcWriter, FaultMessagesXmlCannotCarryAreRepaired) {
  std::string doc;
  using namespace std::string_view_literals;
  write_fault(doc, 1, "bad\0byte \xff and \x01 ok"sv);
  const auto r = parse_response(doc);
  ASSERT_TRUE(std::holds_alternative<outcome>(r)) << doc;
  EXPECT_EQ(std::get<fault>(std::get<outcome>(r)).message(),
            "bad\xef\xbf\xbd"
            "byte \xef\xbf\xbd and \xef\xbf\xbd ok");
}

TEST(XmlrpcWriter, RefusesNonFiniteDoublesAndInvalidDates) {
  std::string out;
  EXPECT_THROW(write_value(out, std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(write_value(out, -std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(write_value(out, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(write_value(out, date_time{2023, 2, 29, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(write_value(out, date_time{2024, 13, 1, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(write_value(out, date_time{-1, 1, 1, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(write_value(out, date_time{10000, 1, 1, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(write_value(out, date_time{2024, 1, 1, 24, 0, 0}), std::invalid_argument);
  EXPECT_EQ(out, "");
}

TEST(XmlrpcWriter, DoublesArePlainDecimalsWhereShortExponentsOutside) {
  auto text = [](double d) {
    const std::string x = value_xml(d);
    return x.substr(15, x.size() - 15 - 17);  // between <value><double> and </double></value>
  };
  EXPECT_EQ(text(0.1), "0.1");
  EXPECT_EQ(text(3.0), "3.0");
  EXPECT_EQ(text(0.0), "0.0");
  EXPECT_EQ(text(-0.0), "-0.0");
  EXPECT_EQ(text(-2.5), "-2.5");
  EXPECT_EQ(text(123456.0), "123456.0");
  EXPECT_EQ(text(1e-7), "0.0000001");
  EXPECT_EQ(text(1e20), "100000000000000000000.0");
  EXPECT_EQ(text(1e21), "1e+21");
  EXPECT_EQ(text(9.99e-8), "9.99e-08");
  EXPECT_EQ(text(1e100), "1e+100");
  EXPECT_EQ(text(5e-324), "5e-324");
  EXPECT_EQ(text(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(text(0.1 + 0.2), "0.30000000000000004");
}

TEST(XmlrpcWriter, EveryDoubleRoundTripsBitForBit) {
  std::vector<double> ds = {0.0,
                            -0.0,
                            std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest(),
                            std::numeric_limits<double>::epsilon(),
                            1e-7,
                            std::nextafter(1e-7, 0.0),
                            1e21,
                            std::nextafter(1e21, 0.0),
                            9007199254740993.0};
  std::mt19937_64 rng(12345);
  while (ds.size() < 20'000) {
    const double d = std::bit_cast<double>(rng());
    if (std::isfinite(d)) ds.push_back(d);
  }
  std::uniform_real_distribution<double> everyday(-1e6, 1e6);
  for (int i = 0; i < 5'000; ++i) ds.push_back(everyday(rng));
  for (double d : ds) {
    const value back = round_trip(d);
    ASSERT_TRUE(back.is<double>());
    ASSERT_EQ(std::bit_cast<std::uint64_t>(back.as<double>()), std::bit_cast<std::uint64_t>(d))
        << value_xml(d);
  }
}

TEST(XmlrpcWriter, BinaryOfEveryLengthRoundTrips) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n < 200; ++n) {
    std::vector<std::uint8_t> data(n);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const value v = bytes(data);
    ASSERT_EQ(round_trip(v), v) << n;
  }
}

TEST(XmlrpcWriter, DeepValuesWithinTheLimitRoundTrip) {
  value v = 1;
  for (int i = 0; i < 64; ++i) v = i % 2 ? value(array{v}) : value(structure{{"k", v}});
  EXPECT_EQ(round_trip(v), v);
}

}  // namespace
}  // namespace rapidrpc::xmlrpc

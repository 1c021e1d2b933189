// JSON-RPC writers: every value kind, escaping, error objects, and round
// trips through the parser.
#include <rapidrpc/jsonrpc.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace rapidrpc::jsonrpc {
namespace {

std::string json(const value& v) {
  std::string out;
  write_value(out, v);
  return out;
}

TEST(Writer, Scalars) {
  EXPECT_EQ(json(value(std::int32_t{-5})), "-5");
  EXPECT_EQ(json(value(std::int64_t{INT64_MIN})), "-9223372036854775808");
  EXPECT_EQ(json(value(2.5)), "2.5");
  EXPECT_EQ(json(value(3.0)), "3.0");
  EXPECT_EQ(json(value(1e300)), "1e+300");
  EXPECT_EQ(json(value(true)), "true");
  EXPECT_EQ(json(value(nil)), "null");
  EXPECT_EQ(json(value(bytes{{'H', 'i'}})), R"({"$base64":"SGk="})");
  EXPECT_EQ(json(value(date_time{2024, 1, 31, 12, 30, 5})),
            R"({"$datetime":"2024-01-31T12:30:05"})");
  EXPECT_EQ(json(value(date_time{2024, 1, 31, 12, 30, 5, 7})),
            R"({"$datetime":"2024-01-31T12:30:05.000007"})");
}

TEST(Writer, Strings) {
  EXPECT_EQ(json(value(std::string("a\"\\/\b\f\n\r\t\x01\x1f\x7f"))),
            R"("a\"\\/\b\f\n\r\t\u0001\u001f)"
            "\x7f\"");
  EXPECT_EQ(json(value(std::string("a\0b", 3))), R"("a\u0000b")");
  EXPECT_EQ(json(value(std::string("\xC3\xA9\xF0\x9F\x98\x80"))), "\"\xC3\xA9\xF0\x9F\x98\x80\"");
}

TEST(Writer, Containers) {
  EXPECT_EQ(json(value(array{})), "[]");
  EXPECT_EQ(json(value(structure{})), "{}");
  EXPECT_EQ(json(value(array{std::int32_t{1}, array{nil}, structure{{"b", true}, {"a", "x"}}})),
            R"([1,[null],{"b":true,"a":"x"}])");
}

TEST(Writer, RefusesWhatJsonCannotCarry) {
  std::string out = "keep";
  EXPECT_THROW(write_value(out, value(array{"ok", std::string("\xFF")})), std::invalid_argument);
  EXPECT_THROW(write_value(out, value(std::numeric_limits<double>::infinity())),
               std::invalid_argument);
  EXPECT_THROW(write_value(out, value(std::nan(""))), std::invalid_argument);
  EXPECT_THROW(write_value(out, value(std::string("\xED\xA0\x80"))),
               std::invalid_argument);  // a surrogate
  EXPECT_EQ(out, "keep");
}

TEST(Writer, StringsWithInvalidUtf8ThrowOrAreRepaired) {
  std::string out = "keep";
  EXPECT_THROW(write_string(out, "a\xFF"), std::invalid_argument);
  EXPECT_EQ(out, "keep");
  out.clear();
  write_string(out,
               "a\xFF"
               "b\xC3\xA9\xC3",
               invalid_utf8::replace);
  EXPECT_EQ(out,
            "\"a\xEF\xBF\xBD"
            "b\xC3\xA9\xEF\xBF\xBD\"");
}

// Plain runs are skipped sixteen and eight bytes at a time: a character to
// escape (or a multi-byte one) at every position of strings of every length
// up to 40 comes out as written one byte at a time.
TEST(Writer, EveryPositionOfAnEscapeInStringsOfEveryLength) {
  const std::pair<std::string, std::string> specials[] = {
      {"\"", "\\\""},           {"\\", "\\\\"},      {"\n", "\\n"},
      {"\x01", "\\u0001"},      {"\x1f", "\\u001f"}, {"\x7f", "\x7f"},
      {"\xC3\xA9", "\xC3\xA9"}, {" ", " "}};
  for (std::size_t len = 1; len <= 160; ++len) {  // past 64 and 128: runs of 64 plain bytes
    for (std::size_t at = 0; at < len; ++at) {
      for (const auto& [raw, escaped] : specials) {
        std::string s(len, 'a');
        s.replace(at, 1, raw);
        std::string expected =
            "\"" + std::string(at, 'a') + escaped + std::string(len - at - 1, 'a') + "\"";
        std::string out;
        write_string(out, s);
        ASSERT_EQ(out, expected) << "length " << len << ", at " << at;
      }
    }
  }
  std::string out;
  write_string(out, std::string(100, 'x') + "\xFF", invalid_utf8::replace);
  EXPECT_EQ(out, "\"" + std::string(100, 'x') + "\xEF\xBF\xBD\"");
  EXPECT_THROW(write_string(out, std::string(20, 'x') + "\xFF"), std::invalid_argument);
}

// A value's string of up to 15 bytes is checked and copied 16 bytes at a
// time, past its end: an escape at each of its positions is found, and what
// lies past its end (left there by a longer string) is not written.
TEST(Writer, ShortStringsOfValues) {
  const std::string specials[] = {"\"", "\\", "\n", "\x01", "\x7f", "\xC3\xA9", "\xFF"};
  for (std::size_t len = 0; len <= 20; ++len) {
    for (std::size_t at = 0; at <= len; ++at) {
      for (const auto& raw : specials) {
        std::string s(len, 'a');
        if (at < len) s.replace(at, 1, raw);
        std::string expected;
        if (raw == "\xFF" && at < len) {
          EXPECT_THROW(write_value(expected, value(s)), std::invalid_argument);
          continue;
        }
        write_string(expected, s);
        std::string out;
        write_value(out, value(s));
        ASSERT_EQ(out, expected) << "length " << len << ", at " << at;
      }
    }
  }
  for (const char* last : {"\"", "\\", "\n"}) {
    value in_place(std::string(14, 'b') + last);  // in the string's own buffer
    in_place.as<std::string>().resize(5);
    std::string out;
    write_value(out, in_place);
    EXPECT_EQ(out, "\"bbbbb\"");
    value on_heap(std::string(40, 'c'));  // a heap block, the special left past the end
    on_heap.as<std::string>()[3] = *last;
    on_heap.as<std::string>().resize(3);
    out.clear();
    write_value(out, on_heap);
    EXPECT_EQ(out, "\"ccc\"");
  }
}

TEST(Writer, Envelopes) {
  std::string out;
  write_request(out, "sample.add", array{std::int32_t{3}, std::int32_t{5}}, "1");
  EXPECT_EQ(out, R"({"jsonrpc":"2.0","method":"sample.add","params":[3,5],"id":1})");
  out.clear();
  write_request(out, "n", array{}, "");
  EXPECT_EQ(out, R"({"jsonrpc":"2.0","method":"n","params":[]})");
  out.clear();
  write_result(out, R"("x")", value(std::int32_t{8}));
  EXPECT_EQ(out, R"({"jsonrpc":"2.0","result":8,"id":"x"})");
}

TEST(Writer, Errors) {
  std::string out;
  write_error(out, "null", fault_code::parse_error, "");
  EXPECT_EQ(out, R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null})");
  out.clear();
  write_error(out, "1", fault_code::method_not_found, "no method named x");
  EXPECT_EQ(
      out,
      R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"no method named x"},"id":1})");
  out.clear();
  write_error(out, "1", fault_code::method_not_found, "method not found");  // says nothing more
  EXPECT_EQ(out,
            R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1})");
  out.clear();
  write_error(out, "2", -32500, "integer overflow");
  EXPECT_EQ(out,
            R"({"jsonrpc":"2.0","error":{"code":-32500,"message":"integer overflow"},"id":2})");
  out.clear();
  write_error(out, "3", 7, "bad \xFF byte");
  EXPECT_EQ(out,
            "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":7,\"message\":\"bad \xEF\xBF\xBD "
            "byte\"},\"id\":3}");
}

TEST(Writer, RoundTripsThroughTheParser) {
  const value samples[] = {
      value(array{std::int32_t{1}, std::int64_t{1} << 40, -0.5, 1e-7, 123456789.125, "s\u00e9\n",
                  true, nil}),
      value(structure{{"$base64", "not canonical"},
                      {"nested", structure{{"$datetime", "20240101T00:00:00"}}}}),
      value(bytes{{0, 1, 2, 254, 255}}),
      value(date_time{1999, 12, 31, 23, 59, 60}),
      value(date_time{1999, 12, 31, 23, 59, 60, 999999}),
  };
  for (const auto& v : samples) {
    std::string text;
    write_request(text, "echo", array{v}, "1");
    auto r = parse_request(text);
    ASSERT_TRUE(std::holds_alternative<message>(r)) << text;
    const auto& req = std::get<request>(std::get<message>(r).entries.at(0));
    EXPECT_EQ(req.params.at(0), v) << text;

    std::string reply;
    write_result(reply, req.id, req.params.at(0));
    auto back = parse_response(reply);
    ASSERT_TRUE(std::holds_alternative<response>(back)) << reply;
    EXPECT_EQ(std::get<value>(std::get<response>(back).outcome), v) << reply;
  }
}

}  // namespace
}  // namespace rapidrpc::jsonrpc

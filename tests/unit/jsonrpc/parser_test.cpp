// JSON-RPC request and response parsing: the envelope rules of the
// specification, the value mapping, and every kind of bad input.
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/literals.hpp>

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>

namespace rapidrpc::jsonrpc {
namespace {

message parse_ok(std::string_view text, const limits& lim = {}) {
  auto r = parse_request(text, lim);
  if (auto* e = std::get_if<error_reply>(&r)) {
    ADD_FAILURE() << "rejected (" << e->code << ": " << e->detail << "): " << text;
    return {};
  }
  return std::get<message>(std::move(r));
}

error_reply parse_bad(std::string_view text, const limits& lim = {}) {
  auto r = parse_request(text, lim);
  if (auto* e = std::get_if<error_reply>(&r)) return *e;
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

request single(std::string_view text) {
  auto m = parse_ok(text);
  EXPECT_FALSE(m.batch);
  EXPECT_EQ(m.entries.size(), 1u);
  if (m.entries.size() != 1 || !std::holds_alternative<request>(m.entries[0])) {
    ADD_FAILURE() << "not one valid request: " << text;
    return {};
  }
  return std::get<request>(std::move(m.entries[0]));
}

error_reply single_error(std::string_view text) {
  auto m = parse_ok(text);
  if (m.entries.size() != 1 || !std::holds_alternative<error_reply>(m.entries[0])) {
    ADD_FAILURE() << "not one invalid entry: " << text;
    return {};
  }
  return std::get<error_reply>(m.entries[0]);
}

value param(std::string_view json) {
  auto r = single(std::string(R"({"jsonrpc":"2.0","method":"m","params":[)") + std::string(json) +
                  "],\"id\":1}");
  EXPECT_EQ(r.params.size(), 1u) << json;
  return r.params.empty() ? value{} : r.params[0];
}

TEST(Request, Positional) {
  auto r = single(R"({"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1})");
  EXPECT_EQ(r.method, "subtract");
  EXPECT_EQ(r.params, (array{std::int32_t{42}, std::int32_t{23}}));
  EXPECT_FALSE(r.named);
  EXPECT_EQ(r.id, "1");
  EXPECT_FALSE(r.is_notification());
}

TEST(Request, Named) {
  auto r = single(
      R"({"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3})");
  ASSERT_TRUE(r.named);
  EXPECT_EQ(*r.named, (structure{{"minuend", std::int32_t{42}}, {"subtrahend", std::int32_t{23}}}));
  EXPECT_TRUE(r.params.empty());
}

TEST(Request, MembersInAnyOrder) {
  auto r = single(R"({"id":"x","params":[1],"method":"m","jsonrpc":"2.0"})");
  EXPECT_EQ(r.method, "m");
  EXPECT_EQ(r.id, R"("x")");
}

TEST(Request, NoParamsIsEmpty) {
  auto r = single(R"({"jsonrpc":"2.0","method":"m","id":1})");
  EXPECT_TRUE(r.params.empty());
  EXPECT_FALSE(r.named);
}

TEST(Request, Notification) {
  auto r = single(R"({"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]})");
  EXPECT_TRUE(r.is_notification());
  EXPECT_EQ(r.params.size(), 5u);
}

TEST(Request, IdsAreKeptVerbatim) {
  for (std::string id : {"1", "-7", "0", "\"abc\"", "\"\"", "null", "1.5", "1e3", "-0.0",
                         "123456789012345678901234567890", "0e400", "1e-400"}) {
    auto r = single(R"({"jsonrpc":"2.0","method":"m","id":)" + id + "}");
    EXPECT_EQ(r.id, id);
  }
  // A string id is the same string, written with the fewest escapes.
  EXPECT_EQ(single(R"({"jsonrpc":"2.0","method":"m","id":"\u00e9\n\/"})").id, "\"\xC3\xA9\\n/\"");
}

TEST(Request, IdOfAWrongTypeIsInvalid) {
  // Beyond the double range, an id answered as written could not be read
  // back (found by the exchange fuzz target).
  for (std::string id : {"[1]", "{}", "true", "false", "2e77508", "-1e400"}) {
    auto e = single_error(R"({"jsonrpc":"2.0","method":"m","id":)" + id + "}");
    EXPECT_EQ(e.code, fault_code::invalid_request) << id;
    EXPECT_EQ(e.id, "null") << id;
  }
}

TEST(Request, EnvelopeErrorsKeepAReadableId) {
  struct {
    std::string text;
    std::string id;
  } cases[] = {
      {R"({"jsonrpc":"2.0","method":1,"params":"bar"})", "null"},
      {R"({"jsonrpc":"2.0","method":"m","params":"bar","id":4})", "4"},
      {R"({"jsonrpc":"1.0","method":"m","id":5})", "5"},
      {R"({"method":"m","id":6})", "6"},
      {R"({"jsonrpc":"2.0","id":7})", "7"},
      {R"({"jsonrpc":"2.0","method":"m","id":8,"extra":1})", "8"},
      {R"({"jsonrpc":2.0,"method":"m","id":9})", "9"},
      {R"({"foo":"boo"})", "null"},
  };
  for (const auto& c : cases) {
    auto e = single_error(c.text);
    EXPECT_EQ(e.code, fault_code::invalid_request) << c.text;
    EXPECT_EQ(e.id, c.id) << c.text;
    EXPECT_FALSE(e.detail.empty());
  }
}

TEST(Request, MethodNameRules) {
  EXPECT_EQ(single_error(R"({"jsonrpc":"2.0","method":"a\u0000b","id":1})").code,
            fault_code::invalid_request);
  EXPECT_EQ(single_error(R"({"jsonrpc":"2.0","method":"","id":1})").code,
            fault_code::invalid_request);
  EXPECT_EQ(single_error(R"({"jsonrpc":"2.0","method":"a\nb","id":1})").code,
            fault_code::invalid_request);
  std::string huge(300, 'x');
  auto e = single_error(R"({"jsonrpc":"2.0","method":")" + huge + R"(","id":1})");
  EXPECT_EQ(e.code, fault_code::invalid_request);
  EXPECT_LT(e.detail.size(), 200u);  // never echoes the huge name
  EXPECT_EQ(single(R"({"jsonrpc":"2.0","method":"rpc.x","id":1})").method, "rpc.x");
}

TEST(Request, DuplicateMembers) {
  auto e = single_error(R"({"jsonrpc":"2.0","method":"a","method":"b","id":1})");
  EXPECT_EQ(e.code, fault_code::invalid_request);
  EXPECT_EQ(e.id, "null");
  // Inside params: the request's id is known, the params are not valid.
  auto p = single_error(R"({"jsonrpc":"2.0","method":"m","params":[{"k":1,"k":2}],"id":3})");
  EXPECT_EQ(p.code, fault_code::invalid_params);
  EXPECT_EQ(p.id, "3");
}

TEST(Values, Mapping) {
  EXPECT_EQ(param("7"), value(std::int32_t{7}));
  EXPECT_EQ(param("-2147483648"), value(std::int32_t{-2147483647 - 1}));
  EXPECT_EQ(param("2147483648"), value(std::int64_t{2147483648}));
  EXPECT_EQ(param("-9223372036854775808"), value(std::int64_t{INT64_MIN}));
  EXPECT_EQ(param("2.5"), value(2.5));
  EXPECT_EQ(param("1e2"), value(100.0));
  EXPECT_EQ(param("-0"), value(std::int32_t{0}));
  EXPECT_EQ(param("true"), value(true));
  EXPECT_EQ(param("null"), value(nil));
  EXPECT_EQ(param(R"("a\"\\\/\b\f\n\r\tz")"), value(std::string("a\"\\/\b\f\n\r\tz")));
  EXPECT_EQ(param(R"("\u00e9\ud83d\ude00")"), value(std::string("\xC3\xA9\xF0\x9F\x98\x80")));
  EXPECT_EQ(param(R"("a\u0000b")"), value(std::string("a\0b", 3)));
  EXPECT_EQ(param(R"([1,[],{}])"), value(array{std::int32_t{1}, array{}, structure{}}));
  EXPECT_EQ(param(R"({"b":1,"a":"x"})"), value(structure{{"a", "x"}, {"b", std::int32_t{1}}}));
}

TEST(Values, Markers) {
  EXPECT_EQ(param(R"({"$base64":"SGk="})"), value(bytes{{'H', 'i'}}));
  EXPECT_EQ(param(R"({"$base64":""})"), value(bytes{}));
  EXPECT_EQ(param(R"({"$datetime":"2024-01-31T12:30:00"})"),
            value(date_time{2024, 1, 31, 12, 30, 0}));
  // Not canonical, or not alone: a struct, so it goes back out as it came.
  EXPECT_EQ(param(R"({"$base64":"SGk"})"), value(structure{{"$base64", "SGk"}}));
  EXPECT_EQ(param(R"({"$base64":"S G k ="})"), value(structure{{"$base64", "S G k ="}}));
  // What the decoder takes but the writer would not write (white space
  // anywhere), and what it refuses (unused bits set, padding out of place).
  const std::pair<const char*, std::string> not_canonical[] = {
      {R"(SGk=\n)", "SGk=\n"},     {R"(\tSGk=)", "\tSGk="}, {"SGk= ", "SGk= "},
      {R"(SG\r\nk=)", "SG\r\nk="}, {"SGl=", "SGl="},        {"SGk==", "SGk=="},
      {"SGk=SGk=", "SGk=SGk="}};
  for (const auto& [json, text] : not_canonical) {
    EXPECT_EQ(param(std::string(R"({"$base64":")") + json + R"("})"),
              value(structure{{"$base64", text}}))
        << json;
  }
  std::string long_text;  // 3,000 bytes, and again with a line break every 76 characters
  append_base64(long_text, std::string(3000, '\x5A'));
  EXPECT_EQ(param(R"({"$base64":")" + long_text + R"("})"),
            value(bytes(std::string(3000, '\x5A'))));
  std::string lines;
  for (std::size_t i = 0; i < long_text.size(); i += 76) lines.append(long_text, i, 76) += "\\n";
  std::string broken;
  for (std::size_t i = 0; i < long_text.size(); i += 76) broken.append(long_text, i, 76) += '\n';
  EXPECT_EQ(param(R"({"$base64":")" + lines + R"("})"), value(structure{{"$base64", broken}}));
  EXPECT_EQ(param(R"({"$base64":7})"), value(structure{{"$base64", std::int32_t{7}}}));
  EXPECT_EQ(param(R"({"$datetime":"20240131T12:30:00"})"),
            value(structure{{"$datetime", "20240131T12:30:00"}}));
  EXPECT_EQ(param(R"({"$datetime":"2024-02-30T00:00:00"})"),
            value(structure{{"$datetime", "2024-02-30T00:00:00"}}));
  // Microseconds, in the one form the writer produces: six digits, not 0.
  EXPECT_EQ(param(R"({"$datetime":"2024-01-31T12:30:00.250000"})"),
            value(date_time{2024, 1, 31, 12, 30, 0, 250000}));
  for (const char* text : {"2024-01-31T12:30:00.25", "2024-01-31T12:30:00.000000",
                           "20240131T12:30:00.250000", "2024-01-31T12:30:00.250000Z"}) {
    EXPECT_EQ(param(std::string(R"({"$datetime":")") + text + R"("})"),
              value(structure{{"$datetime", text}}))
        << text;
  }
  EXPECT_EQ(param(R"({"$base64":"SGk=","x":1})"),
            value(structure{{"$base64", "SGk="}, {"x", std::int32_t{1}}}));
}

// A {"$base64": ...} is decoded as its text is read: whatever follows it
// makes it a string member again, in its place, with its text as it came.
TEST(Values, Base64MarkersWithCompany) {
  EXPECT_EQ(
      param(R"({"$base64":"SGk=","x":[1,{"$base64":"SGk="}]})"),
      value(structure{{"$base64", "SGk="}, {"x", array{std::int32_t{1}, bytes{{'H', 'i'}}}}}));
  EXPECT_EQ(param(R"({"$base64":"SGk=","x":{}})"),
            value(structure{{"$base64", "SGk="}, {"x", structure{}}}));
  EXPECT_EQ(param(R"({"x":1,"$base64":"SGk="})"),
            value(structure{{"x", std::int32_t{1}}, {"$base64", "SGk="}}));
  EXPECT_EQ(param(R"([{"$base64":"+\/+\/"},{"$base64":"SGk="}])"),
            value(array{bytes{{0xFB, 0xFF, 0xBF}}, bytes{{'H', 'i'}}}));
  EXPECT_EQ(param(R"({"$base64":{"$base64":"SGk="}})"),
            value(structure{{"$base64", bytes{{'H', 'i'}}}}));
  // Twice: the params are invalid, as for any repeated name.
  const auto e = single_error(
      R"({"jsonrpc":"2.0","method":"m","params":[{"$base64":"SGk=","$base64":"SGk="}],"id":1})");
  EXPECT_EQ(e.code, fault_code::invalid_params);
  EXPECT_EQ(e.detail, "a member name repeats in an object");
  // Its string counts as one value, as any string does: six in all with
  // the envelope's three, params and the object.
  std::string text = R"({"jsonrpc":"2.0","method":"m","params":[{"$base64":"SGk="}],"id":1})";
  EXPECT_TRUE(std::holds_alternative<message>(parse_request(text, {.max_elements = 6})));
  EXPECT_EQ(parse_bad(text, {.max_elements = 5}).code, fault_code::invalid_request);
}

// Decimals read in one pass (a division of two exact doubles up to 15
// digits, parse_double beyond) must be the nearest double, as
// std::from_chars reads them.
TEST(Values, DecimalsAreTheNearestDouble) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t bits = rng();
    const int digits = 2 + static_cast<int>(bits % 18);
    const int point = 1 + static_cast<int>((bits >> 8) % (digits - 1));  // digits before '.'
    std::string t = (bits >> 20) % 3 == 0 ? "-" : "";
    t += static_cast<char>('1' + rng() % 9);
    for (int d = 1; d < digits; ++d) {
      if (d == point) t += '.';
      t += static_cast<char>('0' + rng() % 10);
    }
    if ((bits >> 24) % 5 == 0) t += "e" + std::to_string(static_cast<int>((bits >> 32) % 40) - 20);
    auto r = parse_value("[" + t + "]");
    ASSERT_TRUE(std::holds_alternative<value>(r)) << t;
    const value& v = std::get<value>(r).as<array>().at(0);
    ASSERT_TRUE(v.is<double>()) << t;
    double want = 0;
    std::from_chars(t.data(), t.data() + t.size(), want);
    const double got = v.as<double>();
    ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0) << t;
  }
}

TEST(Values, OutOfRangeNumbersAreInvalidParams) {
  for (std::string n : {"9223372036854775808", "-9223372036854775809", "1e400", "-1e400"}) {
    auto e = single_error(R"({"jsonrpc":"2.0","method":"m","params":[)" + n + R"(],"id":2})");
    EXPECT_EQ(e.code, fault_code::invalid_params) << n;
    EXPECT_EQ(e.id, "2");
  }
  // Underflow to zero is a number like any other, and so is a zero with
  // any exponent.
  EXPECT_EQ(param("1e-400"), value(0.0));
  EXPECT_EQ(param("0e400"), value(0.0));
  EXPECT_EQ(param("-0.0E+999").as<double>(), 0.0);
}

TEST(Batch, EntriesInOrder) {
  auto m = parse_ok(R"([
    {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
    {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
    {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
    {"foo": "boo"},
    {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
    {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
  ])");
  EXPECT_TRUE(m.batch);
  ASSERT_EQ(m.entries.size(), 6u);
  EXPECT_EQ(std::get<request>(m.entries[0]).id, R"("1")");
  EXPECT_TRUE(std::get<request>(m.entries[1]).is_notification());
  EXPECT_EQ(std::get<error_reply>(m.entries[3]).code, fault_code::invalid_request);
  EXPECT_EQ(std::get<request>(m.entries[5]).method, "get_data");
}

TEST(Batch, NonObjectEntriesAreInvalid) {
  auto m = parse_ok("[1,2,3]");
  ASSERT_EQ(m.entries.size(), 3u);
  for (const auto& e : m.entries) {
    ASSERT_TRUE(std::holds_alternative<error_reply>(e));
    EXPECT_EQ(std::get<error_reply>(e).id, "null");
  }
}

TEST(Batch, EmptyAndTooLarge) {
  EXPECT_EQ(parse_bad("[]").code, fault_code::invalid_request);
  limits lim;
  lim.max_batch = 3;
  std::string three =
      R"([{"jsonrpc":"2.0","method":"m"},{"jsonrpc":"2.0","method":"m"},{"jsonrpc":"2.0","method":"m"}])";
  EXPECT_EQ(parse_ok(three, lim).entries.size(), 3u);
  std::string four = three.substr(0, three.size() - 1) + R"(,{"jsonrpc":"2.0","method":"m"}])";
  auto e = parse_bad(four, lim);
  EXPECT_EQ(e.code, fault_code::invalid_request);
  EXPECT_EQ(e.id, "null");
}

TEST(Text, ParseErrors) {
  for (
      std::string text : {
          R"({"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz])",
          R"([{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method")",
          "",
          " ",
          "{",
          "[",
          "{\"a\":}",
          "[1,]",
          "{\"a\":1,}",
          "01",
          "1.",
          ".5",
          "+1",
          "0x10",
          "NaN",
          "Infinity",
          "'x'",
          "[1] [2]",
          "{} x",
          "\"\\x\"",
          "\"\\u12\"",
          "\"a\tb\"",
          "[tru]",
          "nul",
          "\"\\ud800\"",
          "\"\\udc00\"",
          "\"\\ud800\\u0041\"",
          "\"\xC3\"",
          "\"\xED\xA0\x80\"",
          "\"\xC0\xAF\"",
          "\"\xF4\x90\x80\x80\"",
          "\xEF\xBB\xBF{}",
      }) {
    auto e = parse_bad(text);
    EXPECT_EQ(e.code, fault_code::parse_error) << text;
    EXPECT_EQ(e.id, "null") << text;
  }
}

// JSON-RPC stays UTF-8 (RFC 8259): a Latin-1 or UTF-16 text is a parse
// error that says the text is not UTF-8, and where.
TEST(Text, BytesThatAreNotUtf8AreNamedAsSuch) {
  const std::string latin1 =
      "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"caf\xE9\"],\"id\":1}";
  auto e = parse_bad(latin1);
  EXPECT_EQ(e.code, fault_code::parse_error);
  EXPECT_EQ(e.detail,
            "invalid JSON at offset 47: the text is not UTF-8 (byte \\xe9); JSON-RPC texts must be "
            "UTF-8");
  e = parse_bad(std::string("\xFF\xFE{\0}\0", 6));  // UTF-16LE with its byte order mark
  EXPECT_EQ(e.detail,
            "invalid JSON at offset 0: the text is not UTF-8 (byte \\xff); JSON-RPC texts must be "
            "UTF-8");
  e = parse_bad("[\"\xED\xA0\x80\"]");  // a surrogate written as UTF-8
  EXPECT_EQ(e.detail,
            "invalid JSON at offset 2: the text is not UTF-8 (byte \\xed); JSON-RPC texts must be "
            "UTF-8");
  // A syntax error before the first such byte is what is reported.
  e = parse_bad("{\"a\":,\"\xE9\"}");
  EXPECT_EQ(e.detail, "invalid JSON at offset 5: syntax error");
}

TEST(Text, NeitherObjectNorArray) {
  for (std::string text : {"1", "\"x\"", "null", "true"})
    EXPECT_EQ(parse_bad(text).code, fault_code::invalid_request) << text;
}

TEST(Text, EveryPrefixOfARequestIsRejectedCleanly) {
  std::string text =
      R"([{"jsonrpc":"2.0","method":"m","params":[1,-2.5e3,"a\u00e9",{"k":[null,true]}],"id":"x"}])";
  for (std::size_t n = 0; n < text.size(); ++n) {
    auto r = parse_request(text.substr(0, n));
    ASSERT_TRUE(std::holds_alternative<error_reply>(r)) << n;
    EXPECT_EQ(std::get<error_reply>(r).code, fault_code::parse_error) << text.substr(0, n);
  }
  EXPECT_TRUE(std::holds_alternative<message>(parse_request(text)));
}

TEST(Limits, Depth) {
  limits lim;
  lim.max_depth = 4;
  auto nested = [](int n) {
    return R"({"jsonrpc":"2.0","method":"m","params":)" + std::string(n, '[') +
           std::string(n, ']') + R"(,"id":1})";
  };
  // params itself is level one.
  EXPECT_TRUE(std::holds_alternative<message>(parse_request(nested(4), lim)));
  auto e = parse_bad(nested(5), lim);
  EXPECT_EQ(e.code, fault_code::invalid_request);
  EXPECT_EQ(e.id, "null");
  // Very deep input fails cleanly (no recursion past the limit).
  auto deep = parse_bad(std::string(1'000'000, '['));
  EXPECT_NE(deep.code, 0);
}

TEST(Limits, Elements) {
  limits lim;
  lim.max_elements = 20;
  std::string ok = R"({"jsonrpc":"2.0","method":"m","params":[1,2,3,4,5,6,7,8,9,10],"id":1})";
  EXPECT_TRUE(std::holds_alternative<message>(parse_request(ok, lim)));
  std::string many = R"({"jsonrpc":"2.0","method":"m","params":[)";
  for (int i = 0; i < 30; ++i) many += i ? ",1" : "1";
  many += R"(],"id":1})";
  EXPECT_EQ(parse_bad(many, lim).code, fault_code::invalid_request);
}

TEST(Response, ResultAndError) {
  auto r = parse_response(R"({"jsonrpc": "2.0", "result": 19, "id": 1})");
  ASSERT_TRUE(std::holds_alternative<response>(r));
  EXPECT_EQ(std::get<response>(r).id, "1");
  EXPECT_EQ(std::get<value>(std::get<response>(r).outcome), value(std::int32_t{19}));

  auto e = parse_response(
      R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"no such"},"id":"1"})");
  ASSERT_TRUE(std::holds_alternative<response>(e));
  const auto& f = std::get<fault>(std::get<response>(e).outcome);
  EXPECT_EQ(f.code(), -32601);
  EXPECT_EQ(f.message(), "Method not found: no such");

  auto custom =
      parse_response(R"({"jsonrpc":"2.0","error":{"code":-32500,"message":"overflow"},"id":2})");
  EXPECT_EQ(std::get<fault>(std::get<response>(custom).outcome).message(), "overflow");
}

TEST(Response, Invalid) {
  for (std::string text : {
           R"({"jsonrpc":"2.0","id":1})",
           R"({"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":1})",
           R"({"jsonrpc":"2.0","error":{"code":"x","message":"m"},"id":1})",
           R"({"jsonrpc":"2.0","error":{"message":"m"},"id":1})",
           R"({"result":1,"id":1})",
           R"([{"jsonrpc":"2.0","result":1,"id":1}])",
           R"({"jsonrpc":"2.0","result":1})",
           "{",
       }) {
    EXPECT_TRUE(std::holds_alternative<error_reply>(parse_response(text))) << text;
  }
}

// ---- one value (parse_value: what the command line reads) -------------------------

value value_ok(std::string_view text) {
  auto r = parse_value(text);
  if (auto* e = std::get_if<error_reply>(&r)) {
    ADD_FAILURE() << "rejected (" << e->code << ": " << e->detail << "): " << text;
    return {};
  }
  return std::get<value>(std::move(r));
}

std::int32_t value_error(std::string_view text, const limits& lim = {}) {
  auto r = parse_value(text, lim);
  if (auto* e = std::get_if<error_reply>(&r)) {
    EXPECT_FALSE(e->detail.empty()) << text;
    return e->code;
  }
  ADD_FAILURE() << "accepted: " << text;
  return 0;
}

TEST(Value, AnyJsonValueWithTheMapping) {
  EXPECT_EQ(value_ok("3"), value(std::int32_t{3}));
  EXPECT_EQ(value_ok("-2147483648"), value(std::int32_t{-2147483647 - 1}));
  EXPECT_EQ(value_ok("2147483648"), value(std::int64_t{2147483648}));
  EXPECT_EQ(value_ok("-9223372036854775808"), value(std::int64_t{INT64_MIN}));
  EXPECT_EQ(value_ok("2.5"), value(2.5));
  EXPECT_EQ(value_ok("1E2"), value(100.0));
  EXPECT_EQ(value_ok(" null "), value(nil));
  EXPECT_EQ(value_ok("\"x\""), value("x"));
  EXPECT_EQ(value_ok("[true,false,{}]"),
            value(array{value(true), value(false), value(structure{})}));
  EXPECT_EQ(value_ok(R"({"$base64":"SGk="})"), value(bytes(std::string_view("Hi"))));
  EXPECT_EQ(value_ok(R"([{"$datetime":"2024-01-31T12:30:00"}])"),
            value(array{value(date_time{2024, 1, 31, 12, 30, 0})}));
  EXPECT_EQ(value_ok(R"({"$datetime":"20240131T12:30:00"})"),
            value(structure{{"$datetime", value("20240131T12:30:00")}}));
}

TEST(Value, StringsAndEscapes) {
  EXPECT_EQ(value_ok(R"("\ud83d\ude00")"), value("\xF0\x9F\x98\x80"));
  EXPECT_EQ(value_ok(R"("\u00e9\/\b\f\n\r\t\"\\")"), value("\xC3\xA9/\b\f\n\r\t\"\\"));
  EXPECT_EQ(value_ok("\"\xE2\x82\xAC\""), value("\xE2\x82\xAC"));
  for (const char* bad :
       {R"("\ud800")", R"("\ud800\u0041")", R"("\udc00")", R"("\u12")", R"("\x")", "\"\x01\"",
        "\"\xC3\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"", "\"abc", "'a'"})
    EXPECT_EQ(value_error(bad), fault_code::parse_error) << bad;
}

TEST(Value, Strictness) {
  for (const char* bad :
       {"", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "1e", "-", "[1 2]", "{a:1}", "{\"a\" 1}",
        "tru", "nul", "[1]x", "NaN", "Infinity", "[1]/*c*/"})
    EXPECT_EQ(value_error(bad), fault_code::parse_error) << bad;
  EXPECT_EQ(value_error("9223372036854775808"), fault_code::invalid_params);
  EXPECT_EQ(value_error("1e999"), fault_code::invalid_params);
  EXPECT_EQ(value_error(R"({"a":1,"a":2})"), fault_code::invalid_params);
  EXPECT_EQ(value_error(R"([{"b":[1,{"a":1,"a":2}]}])"), fault_code::invalid_params);
  value_ok(std::string(64, '[') + std::string(64, ']'));
  EXPECT_EQ(value_error(std::string(65, '[') + std::string(65, ']')), fault_code::invalid_request);
  limits small;
  small.max_elements = 3;
  EXPECT_EQ(value_error("[1,2,3]", small), fault_code::invalid_request);
}

TEST(Value, WritesBackWhatItReads) {
  for (const char* text : {R"({"a":[1,2.5,"x",null],"b":{"c":true}})", "[]", "{}", "-0.0", "1e+300",
                           "9223372036854775807", R"("tab\there \"q\" \\ \u0001")",
                           R"({"$base64":"SGVsbG8="})", R"({"$datetime":"2024-02-29T23:59:60"})"}) {
    std::string out;
    write_value(out, value_ok(text));
    EXPECT_EQ(out, text);
  }
}

}  // namespace
}  // namespace rapidrpc::jsonrpc

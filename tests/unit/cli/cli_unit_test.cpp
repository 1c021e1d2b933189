// Unit tests of the rapidrpc tool's own parsers: the load generator's HTTP
// response framing (fed split at every byte position), the JSON reader and
// writer, the argument forms, and the latency histogram.
#include "histogram.hpp"
#include "json.hpp"
#include "literals.hpp"
#include "response_framing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>

namespace rapidrpc::cli {
namespace {

// ---- response framing ---------------------------------------------------------------

const std::string body = "<?xml version=\"1.0\"?>\n<methodResponse><params><param><value><int>8</int>"
                         "</value></param></params></methodResponse>";

std::string with_length(const std::string& extra = "") {
  return "HTTP/1.1 200 OK\r\nServer: x\r\nContent-Type: text/xml\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

TEST(ResponseFraming, NeedsMoreAtEverySplitThenCompletes) {
  const std::pair<std::string, std::string> cases[] = {
      {with_length(), body},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
       "5\r\n<?xml\r\n10;ext=1\r\n version=\"1.0\"?>\r\n0\r\nTrailer: t\r\n\r\n",
       "<?xml version=\"1.0\"?>"}};
  for (const auto& [wire, expected_body] : cases) {
    std::string scratch;
    for (std::size_t cut = 0; cut < wire.size(); ++cut) {
      response_frame f;
      EXPECT_EQ(frame_response(std::string_view(wire).substr(0, cut), false, f, scratch), frame_status::need_more)
          << "cut at " << cut;
    }
    response_frame f;
    const std::string input = wire + "HTTP/1.1 next";  // the body is a view into it
    ASSERT_EQ(frame_response(input, false, f, scratch), frame_status::complete);
    EXPECT_EQ(f.consumed, wire.size());
    EXPECT_EQ(f.status, 200);
    EXPECT_TRUE(f.keep_alive);
    EXPECT_EQ(f.body, expected_body);
  }
}

TEST(ResponseFraming, DechunksTheBody) {
  std::string scratch;
  response_frame f;
  std::string wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n";
  ASSERT_EQ(frame_response(wire, false, f, scratch), frame_status::complete);
  EXPECT_EQ(f.body, "abc0123456789");
}

TEST(ResponseFraming, KeepAliveFollowsVersionAndConnection) {
  std::string scratch;
  response_frame f;
  ASSERT_EQ(frame_response(with_length("Connection: close\r\n"), false, f, scratch), frame_status::complete);
  EXPECT_FALSE(f.keep_alive);
  std::string http10 = with_length();
  http10[7] = '0';
  ASSERT_EQ(frame_response(http10, false, f, scratch), frame_status::complete);
  EXPECT_FALSE(f.keep_alive);
  ASSERT_EQ(frame_response(http10.insert(http10.find("\r\n\r\n") + 2, "Connection: Keep-Alive\r\n"), false, f, scratch),
            frame_status::complete);
  EXPECT_TRUE(f.keep_alive);
  EXPECT_EQ(f.body, body);
}

TEST(ResponseFraming, BodyWithoutLengthEndsWithTheConnection) {
  std::string scratch;
  response_frame f;
  std::string wire = "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\n\r\n" + body;
  EXPECT_EQ(frame_response(wire, false, f, scratch), frame_status::need_more);
  ASSERT_EQ(frame_response(wire, true, f, scratch), frame_status::complete);
  EXPECT_EQ(f.body, body);
  EXPECT_FALSE(f.keep_alive);
}

TEST(ResponseFraming, NoBodyStatuses) {
  std::string scratch;
  response_frame f;
  ASSERT_EQ(frame_response("HTTP/1.1 204 No Content\r\n\r\nrest", false, f, scratch), frame_status::complete);
  EXPECT_EQ(f.status, 204);
  EXPECT_EQ(f.consumed, 27u);
  EXPECT_TRUE(f.body.empty());
}

TEST(ResponseFraming, RejectsWhatIsNotHttp) {
  std::string scratch;
  for (std::string bad : {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "ICY 200 OK\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                          "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    response_frame f;
    EXPECT_EQ(frame_response(bad, false, f, scratch), frame_status::bad) << bad;
    EXPECT_NE(f.error, nullptr);
  }
  response_frame f;
  EXPECT_EQ(frame_response(with_length().substr(0, 80), true, f, scratch), frame_status::bad);
  EXPECT_EQ(frame_response("", true, f, scratch), frame_status::bad);
}

// ---- JSON ------------------------------------------------------------------------------

TEST(Json, Types) {
  EXPECT_EQ(parse_json("3"), value(std::int32_t{3}));
  EXPECT_EQ(parse_json("-2147483648"), value(std::int32_t{-2147483647 - 1}));
  EXPECT_EQ(parse_json("2147483648"), value(std::int64_t{2147483648}));
  EXPECT_EQ(parse_json("-9223372036854775808"), value(std::int64_t{INT64_MIN}));
  EXPECT_THROW(parse_json("9223372036854775808"), json_error);
  EXPECT_EQ(parse_json("2.5"), value(2.5));
  EXPECT_EQ(parse_json("1E2"), value(100.0));
  EXPECT_EQ(parse_json(" null "), value(nil));
  EXPECT_EQ(parse_json("[true,false,{}]"), value(array{value(true), value(false), value(structure{})}));
}

TEST(Json, StringsAndEscapes) {
  EXPECT_EQ(parse_json(R"("\ud83d\ude00")"), value("\xF0\x9F\x98\x80"));
  EXPECT_EQ(parse_json(R"("\u00e9\/\b\f\n\r\t\"\\")"), value("\xC3\xA9/\b\f\n\r\t\"\\"));
  EXPECT_EQ(parse_json("\"\xE2\x82\xAC\""), value("\xE2\x82\xAC"));
  for (const char* bad : {R"("\ud800")", R"("\ud800\u0041")", R"("\udc00")", R"("\u12")", R"("\x")",
                          "\"\x01\"", "\"\xC3\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"",
                          "\"abc", "'a'"})
    EXPECT_THROW(parse_json(bad), json_error) << bad;
}

TEST(Json, Strictness) {
  for (const char* bad : {"", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "1e", "-", "[1 2]", "{a:1}",
                          "{\"a\" 1}", "tru", "nul", "[1]x", "NaN", "Infinity", "1e999", "{\"a\":1,\"a\":2}"})
    EXPECT_THROW(parse_json(bad), json_error) << bad;
  EXPECT_NO_THROW(parse_json(std::string(64, '[') + std::string(64, ']')));
  EXPECT_THROW(parse_json(std::string(65, '[') + std::string(65, ']')), json_error);
}

TEST(Json, WritesWhatItReads) {
  for (const char* text : {R"({"a":[1,2.5,"x",null],"b":{"c":true}})", "[]", "{}", "-0.0", "1e+300",
                           "9223372036854775807", R"("tab\there \"q\" \\ \u0001")"})
    EXPECT_EQ(to_json(parse_json(text)), text);
  EXPECT_EQ(to_json(value(2.0)), "2.0");
  EXPECT_EQ(to_json(value(bytes(std::string_view("Hello")))), R"({"base64":"SGVsbG8="})");
  EXPECT_EQ(to_json(value(date_time{2024, 1, 31, 12, 30, 0})), R"({"dateTime.iso8601":"20240131T12:30:00"})");
  EXPECT_EQ(to_json(parse_json("[1,{\"a\":2}]"), json_style{2}), "[\n  1,\n  {\n    \"a\": 2\n  }\n]");
}

TEST(Json, DoublesRoundTrip) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 10000; ++i) {
    std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    std::string text;
    append_number(text, d);
    EXPECT_EQ(parse_json(text), value(d)) << text;
  }
}

// ---- argument forms ---------------------------------------------------------------------

TEST(Arguments, TypedForms) {
  EXPECT_EQ(parse_argument("i/3"), value(std::int32_t{3}));
  EXPECT_EQ(parse_argument("i/+3"), value(std::int32_t{3}));
  EXPECT_EQ(parse_argument("I/3"), value(std::int64_t{3}));
  EXPECT_EQ(parse_argument("d/3"), value(3.0));
  EXPECT_EQ(parse_argument("b/true"), value(true));
  EXPECT_EQ(parse_argument("s/"), value(""));
  EXPECT_EQ(parse_argument("n/"), value(nil));
  EXPECT_EQ(parse_argument("h/00FF"), value(bytes(std::vector<std::uint8_t>{0, 255})));
  EXPECT_EQ(parse_argument("6/AP8="), value(bytes(std::vector<std::uint8_t>{0, 255})));
  EXPECT_EQ(parse_argument("6/"), value(bytes()));
  EXPECT_EQ(parse_argument("8/2024-02-29T23:59:60"), value(date_time{2024, 2, 29, 23, 59, 60}));
  EXPECT_EQ(parse_argument("plain"), value("plain"));
  EXPECT_EQ(parse_argument(""), value(""));
  EXPECT_EQ(parse_argument("ab/c"), value("ab/c"));
  for (const char* bad : {"i/", "i/-", "i/1.0", "i/ 1", "i/2147483648", "I/1e3", "d/", "d/inf", "d/1e400", "d/0x1",
                          "b/", "b/1", "n/0", "h/0", "h/0g", "6/AP9=", "6/A===", "8/20230229T00:00:00",
                          "8/20240101T24:00:00", "8/20240101T00:00:00Z", "?/x", "[1", "\"open"})
    EXPECT_THROW(parse_argument(bad), argument_error) << bad;
}

// ---- histogram ----------------------------------------------------------------------------

TEST(Histogram, BucketsCoverEveryValueWithinPrecision) {
  const std::uint64_t values[] = {0, 1, 255, 256, 257, 1000, 123456789, (std::uint64_t{1} << 40) + 12345,
                                  UINT64_MAX};
  for (std::uint64_t v : values) {
    auto i = histogram::index_of(v);
    ASSERT_LT(i, histogram::bucket_count);
    EXPECT_LE(histogram::lowest_in(i), v);
    EXPECT_GE(histogram::highest_in(i), v);
    EXPECT_LE(static_cast<double>(histogram::highest_in(i) - histogram::lowest_in(i)),
              static_cast<double>(v) / 128.0 + 1);
  }
  for (std::size_t i = 1; i < histogram::bucket_count; ++i)
    EXPECT_EQ(histogram::lowest_in(i), histogram::highest_in(i - 1) + 1) << i;
}

TEST(Histogram, Quantiles) {
  histogram h;
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v * 1000);
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.min(), 1000u);
  EXPECT_EQ(h.max(), 100000000u);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 50e6, 50e6 / 128);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.999)), 99.9e6, 99.9e6 / 128);
  EXPECT_EQ(h.quantile(1.0), h.max());
  histogram other;
  other.record(5);
  h.merge(other);
  EXPECT_EQ(h.min(), 5u);
  EXPECT_EQ(h.count(), 100001u);
}

}  // namespace
}  // namespace rapidrpc::cli

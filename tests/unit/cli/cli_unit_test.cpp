// Unit tests of what the rapidrpc tool does itself: the load generator's
// HTTP response framing (fed split at every byte position), the argument
// forms, the layout of its output, the bench summary's shortened values, the
// latency histogram (read live too) and the live line's text. (JSON and the
// scalar literals are the library's: tests/unit/jsonrpc, tests/unit/value.)
#include "arguments.hpp"
#include "bench_report.hpp"
#include "histogram.hpp"
#include "loadgen.hpp"
#include "output.hpp"
#include "response_framing.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>

namespace rapidrpc::cli {
namespace {

// ---- response framing ---------------------------------------------------------------

const std::string body =
    "<?xml version=\"1.0\"?>\n<methodResponse><params><param><value><int>8</int>"
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
      EXPECT_EQ(frame_response(std::string_view(wire).substr(0, cut), false, f, scratch),
                frame_status::need_more)
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
  std::string wire =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, "
      "chunked\r\n\r\n3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n";
  ASSERT_EQ(frame_response(wire, false, f, scratch), frame_status::complete);
  EXPECT_EQ(f.body, "abc0123456789");
}

TEST(ResponseFraming, KeepAliveFollowsVersionAndConnection) {
  std::string scratch;
  response_frame f;
  ASSERT_EQ(frame_response(with_length("Connection: close\r\n"), false, f, scratch),
            frame_status::complete);
  EXPECT_FALSE(f.keep_alive);
  std::string http10 = with_length();
  http10[7] = '0';
  ASSERT_EQ(frame_response(http10, false, f, scratch), frame_status::complete);
  EXPECT_FALSE(f.keep_alive);
  ASSERT_EQ(frame_response(http10.insert(http10.find("\r\n\r\n") + 2, "Connection: Keep-Alive\r\n"),
                           false, f, scratch),
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
  ASSERT_EQ(frame_response("HTTP/1.1 204 No Content\r\n\r\nrest", false, f, scratch),
            frame_status::complete);
  EXPECT_EQ(f.status, 204);
  EXPECT_EQ(f.consumed, 27u);
  EXPECT_TRUE(f.body.empty());
}

TEST(ResponseFraming, RejectsWhatIsNotHttp) {
  std::string scratch;
  for (std::string bad :
       {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "ICY 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    response_frame f;
    EXPECT_EQ(frame_response(bad, false, f, scratch), frame_status::bad) << bad;
    EXPECT_NE(f.error, nullptr);
  }
  response_frame f;
  EXPECT_EQ(frame_response(with_length().substr(0, 80), true, f, scratch), frame_status::bad);
  EXPECT_EQ(frame_response("", true, f, scratch), frame_status::bad);
}

// ---- output -------------------------------------------------------------------------

TEST(Output, JsonIsTheJsonRpcMapping) {
  EXPECT_EQ(
      to_json(value(structure{{"a", value(array{value(1), value(2.5), value("x"), value(nil)})}})),
      R"({"a":[1,2.5,"x",null]})");
  EXPECT_EQ(to_json(value(2.0)), "2.0");
  EXPECT_EQ(to_json(value(bytes(std::string_view("Hello")))), R"({"$base64":"SGVsbG8="})");
  EXPECT_EQ(to_json(value(date_time{2024, 1, 31, 12, 30, 0})),
            R"({"$datetime":"2024-01-31T12:30:00"})");
  // What --json prints reads back, as an argument, as the same value.
  const value all(array{value(std::int64_t{1} << 40), value(-0.5), value(true), value(bytes()),
                        value(date_time{2024, 2, 29, 23, 59, 60}),
                        value(structure{{"k", value("v")}})});
  EXPECT_EQ(parse_argument(to_json(all)), all);
}

TEST(Output, IndentedLayout) {
  const value v(array{value(1), value(structure{{"a", value(2)}, {"b", value(array{})}}),
                      value(bytes(std::string_view("Hi")))});
  EXPECT_EQ(to_indented_json(v, 2),
            "[\n  1,\n  {\n    \"a\": 2,\n    \"b\": []\n  },\n  {\"$base64\":\"SGk=\"}\n]");
  EXPECT_EQ(to_indented_json(value(structure{}), 2), "{}");
}

TEST(Output, ReadableScalarsArePlain) {
  EXPECT_EQ(readable(value("two words")), "two words");
  EXPECT_EQ(readable(value(nil)), "nil");
  EXPECT_EQ(readable(value(8)), "8");
  EXPECT_EQ(readable(value(true)), "true");
  EXPECT_EQ(readable(value(date_time{2024, 1, 31, 12, 30, 0})), "2024-01-31T12:30:00");
  EXPECT_EQ(readable(value(bytes(std::string_view("Hello")))), "base64:SGVsbG8=");
  EXPECT_EQ(readable(value(array{value(1)})), "[\n  1\n]");
}

TEST(Output, LongExpectedResultsAreShortened) {
  EXPECT_EQ(shortened_json(value("6765")), "\"6765\"");
  EXPECT_EQ(shortened_json(value(array{value(1), value(2)})), "[1,2]");
  std::string digits;
  for (int i = 0; i < 4180; ++i) digits += static_cast<char>('0' + (i * 7 + 3) % 10);
  const std::string s = shortened_json(value(digits));
  EXPECT_EQ(
      s, "\"" + digits.substr(0, 32) + "..." + digits.substr(4180 - 32) + "\" (4,180 characters)");
  EXPECT_LE(s.size(), 100u);
  // Characters, not bytes: a cut never splits a UTF-8 sequence.
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xC3\xA9";
  EXPECT_EQ(
      shortened_json(value(accents), 10),
      "\"\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9...\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\" (100 characters)");
  array many;
  for (int i = 0; i < 1000; ++i) many.push_back(value(i));
  EXPECT_EQ(shortened_json(value(many), 20), "[0,1,2 ... 8,999] (3,891 characters of JSON)");
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
  EXPECT_EQ(parse_argument("8/20240131T12:30:00"), value(date_time{2024, 1, 31, 12, 30, 0}));
  EXPECT_EQ(parse_argument("plain"), value("plain"));
  EXPECT_EQ(parse_argument(""), value(""));
  EXPECT_EQ(parse_argument("ab/c"), value("ab/c"));
  for (const char* bad : {"i/",
                          "i/-",
                          "i/1.0",
                          "i/ 1",
                          "i/2147483648",
                          "I/1e3",
                          "d/",
                          "d/inf",
                          "d/1e400",
                          "d/0x1",
                          "b/",
                          "b/1",
                          "n/0",
                          "h/0",
                          "h/0g",
                          "6/AP9=",
                          "6/A===",
                          "8/20230229T00:00:00",
                          "8/20240101T24:00:00",
                          "8/20240101T00:00:00Z",
                          "?/x",
                          "[1",
                          "\"open"})
    EXPECT_THROW(parse_argument(bad), argument_error) << bad;
}

TEST(Arguments, JsonByTheCodecsMapping) {
  EXPECT_EQ(parse_argument("3"), value(3));
  EXPECT_EQ(parse_argument("2147483648"), value(std::int64_t{2147483648}));
  EXPECT_EQ(parse_argument("-1.5"), value(-1.5));
  EXPECT_EQ(parse_argument("null"), value(nil));
  EXPECT_EQ(parse_argument(R"("i/3")"), value("i/3"));
  EXPECT_EQ(parse_argument(R"({"a":[1,2.5,"x",null]})"),
            value(structure{{"a", value(array{value(1), value(2.5), value("x"), value(nil)})}}));
  EXPECT_EQ(parse_argument(R"({"$base64":"SGk="})"), value(bytes(std::string_view("Hi"))));
  EXPECT_EQ(parse_argument(R"({"$datetime":"2024-01-31T12:30:00"})"),
            value(date_time{2024, 1, 31, 12, 30, 0}));
  EXPECT_EQ(parse_argument(R"({"base64":"SGk="})"), value(structure{{"base64", value("SGk=")}}));
  for (const char* bad : {"[1,]", "{\"a\":1,\"a\":2}", "9223372036854775808", "1e999"})
    EXPECT_THROW(parse_argument(bad), argument_error) << bad;
  EXPECT_EQ(parse_argument("01x"), value("01x"));  // not JSON: a string
  try {
    parse_argument("[1,]");
    ADD_FAILURE();
  } catch (const argument_error& e) {
    EXPECT_NE(std::string(e.what()).find("argument '[1,]': invalid JSON at offset"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_json_argument("--expect", "{"), argument_error);
}

// ---- histogram ----------------------------------------------------------------------------

TEST(Histogram, BucketsCoverEveryValueWithinPrecision) {
  const std::uint64_t values[] = {
      0, 1, 255, 256, 257, 1000, 123456789, (std::uint64_t{1} << 40) + 12345, UINT64_MAX};
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

// The live line reads a load thread's histogram while it records: every
// read is a histogram of its own whose counts only grow, and the last one,
// after the writer stopped, is the whole.
TEST(Histogram, ALiveReadWhileRecordingSeesWholeCountsThatOnlyGrow) {
  constexpr std::uint64_t n = 2'000'000;
  histogram h;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t v = 1; v <= n; ++v) h.record(1000 + v % 5000);
    done = true;
  });
  std::uint64_t last = 0;
  while (!done) {
    histogram seen;
    h.add_live_to(seen);
    EXPECT_GE(seen.count(), last);
    EXPECT_LE(seen.count(), n);
    EXPECT_LE(seen.quantile(0.99), 6000u);
    last = seen.count();
  }
  writer.join();
  histogram all;
  h.add_live_to(all);
  EXPECT_EQ(all.count(), n);
  EXPECT_EQ(all.quantile(0.99), h.quantile(0.99));
  EXPECT_EQ(all.max(), h.max());
}

// ---- the live line's text -----------------------------------------------------------

TEST(Progress, SaysTimeCallsRateErrorsAndP99OfATimedOrACountedRun) {
  progress p{.elapsed_s = 3.02,
             .duration_s = 10,
             .calls = 41234,
             .errors = 2,
             .calls_per_s = 13745.4,
             .p99_ns = 1'204'000};
  EXPECT_EQ(progress_text(p),
            "3 s of 10 s: 41234 calls, 13745 calls/s (last second), 2 errors, p99 1.20 ms");
  p.duration_s = 1.5;
  EXPECT_EQ(progress_text(p).substr(0, 12), "3 s of 1.5 s");
  p.requests = 100000;
  EXPECT_EQ(progress_text(p),
            "3 s: 41234 of 100000 calls, 13745 calls/s (last second), 2 errors, p99 1.20 ms");
  p.errors = p.calls;  // nothing ok: no latency yet
  EXPECT_NE(progress_text(p).find(", 41234 errors, p99 -"), std::string::npos) << progress_text(p);
  for (char c : progress_text(p)) EXPECT_TRUE(c >= ' ' && c <= '~') << static_cast<int>(c);
}

}  // namespace
// ---- the load schedule both drivers share (loadgen.hpp) ----------------------

TEST(LoadSchedule, SharesSpreadConnectionsCallsAndRate) {
  bench_options o;
  o.connections = 5;
  o.requests = 11;
  o.rate = 100;
  o.threads = 8;
  const unsigned threads = load_threads(o);
  EXPECT_EQ(threads, 5u);  // never more threads than connections
  std::size_t connections = 0;
  std::uint64_t calls = 0;
  double rate = 0;
  for (unsigned t = 0; t < threads; ++t) {
    auto s = share_of(o, threads, t);
    connections += s.connections;
    calls += s.quota;
    rate += s.rate;
    EXPECT_EQ(s.phase, std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::milliseconds(10) * t));
  }
  EXPECT_EQ(connections, 5u);
  EXPECT_EQ(calls, 11u);
  EXPECT_DOUBLE_EQ(rate, 100);
}

TEST(LoadSchedule, ClosedLoopCountedRunTakesItsQuota) {
  bench_options o;
  o.requests = 3;
  thread_share share;
  share.quota = 3;
  const auto t0 = std::chrono::steady_clock::now();
  call_schedule s(o, share, t0, std::chrono::steady_clock::time_point::max());
  EXPECT_FALSE(s.open_loop());
  EXPECT_TRUE(s.take(t0));
  EXPECT_TRUE(s.take(t0));
  EXPECT_TRUE(s.take(t0));
  EXPECT_FALSE(s.over());
  EXPECT_FALSE(s.take(t0));
  EXPECT_TRUE(s.over());
  EXPECT_FALSE(s.take(t0));
}

TEST(LoadSchedule, ClosedLoopTimedRunEndsAtItsDeadline) {
  bench_options o;  // requests 0: timed
  const auto t0 = std::chrono::steady_clock::now();
  call_schedule s(o, thread_share{}, t0, t0 + std::chrono::seconds(1));
  EXPECT_TRUE(s.take(t0));
  EXPECT_TRUE(s.take(t0 + std::chrono::milliseconds(999)));
  EXPECT_FALSE(s.take(t0 + std::chrono::seconds(1)));
  EXPECT_TRUE(s.over());
}

TEST(LoadSchedule, OpenLoopCallsComeDueAtTheRateAndWaitInOrder) {
  using namespace std::chrono_literals;
  bench_options o;
  o.requests = 4;
  o.rate = 10;
  thread_share share;
  share.quota = 4;
  share.rate = 10;
  share.phase = 5ms;
  const auto t0 = std::chrono::steady_clock::now();
  call_schedule s(o, share, t0, std::chrono::steady_clock::time_point::max());
  ASSERT_TRUE(s.open_loop());
  EXPECT_EQ(s.next_due(), t0 + 5ms);
  EXPECT_FALSE(s.take_due(t0));  // nothing due yet
  EXPECT_FALSE(s.over());
  // At t0 + 250 ms three calls are due: 5, 105 and 205 ms.
  std::vector<std::chrono::steady_clock::time_point> due;
  while (auto d = s.take_due(t0 + 250ms)) due.push_back(*d);
  ASSERT_EQ(due.size(), 3u);
  EXPECT_EQ(due[1] - due[0],
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(100ms));
  EXPECT_EQ(s.next_due(), t0 + 305ms);
  // Deferred calls come back oldest first.
  s.defer(due[0]);
  s.defer(due[1]);
  EXPECT_EQ(s.take_deferred(), due[0]);
  EXPECT_EQ(s.take_deferred(), due[1]);
  EXPECT_FALSE(s.take_deferred());
  // The fourth call, then the quota is spent.
  EXPECT_TRUE(s.take_due(t0 + 1s));
  EXPECT_FALSE(s.take_due(t0 + 1s));
  EXPECT_TRUE(s.over());
}

TEST(LoadSchedule, WarmUpVerdict) {
  EXPECT_EQ(expected_from_warmup(outcome(value(std::int32_t{8}))), value(std::int32_t{8}));
  EXPECT_THROW(expected_from_warmup(outcome(fault(4, "no"))), bench_error);
  try {
    expected_from_warmup(outcome(fault(fault_code::transport_error, "refused")));
    ADD_FAILURE() << "no error";
  } catch (const bench_error& e) {
    EXPECT_EQ(std::string(e.what()), "the warm-up call failed: refused");
  }
}

}  // namespace rapidrpc::cli

// The metrics store: shards written by their owners, added up by a scrape,
// and the Prometheus text format it writes.
#include "metrics/metrics.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc::detail::metrics {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// The samples of an exposition, "name{labels}" -> value text.
std::map<std::string, std::string> samples(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

std::string scrape(const store& s) {
  std::string out;
  s.write_exposition(out, process_figures{});
  return out;
}

TEST(MetricsStore, AddsUpTheShardsOfEveryWriter) {
  store s({"sample.add", "echo"}, 3);
  s.at(0).call_started();
  s.at(0).call_finished(protocol::xmlrpc, s.method_index("sample.add"), outcome::ok,
                        microseconds(30));
  for (int i = 0; i < 4; ++i) {
    s.at(1).call_started();
    s.at(1).call_finished(protocol::xmlrpc, s.method_index("sample.add"), outcome::ok,
                          milliseconds(2));
  }
  s.at(2).call_started();
  s.at(2).call_finished(protocol::jsonrpc, s.method_index("echo"), outcome::timeout,
                        milliseconds(20));
  s.at(2).call_started();  // still running
  auto m = samples(scrape(s));
  EXPECT_EQ(m[R"(rapidrpc_calls_total{protocol="xmlrpc",method="sample.add",outcome="ok"})"], "5");
  EXPECT_EQ(m[R"(rapidrpc_calls_total{protocol="jsonrpc",method="echo",outcome="timeout"})"], "1");
  EXPECT_EQ(m["rapidrpc_calls_in_flight"], "1");
  // Buckets are cumulative: 30 us in le=5e-05, the 2 ms calls from le=0.0025.
  const std::string b =
      R"(rapidrpc_call_duration_seconds_bucket{protocol="xmlrpc",method="sample.add",le=")";
  EXPECT_EQ(m[b + R"(5e-05"})"], "1");
  EXPECT_EQ(m[b + R"(0.001"})"], "1");
  EXPECT_EQ(m[b + R"(0.0025"})"], "5");
  EXPECT_EQ(m[b + R"(+Inf"})"], "5");
  EXPECT_EQ(m[R"(rapidrpc_call_duration_seconds_count{protocol="xmlrpc",method="sample.add"})"],
            "5");
  EXPECT_DOUBLE_EQ(
      std::stod(m[R"(rapidrpc_call_duration_seconds_sum{protocol="xmlrpc",method="sample.add"})"]),
      0.00803);
  // A method and protocol with no call has no series.
  EXPECT_EQ(m.count(R"(rapidrpc_calls_total{protocol="jsonrpc",method="sample.add",outcome="ok"})"),
            0u);
}

TEST(MetricsStore, UnregisteredNamesShareOneLabel) {
  store s({"a"}, 1);
  EXPECT_EQ(s.method_index("a"), 0u);
  EXPECT_EQ(s.method_index("b"), s.method_index("c"));
  EXPECT_NE(s.method_index("b"), s.batch_index());
  for (const char* name : {"b", "c", "d"}) {
    s.at(0).call_started();
    s.at(0).call_finished(protocol::xmlrpc, s.method_index(name), outcome::fault, microseconds(1));
  }
  s.at(0).call_started();
  s.at(0).call_finished(protocol::jsonrpc, s.batch_index(), outcome::ok, microseconds(1));
  auto m = samples(scrape(s));
  EXPECT_EQ(m[R"m(rapidrpc_calls_total{protocol="xmlrpc",method="(other)",outcome="fault"})m"],
            "3");
  EXPECT_EQ(m[R"m(rapidrpc_calls_total{protocol="jsonrpc",method="(batch)",outcome="ok"})m"], "1");
}

TEST(MetricsStore, LabelValuesAreEscaped) {
  store s({"say \"hi\"\\\n"}, 1);
  s.at(0).call_started();
  s.at(0).call_finished(protocol::xmlrpc, 0, outcome::ok, microseconds(1));
  const std::string text = scrape(s);
  EXPECT_NE(text.find(R"(method="say \"hi\"\\\n")"), std::string::npos) << text;
}

TEST(MetricsStore, ConnectionsRejectionsAndBytes) {
  store s({}, 2);
  s.at(0).connection_opened();
  s.at(0).connection_opened();
  s.at(1).connection_opened();
  s.at(0).connection_closed();
  s.at(1).rejected(rejection::body_too_large);
  s.at(1).rejected(rejection::body_too_large);
  s.at(0).rejected(rejection::auth);
  s.at(0).received(100);
  s.at(1).sent(250);
  auto m = samples(scrape(s));
  EXPECT_EQ(m["rapidrpc_connections_total"], "3");
  EXPECT_EQ(m["rapidrpc_connections_open"], "2");
  EXPECT_EQ(m[R"(rapidrpc_rejections_total{reason="body_too_large"})"], "2");
  EXPECT_EQ(m[R"(rapidrpc_rejections_total{reason="auth"})"], "1");
  EXPECT_EQ(m[R"(rapidrpc_rejections_total{reason="allowlist"})"], "0");
  EXPECT_EQ(m["rapidrpc_received_bytes_total"], "100");
  EXPECT_EQ(m["rapidrpc_sent_bytes_total"], "250");
}

TEST(MetricsStore, RejectionsForEveryErrorStatus) {
  rejection r{};
  for (int status : {400, 401, 403, 404, 405, 408, 413, 414, 415, 417, 431, 503})
    EXPECT_TRUE(rejection_for_status(status, r)) << status;
  EXPECT_TRUE(rejection_for_status(431, r));
  EXPECT_EQ(name(r), "header_too_large");
  EXPECT_FALSE(rejection_for_status(200, r));
  EXPECT_FALSE(rejection_for_status(204, r));
}

// What a child process of fork or prefork counts is seen by the parent, and
// a dead child's gauges are zeroed.
TEST(MetricsStore, ForkedChildrenCountIntoTheSharedMapping) {
  store s({"sample.add"}, 2);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    shard mine = s.at(1);
    mine.connection_opened();
    for (int i = 0; i < 7; ++i) {
      mine.call_started();
      mine.call_finished(protocol::xmlrpc, 0, outcome::ok, microseconds(5));
    }
    mine.call_started();  // and dies in the middle of a call
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  auto m = samples(scrape(s));
  EXPECT_EQ(m[R"(rapidrpc_calls_total{protocol="xmlrpc",method="sample.add",outcome="ok"})"], "7");
  EXPECT_EQ(m["rapidrpc_calls_in_flight"], "1");
  EXPECT_EQ(m["rapidrpc_connections_open"], "1");
  s.reset_gauges(1);
  m = samples(scrape(s));
  EXPECT_EQ(m["rapidrpc_calls_in_flight"], "0");
  EXPECT_EQ(m["rapidrpc_connections_open"], "0");
  EXPECT_EQ(m["rapidrpc_connections_total"], "1");
}

// A scrape reads while the owners write: every value it sees is one the
// counter had (never torn, never going down).
TEST(MetricsStore, ScrapesWhileShardsAreWritten) {
  store s({"m"}, 2);
  constexpr int calls = 200000;
  std::vector<std::thread> writers;
  for (std::size_t w = 0; w < 2; ++w) {
    writers.emplace_back([&s, w] {
      shard mine = s.at(w);
      for (int i = 0; i < calls; ++i) {
        mine.call_started();
        mine.call_finished(protocol::xmlrpc, 0, outcome::ok, microseconds(1));
      }
    });
  }
  long last = 0;
  const std::string key = R"(rapidrpc_calls_total{protocol="xmlrpc",method="m",outcome="ok"})";
  for (int i = 0; i < 50; ++i) {
    auto m = samples(scrape(s));
    const long now = m.count(key) ? std::stol(m[key]) : 0;
    EXPECT_GE(now, last);
    EXPECT_LE(now, 2L * calls);
    last = now;
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(samples(scrape(s))[key], std::to_string(2 * calls));
}

TEST(MetricsStore, PoolFigures) {
  store s({}, 1);
  s.pool().queued = 3;
  s.pool().busy = 2;
  s.pool().restarted(restart_cause::crash);
  s.pool().restarted(restart_cause::timeout);
  s.pool().restarted(restart_cause::timeout);
  auto m = samples(scrape(s));
  EXPECT_EQ(m["rapidrpc_pool_queue_depth"], "3");
  EXPECT_EQ(m["rapidrpc_pool_busy_workers"], "2");
  EXPECT_EQ(m[R"(rapidrpc_worker_restarts_total{cause="crash"})"], "1");
  EXPECT_EQ(m[R"(rapidrpc_worker_restarts_total{cause="timeout"})"], "2");
  EXPECT_EQ(m.count("rapidrpc_worker_processes_up"), 0u);  // no processes: no series
  s.pool().processes_up = 2;
  EXPECT_EQ(samples(scrape(s))["rapidrpc_worker_processes_up"], "2");
}

TEST(MetricsStore, ProcessFiguresOfThisProcess) {
  const process_figures f = read_process_figures();
  EXPECT_GT(f.resident_bytes, 0u);
  EXPECT_GT(f.open_fds, 2u);  // at least the standard streams
  EXPECT_GT(f.max_fds, 0u);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LE(f.start_time_seconds, now + 1);
  EXPECT_GT(f.start_time_seconds, now - 24 * 3600.0);
}

}  // namespace
}  // namespace rapidrpc::detail::metrics

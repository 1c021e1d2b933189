// zmq_client against the real rapidrpcd serving JSON-RPC over ZeroMQ
// (--zmq tcp://127.0.0.1:* and --zmq ipc://...). Without a server:
// tests/module/client/zmq_no_server_test.cpp; the URL:
// tests/unit/client/zmq_endpoint_test.cpp.
#include "paths.hpp"
#include "peers.hpp"

#include <rapidrpc/zmq_client.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cfloat>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

namespace rapidrpc {
namespace {

using std::chrono::steady_clock;
using why = transport_error::reason;

double seconds_since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

// rapidrpcd with a ZeroMQ endpoint over tcp and one over ipc, started once
// for the whole test program. It prints "rapidrpcd: JSON-RPC over ZeroMQ at
// ADDRESS" for each endpoint it bound.
class zmq_daemon {
 public:
  static zmq_daemon& get() {
    static zmq_daemon d;
    return d;
  }
  const std::string& tcp() const { return tcp_; }
  const std::string& ipc() const { return ipc_; }

  // Stopped at once (stop(0) sends SIGKILL right after SIGTERM): a graceful
  // stop would wait for the sleeps some tests leave in flight
  // (tests/integration covers the daemon's shutdown).
  ~zmq_daemon() {
    server_->stop(std::chrono::seconds(0));
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  zmq_daemon() : dir_(make_dir()) {
    server_ = std::make_unique<test::child_server>(std::vector<std::string>{
        test::rapidrpcd_path, "--host", "127.0.0.1", "--port", "0", "--zmq", "tcp://127.0.0.1:*",
        "--zmq", "ipc://" + dir_ + "/rpc.sock"});
    // The endpoints are printed before the "listening on" line.
    static const std::regex bound(R"(JSON-RPC over ZeroMQ at (\S+))");
    const std::string& text = server_->startup_output();
    for (std::sregex_iterator it(text.begin(), text.end(), bound), end; it != end; ++it) {
      std::string address = (*it)[1];
      (address.starts_with("tcp://") ? tcp_ : ipc_) = address;
    }
    if (tcp_.empty() || ipc_.empty())
      throw std::runtime_error("rapidrpcd did not report its ZeroMQ endpoints; output: " + text);
  }

  static std::string make_dir() {
    char tmpl[] = "/tmp/rapidrpc-zmq-test-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    return tmpl;
  }

  std::string dir_;
  std::unique_ptr<test::child_server> server_;
  std::string tcp_, ipc_;
};

// ---- against rapidrpcd --------------------------------------------------------------

class Zmq : public ::testing::TestWithParam<const char*> {
 protected:
  std::string url() const {
    return std::string(GetParam()) == "tcp" ? zmq_daemon::get().tcp() : zmq_daemon::get().ipc();
  }
  void echo(zmq_client& c, const value& v) {
    EXPECT_EQ(c.call("echo", {v}), v) << to_debug_string(v);
  }
};

TEST_P(Zmq, EveryValueTypeRoundTrips) {
  zmq_client c(url());
  for (std::int32_t v : {0, 1, -1, INT32_MAX, INT32_MIN}) echo(c, value(v));
  for (std::int64_t v : {std::int64_t{1} << 40, INT64_MAX, INT64_MIN}) echo(c, value(v));
  echo(c, value(true));
  echo(c, value(false));
  for (double v : {0.5, -1e300, 5e-324, DBL_MAX, 1.0 / 3}) echo(c, value(v));
  for (const char* s :
       {"", "plain", "tab\there \"quoted\" \\ </value>", "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80"})
    echo(c, value(s));
  echo(c, value(nil));
  echo(c, value(bytes{std::string("\x00\x01\xff binary", 10)}));
  echo(c, value(date_time{2024, 1, 31, 12, 30, 5}));
  echo(c, value(array{}));
  echo(c, value(structure{}));
  structure s;
  s.emplace("list", value(array{value(1), value("two"), value(nil), value(array{value(2.5)})}));
  s.emplace("when", value(date_time{1999, 12, 31, 23, 59, 59}));
  s.emplace("nested",
            value(structure{{"deep", value(structure{{"x", value(std::int64_t{1} << 33)}})}}));
  echo(c, value(s));
  echo(c, value(std::string(200'000, 'z')));
}

TEST_P(Zmq, TypedCall) {
  zmq_client c(url());
  EXPECT_EQ(c.call<std::int32_t>("sample.add", 3, 5), 8);
  EXPECT_EQ(c.call<std::string>("echo", "hi"), "hi");
  try {
    c.call<std::string>("sample.add", 3, 5);
    FAIL() << "an int read as a string";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), why::bad_response);
  }
  // Containers, optionals and described structs, as over HTTP.
  using row = std::map<std::string, std::optional<std::vector<std::int64_t>>>;
  const row r{{"a", std::vector<std::int64_t>{1, std::int64_t{1} << 40}}, {"b", std::nullopt}};
  EXPECT_EQ(c.call<row>("echo", r), r);
  EXPECT_EQ((c.call<std::tuple<std::string, double>>("echo", std::tuple{std::string("x"), 0.5})),
            std::tuple(std::string("x"), 0.5));
}

TEST_P(Zmq, ErrorObjectsAreFaults) {
  zmq_client c(url());
  try {
    c.call("no.such.method");
    FAIL() << "no fault";
  } catch (const fault& f) {
    EXPECT_EQ(f.code(), fault_code::method_not_found) << f.what();
  }
  outcome o = c.try_call("sample.add", {value(INT32_MAX), value(1)});
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::application_error);
  // The socket is still good afterwards.
  EXPECT_EQ(c.call("echo", {value("after")}), value("after"));
}

TEST_P(Zmq, TimeoutThenTheLateReplyIsDropped) {
  zmq_client_options o;
  o.timeout = std::chrono::seconds(1);
  zmq_client c(url(), o);
  auto start = steady_clock::now();
  try {
    c.call("sleep", {value(5.0)});
    FAIL() << "sleep(5) returned within a 1 s timeout";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), why::timeout) << e.what();
  }
  double took = seconds_since(start);
  EXPECT_GE(took, 0.9);
  EXPECT_LE(took, 1.8);

  // A reply arriving after its call gave up must not answer the next call.
  o.timeout = std::chrono::milliseconds(100);
  zmq_client quick(url(), o);
  try {
    quick.call("sleep", {value(0.3)});
    FAIL() << "sleep(0.3) returned within a 100 ms timeout";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), why::timeout) << e.what();
  }
  ::usleep(400'000);  // the sleep's reply (true) is waiting now
  EXPECT_EQ(quick.call("echo", {value("mine")}), value("mine"));
}

TEST_P(Zmq, SixtyFourCallsInFlightCompleteOutOfOrder) {
  boost::asio::io_context io;
  zmq_client c(io.get_executor(), url());
  std::vector<std::string> order;  // "e<i>" or "s<i>", in completion order
  int bad = 0;
  auto start = steady_clock::now();
  for (int i = 0; i < 64; ++i) {
    if (i % 2 == 0) {
      c.async_call("sleep", {value(0.5)}, [&, i](outcome o) {
        if (!std::holds_alternative<value>(o) || std::get<value>(o) != value(true)) ++bad;
        order.push_back("s" + std::to_string(i));
      });
    } else {
      c.async_call("echo", {value(i)}, [&, i](outcome o) {
        if (!std::holds_alternative<value>(o) || std::get<value>(o) != value(i)) ++bad;
        order.push_back("e" + std::to_string(i));
      });
    }
  }
  EXPECT_TRUE(order.empty()) << "a completion ran inside async_call()";
  io.run();
  double took = seconds_since(start);
  EXPECT_EQ(bad, 0);
  ASSERT_EQ(order.size(), 64u);
  // Every echo was answered before any sleep: replies came back out of order.
  for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(order[i][0], 'e') << i;
  for (std::size_t i = 32; i < 64; ++i) EXPECT_EQ(order[i][0], 's') << i;
  EXPECT_LT(took, 2.0) << "the sleeps did not overlap";
}

// The server drops the connection of a message past its body limit (16 MiB
// by default) without a reply; the DEALER reconnects by itself.
TEST_P(Zmq, ARequestPastTheBodyLimitTimesOutAndTheSocketRecovers) {
  zmq_client_options o;
  o.timeout = std::chrono::seconds(2);
  zmq_client c(url(), o);
  EXPECT_EQ(c.call("echo", {value("before")}), value("before"));
  try {
    c.call("echo", {value(std::string(std::size_t{17} << 20, 'x'))});
    FAIL() << "a 17 MiB request was answered";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), why::timeout) << e.what();
  }
  EXPECT_EQ(c.call("echo", {value("after")}), value("after"));
}

// Guards the ZMQ_FD pitfall: the descriptor signals edges, and a send can
// consume the signal of a reply that has arrived. A client that missed one
// would stall here until the calls time out.
TEST_P(Zmq, ThousandsOfCallsSixtyFourInFlightNeverStall) {
  boost::asio::io_context io;
  zmq_client_options o;
  o.timeout = std::chrono::seconds(20);
  zmq_client c(io.get_executor(), url(), o);
  constexpr int total = 20'000;
  int started = 0, ok = 0, failed = 0;
  std::function<void()> start_one = [&] {
    int n = started++;
    c.async_call("sample.add", {value(n), value(1)}, [&, n](outcome r) {
      if (std::holds_alternative<value>(r) && std::get<value>(r) == value(n + 1))
        ++ok;
      else
        ++failed;
      if (started < total) start_one();
    });
  };
  for (int i = 0; i < 64; ++i) start_one();
  auto start = steady_clock::now();
  io.run();
  EXPECT_EQ(ok, total);
  EXPECT_EQ(failed, 0);
  EXPECT_LT(seconds_since(start), 15.0);
}

TEST_P(Zmq, AsyncTimeoutFailsOnlyThatCall) {
  boost::asio::io_context io;
  zmq_client_options o;
  o.timeout = std::chrono::milliseconds(500);
  zmq_client c(io.get_executor(), url(), o);
  std::optional<outcome> slow, fast;
  c.async_call("sleep", {value(5.0)}, [&](outcome r) { slow = std::move(r); });
  c.async_call("echo", {value("quick")}, [&](outcome r) { fast = std::move(r); });
  auto start = steady_clock::now();
  io.run();  // returns once both are done: nothing is left waiting
  double took = seconds_since(start);
  ASSERT_TRUE(slow && fast);
  EXPECT_EQ(std::get<value>(*fast), value("quick"));
  ASSERT_TRUE(std::holds_alternative<fault>(*slow));
  EXPECT_EQ(std::get<fault>(*slow).code(), fault_code::transport_error);
  EXPECT_GE(took, 0.4);
  EXPECT_LE(took, 1.5);
}

TEST_P(Zmq, CompletionsMayStartTheNextCall) {
  boost::asio::io_context io;
  zmq_client c(io.get_executor(), url());
  int done = 0;
  std::function<void(outcome)> next = [&](outcome o) {
    ASSERT_EQ(std::get<value>(o), value(done));
    if (++done < 200) c.async_call("echo", {value(done)}, next);
  };
  c.async_call("echo", {value(0)}, next);
  io.run();
  EXPECT_EQ(done, 200);
  // The io_context can be run again for more calls.
  io.restart();
  c.async_call("echo", {value("again")}, [&](outcome o) {
    EXPECT_EQ(std::get<value>(o), value("again"));
    ++done;
  });
  io.run();
  EXPECT_EQ(done, 201);
}

TEST_P(Zmq, DestroyingTheClientCompletesCallsInFlight) {
  boost::asio::io_context io;
  std::optional<zmq_client> c(std::in_place, io.get_executor(), url());
  std::optional<outcome> r;
  c->async_call("sleep", {value(5.0)}, [&](outcome o) { r = std::move(o); });
  io.poll();
  c.reset();
  EXPECT_FALSE(r) << "completed inside the destructor";
  auto start = steady_clock::now();
  io.run();
  EXPECT_LT(seconds_since(start), 1.0);
  ASSERT_TRUE(r && std::holds_alternative<fault>(*r));
  EXPECT_NE(std::get<fault>(*r).message().find("closed"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Endpoints, Zmq, ::testing::Values("tcp", "ipc"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
}  // namespace rapidrpc

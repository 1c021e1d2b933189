// The library's ZeroMQ endpoint end to end: an in-process server with
// server_options::zmq, called through a plain cppzmq DEALER socket.
#include <rapidrpc/server.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <gtest/gtest.h>
#include <zmq.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc {
namespace {

using namespace std::chrono_literals;

std::string add_request(int a, int b, int id) {
  return R"({"jsonrpc":"2.0","method":"add","params":[)" + std::to_string(a) + "," +
         std::to_string(b) + R"(],"id":)" + std::to_string(id) + "}";
}

class dealer {
 public:
  explicit dealer(const std::string& endpoint) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.connect(endpoint);
  }
  void send(const std::string& payload) { socket_.send(zmq::buffer(payload)); }
  // The next reply's payload, or nothing within `timeout`.
  std::optional<std::string> receive(std::chrono::milliseconds timeout = 10s) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
    zmq::message_t m;
    if (!socket_.recv(m)) return std::nullopt;
    return m.to_string();
  }

 private:
  zmq::context_t context_{1};
  zmq::socket_t socket_{context_, zmq::socket_type::dealer};
};

server_options zmq_options(serving_mode mode = serving_mode::async_pool) {
  server_options o;
  o.listen.host = "127.0.0.1";
  o.listen.port = 0;
  o.serving.threads = 1;
  o.workers.count = 2;
  o.serving.mode = mode;
  o.zmq.endpoints = {"tcp://127.0.0.1:*"};
  return o;
}

// The threads the last "heavy" (a pool method) and the last "later" (an
// async method, started on the endpoint's own thread) ran on.
struct threads_seen {
  std::mutex m;
  std::thread::id heavy, later;
};

void add_methods(server& s, threads_seen* seen = nullptr) {
  s.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
  s.add(
      "heavy",
      [seen](std::int32_t ms) {
        if (seen) {
          std::lock_guard lock(seen->m);
          seen->heavy = std::this_thread::get_id();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        return ms;
      },
      "", execution::pool);
  s.methods().add_async<bool>("later", [seen](responder reply, std::int32_t ms) {
    if (seen) {
      std::lock_guard lock(seen->m);
      seen->later = std::this_thread::get_id();
    }
    auto timer =
        std::make_shared<boost::asio::steady_timer>(reply.loop(), std::chrono::milliseconds(ms));
    timer->async_wait([timer, reply](const boost::system::error_code&) { reply.reply(true); });
  });
}

TEST(ServerZmq, ServesTheRegistryAndReportsItsAddress) {
  server s(zmq_options());
  add_methods(s);
  s.start();
  ASSERT_EQ(s.zmq_endpoints().size(), 1u);
  const std::string ep = s.zmq_endpoints().front();
  EXPECT_EQ(ep.rfind("tcp://127.0.0.1:", 0), 0u) << ep;
  EXPECT_NE(ep.back(), '*');
  dealer d(ep);
  d.send(add_request(3, 5, 1));
  EXPECT_EQ(d.receive(), R"({"jsonrpc":"2.0","result":8,"id":1})");
  d.send(R"({"jsonrpc":"2.0","method":"heavy","params":[10],"id":"h"})");
  EXPECT_EQ(d.receive(), R"({"jsonrpc":"2.0","result":10,"id":"h"})");
  s.stop(0ms);
  s.wait();
}

TEST(ServerZmq, PoolMethodsRunOnThePoolAndHoldUpNothing) {
  threads_seen seen;
  server s(zmq_options());
  add_methods(s, &seen);
  s.start();
  dealer d(s.zmq_endpoints().front());
  // The cheap call sent after the heavy one is answered first: the heavy
  // one is not running on the endpoint's thread.
  d.send(R"({"jsonrpc":"2.0","method":"heavy","params":[300],"id":"h"})");
  d.send(add_request(1, 2, 1));
  EXPECT_EQ(d.receive(), R"({"jsonrpc":"2.0","result":3,"id":1})");
  EXPECT_EQ(d.receive(), R"({"jsonrpc":"2.0","result":300,"id":"h"})");
  d.send(R"({"jsonrpc":"2.0","method":"later","params":[1],"id":"l"})");
  EXPECT_EQ(d.receive(), R"({"jsonrpc":"2.0","result":true,"id":"l"})");
  std::lock_guard lock(seen.m);
  EXPECT_NE(seen.heavy, seen.later) << "a pool method ran on the endpoint's thread";
}

TEST(ServerZmq, ServesInAsyncModeWithPoolMethodsOnItsOwnThread) {
  threads_seen seen;
  server s(zmq_options(serving_mode::async));
  add_methods(s, &seen);
  s.start();
  dealer d(s.zmq_endpoints().front());
  d.send(R"({"jsonrpc":"2.0","method":"heavy","params":[5],"id":1})");
  d.send(R"({"jsonrpc":"2.0","method":"later","params":[5],"id":2})");
  std::set<std::string> replies{d.receive().value_or("(none)"), d.receive().value_or("(none)")};
  EXPECT_EQ(replies, (std::set<std::string>{R"({"jsonrpc":"2.0","result":5,"id":1})",
                                            R"({"jsonrpc":"2.0","result":true,"id":2})"}));
  // async mode has no pool: "heavy" ran where "later" started, on the
  // endpoint's thread.
  std::lock_guard lock(seen.m);
  EXPECT_EQ(seen.heavy, seen.later);
  EXPECT_NE(seen.heavy, std::thread::id());
  EXPECT_NE(seen.heavy, std::this_thread::get_id());
}

TEST(ServerZmq, RefusesTheProcessModesAndPasswords) {
  for (auto mode : {serving_mode::sequential, serving_mode::fork, serving_mode::prefork}) {
    server s(zmq_options(mode));
    EXPECT_THROW(s.start(), std::invalid_argument) << mode_name(mode);
  }
  auto o = zmq_options();
  o.access.users = {{"alice", hash_password("pw", 1000)}};
  server s(o);
  EXPECT_THROW(s.start(), std::invalid_argument);
}

TEST(ServerZmq, AnAddressThatCannotBeBoundFailsStartAndReleasesThePort) {
  auto o = zmq_options();
  o.zmq.endpoints = {"tcp://127.0.0.1:*", "tcp://no-such-interface:1"};
  server s(o);
  try {
    s.start();
    FAIL() << "start() did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tcp://no-such-interface:1"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(s.zmq_endpoints().empty());
  EXPECT_EQ(s.port(), 0);
}

TEST(ServerZmq, TheAuthorizerSeesThePeersAddress) {
  std::mutex m;
  std::vector<std::string> seen;
  auto o = zmq_options();
  o.access.authorize = [&](std::string_view method, const call_peer* peer) {
    std::lock_guard lock(m);
    seen.push_back(std::string(method) + "@" + (peer ? peer->address.to_string() : "none"));
    return method != "heavy";
  };
  server s(o);
  add_methods(s);
  s.start();
  dealer d(s.zmq_endpoints().front());
  d.send(add_request(1, 2, 1));
  EXPECT_EQ(d.receive(), R"({"jsonrpc":"2.0","result":3,"id":1})");
  d.send(R"({"jsonrpc":"2.0","method":"heavy","params":[1],"id":2})");
  EXPECT_EQ(d.receive(),
            R"({"jsonrpc":"2.0","error":{"code":-32002,"message":"not authorized"},"id":2})");
  std::lock_guard lock(m);
  EXPECT_EQ(seen, (std::vector<std::string>{"add@127.0.0.1", "heavy@127.0.0.1"}));
}

// Requests the endpoint has not read yet get no reply at a stop
// (docs/zmq.md). Sends an inline call and waits for its reply: every request
// sent before it has been read by then. Replies that come first go to `replies`.
void wait_until_read(dealer& d, std::set<std::string>& replies) {
  d.send(add_request(1, 2, 100));
  const std::string mine = R"({"jsonrpc":"2.0","result":3,"id":100})";
  for (auto r = d.receive(); r; r = d.receive()) {
    if (*r == mine) return;
    replies.insert(*r);
  }
  ADD_FAILURE() << "the endpoint did not answer";
}

TEST(ServerZmq, StopAnswersTheCallsInFlight) {
  server s(zmq_options());
  add_methods(s);
  s.start();
  dealer d(s.zmq_endpoints().front());
  for (int i = 0; i < 10; ++i)
    d.send(R"({"jsonrpc":"2.0","method":")" + std::string(i % 2 ? "later" : "heavy") +
           R"(","params":[200],"id":)" + std::to_string(i) + "}");
  std::set<std::string> replies;
  wait_until_read(d, replies);
  s.stop(5s);
  s.wait();
  // Each with its own result, not an error.
  while (auto r = d.receive(1s)) replies.insert(*r);
  std::set<std::string> expected;
  for (int i = 0; i < 10; ++i)
    expected.insert(R"({"jsonrpc":"2.0","result":)" + std::string(i % 2 ? "true" : "200") +
                    R"(,"id":)" + std::to_string(i) + "}");
  EXPECT_EQ(replies, expected);
}

// Past the drain deadline the endpoint closes with pool calls still running;
// their late outcomes must find nothing freed (ASan checks this build), and
// they are not answered. wait() waits for the two calls running on the two
// workers (300 ms), not for the six queued behind them (900 ms more).
TEST(ServerZmq, StopPastTheDeadlineWithPoolCallsStillRunning) {
  server s(zmq_options());
  add_methods(s);
  s.start();
  dealer d(s.zmq_endpoints().front());
  for (int i = 0; i < 8; ++i) d.send(R"({"jsonrpc":"2.0","method":"heavy","params":[300],"id":1})");
  std::set<std::string> early;
  wait_until_read(d, early);
  ASSERT_TRUE(early.empty()) << *early.begin();
  auto t0 = std::chrono::steady_clock::now();
  s.stop(20ms);
  s.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(d.receive(200ms), std::nullopt) << "a call past the drain deadline was answered";
}

}  // namespace
}  // namespace rapidrpc

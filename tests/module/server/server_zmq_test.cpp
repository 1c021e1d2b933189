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
  return R"({"jsonrpc":"2.0","method":"add","params":[)" + std::to_string(a) + "," + std::to_string(b) +
         R"(],"id":)" + std::to_string(id) + "}";
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
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 1;
  o.workers = 2;
  o.mode = mode;
  o.zmq = {"tcp://127.0.0.1:*"};
  return o;
}

void add_methods(server& s) {
  s.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
  s.add("heavy", [](std::int32_t ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return ms;
  }, "", execution::pool);
  s.methods().add_async<bool>("later", [](responder reply, std::int32_t ms) {
    auto timer = std::make_shared<boost::asio::steady_timer>(reply.loop(), std::chrono::milliseconds(ms));
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

TEST(ServerZmq, ServesInAsyncModeWithPoolMethodsOnItsOwnThread) {
  server s(zmq_options(serving_mode::async));
  add_methods(s);
  s.start();
  dealer d(s.zmq_endpoints().front());
  d.send(R"({"jsonrpc":"2.0","method":"heavy","params":[5],"id":1})");
  d.send(R"({"jsonrpc":"2.0","method":"later","params":[5],"id":2})");
  std::set<std::string> replies{*d.receive(), *d.receive()};
  EXPECT_EQ(replies, (std::set<std::string>{R"({"jsonrpc":"2.0","result":5,"id":1})",
                                            R"({"jsonrpc":"2.0","result":true,"id":2})"}));
}

TEST(ServerZmq, RefusesTheProcessModesAndPasswords) {
  for (auto mode : {serving_mode::sequential, serving_mode::fork, serving_mode::prefork}) {
    server s(zmq_options(mode));
    EXPECT_THROW(s.start(), std::invalid_argument) << mode_name(mode);
  }
  auto o = zmq_options();
  o.users = {{"alice", hash_password("pw", 1000)}};
  server s(o);
  EXPECT_THROW(s.start(), std::invalid_argument);
}

TEST(ServerZmq, AnAddressThatCannotBeBoundFailsStartAndReleasesThePort) {
  auto o = zmq_options();
  o.zmq = {"tcp://127.0.0.1:*", "tcp://no-such-interface:1"};
  server s(o);
  try {
    s.start();
    FAIL() << "start() did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tcp://no-such-interface:1"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(s.zmq_endpoints().empty());
  EXPECT_EQ(s.port(), 0);
}

TEST(ServerZmq, TheAuthorizerSeesThePeersAddress) {
  std::mutex m;
  std::vector<std::string> seen;
  auto o = zmq_options();
  o.authorize = [&](std::string_view method, const call_peer* peer) {
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
  EXPECT_EQ(d.receive(), R"({"jsonrpc":"2.0","error":{"code":-32002,"message":"not authorized"},"id":2})");
  std::lock_guard lock(m);
  EXPECT_EQ(seen, (std::vector<std::string>{"add@127.0.0.1", "heavy@127.0.0.1"}));
}

TEST(ServerZmq, StopAnswersTheCallsInFlight) {
  server s(zmq_options());
  add_methods(s);
  s.start();
  dealer d(s.zmq_endpoints().front());
  for (int i = 0; i < 10; ++i)
    d.send(R"({"jsonrpc":"2.0","method":")" + std::string(i % 2 ? "later" : "heavy") + R"(","params":[200],"id":)" +
           std::to_string(i) + "}");
  std::this_thread::sleep_for(50ms);
  s.stop(5s);
  s.wait();
  int answered = 0;
  while (d.receive(1s)) ++answered;
  EXPECT_EQ(answered, 10);
}

// Past the drain deadline the endpoint closes with pool calls still running;
// their late outcomes must find nothing freed (ASan checks this build).
TEST(ServerZmq, StopPastTheDeadlineWithPoolCallsStillRunning) {
  server s(zmq_options());
  add_methods(s);
  s.start();
  dealer d(s.zmq_endpoints().front());
  for (int i = 0; i < 4; ++i) d.send(R"({"jsonrpc":"2.0","method":"heavy","params":[300],"id":1})");
  std::this_thread::sleep_for(50ms);
  auto t0 = std::chrono::steady_clock::now();
  s.stop(20ms);
  s.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
}

}  // namespace
}  // namespace rapidrpc

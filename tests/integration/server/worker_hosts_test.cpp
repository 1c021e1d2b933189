// Worker hosts (server_options::worker_listen, worker_connect; docs/
// scale-out.md) at the edge of the link's message size: a front and a host
// in this process, on 127.0.0.1, with pool methods whose call or answer is
// larger than a worker host may take or send (max_worker_frame_bytes, past
// which libzmq drops the connection reading it). Such a call must be
// answered, with a fault or by the front's own workers, never left waiting.
// tests/integration/test_worker_hosts.py covers the rest against rapidrpcd.
#include <rapidrpc/client.hpp>
#include <rapidrpc/server.hpp>
#include <rapidrpc/worker.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <variant>

namespace rapidrpc {
namespace {

constexpr std::size_t past_the_limit = max_worker_frame_bytes + 1024;

void add_methods(registry& r) {
  r.add(
      "big", [] { return std::string(past_the_limit, 'x'); }, "an answer past the limit",
      execution::pool);
  r.add(
      "nap",
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(3));
        return true;
      },
      "holds a worker for 3 s", execution::pool);
  r.add(
      "size", [](std::string s) { return static_cast<std::int64_t>(s.size()); },
      "the length of its argument", execution::pool);
}

class WorkerHosts : public ::testing::Test {
 protected:
  // A front with `local_workers` threads of its own and one host of one.
  void start(unsigned local_workers) {
    server_options f;
    f.listen.host = "127.0.0.1";
    f.listen.port = 0;
    f.serving.threads = 1;
    f.workers.count = local_workers;
    f.admin.metrics = true;  // for ready(): a host connected
    f.limits.max_body_bytes = 2 * max_worker_frame_bytes;
    f.worker_hosts.listen = {"tcp://127.0.0.1:*"};
    front_ = std::make_unique<server>(f);
    add_methods(front_->methods());
    front_->start();

    server_options h;
    h.listen.host = "127.0.0.1";
    h.listen.port = 0;
    h.serving.threads = 1;
    h.workers.count = 1;
    h.worker_hosts.connect = front_->worker_endpoints().at(0);
    host_ = std::make_unique<server>(h);
    add_methods(host_->methods());
    host_->start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!front_->ready() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(front_->ready());
  }

  void TearDown() override {
    for (auto* s : {host_.get(), front_.get()}) {
      if (s == nullptr) continue;
      s->stop();
      s->wait();
    }
  }

  outcome call(std::string_view method, array params) {
    client_options co;
    co.timeout = std::chrono::seconds(60);
    client c("http://127.0.0.1:" + std::to_string(front_->port()) + "/RPC2", co);
    return c.try_call(method, std::move(params));
  }

  std::unique_ptr<server> front_;
  std::unique_ptr<server> host_;
};

TEST_F(WorkerHosts, AnAnswerTooLargeToSendIsAFault) {
  start(0);
  outcome r = call("big", {});
  ASSERT_TRUE(std::holds_alternative<fault>(r));
  EXPECT_EQ(std::get<fault>(r).code(), fault_code::internal_error);
  EXPECT_NE(std::string(std::get<fault>(r).what()).find("larger than a worker host may send"),
            std::string::npos)
      << std::get<fault>(r).what();
  // The link is still up.
  outcome small = call("size", {std::string("four")});
  ASSERT_TRUE(std::holds_alternative<value>(small));
  EXPECT_EQ(std::get<value>(small), value(std::int64_t{4}));
}

TEST_F(WorkerHosts, ACallTooLargeForAHostIsAFaultWithoutWorkersOfItsOwn) {
  start(0);
  outcome r = call("size", {std::string(past_the_limit, 'y')});
  ASSERT_TRUE(std::holds_alternative<fault>(r));
  EXPECT_NE(std::string(std::get<fault>(r).what()).find("larger than a worker host may take"),
            std::string::npos)
      << std::get<fault>(r).what();
}

TEST_F(WorkerHosts, ACallTooLargeForAHostRunsOnTheFrontsOwnWorkers) {
  start(1);
  // The front's one worker is busy (a tie goes to it) and the host is free:
  // the large call waits for the front's worker rather than go to the host.
  std::thread napping([this] { EXPECT_TRUE(std::holds_alternative<value>(call("nap", {}))); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  outcome r = call("size", {std::string(past_the_limit, 'y')});
  napping.join();
  ASSERT_TRUE(std::holds_alternative<value>(r)) << std::get<fault>(r).what();
  EXPECT_EQ(std::get<value>(r), value(static_cast<std::int64_t>(past_the_limit)));
}

}  // namespace
}  // namespace rapidrpc

// Running JSON-RPC requests on a registry: named parameters and batches.
#include "rpc/jsonrpc_dispatch.hpp"
#include "registry/pool.hpp"

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace rapidrpc::detail::rpc {
namespace {

using jsonrpc::message;
using jsonrpc::parse_request;
using jsonrpc::request;

class DispatchTest : public ::testing::Test {
 protected:
  DispatchTest() {
    reg.add("subtract",
            [](std::int32_t minuend, std::int32_t subtrahend) { return minuend - subtrahend; });
    reg.set_param_names("subtract", {"minuend", "subtrahend"});
    reg.add("positional", [](std::int32_t a) { return a; });
    reg.add(
        "slow", [](std::int32_t a) { return a; }, "", execution::pool);
    // Waits (up to 2 s) until another call of it runs too, so a batch whose
    // entries run at once finishes fast and records a peak of two.
    reg.add(
        "paired",
        [this](std::int32_t a) {
          std::unique_lock lock(mutex);
          peak = std::max(peak, ++running);
          changed.notify_all();
          changed.wait_for(lock, std::chrono::seconds(2),
                           [this] { return running >= 2 || peak >= 2; });
          --running;
          return a;
        },
        "", execution::pool);
  }

  request parsed(std::string_view text) {
    auto m = std::get<message>(parse_request(text));
    return std::get<request>(std::move(m.entries.at(0)));
  }

  // The response text of a batch, run as the server runs it.
  std::string batch(std::string_view text) {
    auto m = std::get<message>(parse_request(text));
    std::optional<std::string> body;
    run_batch(reg, {io.get_executor(), nullptr, &on_pool}, std::move(m),
              [&](std::string b) { body = std::move(b); });
    io.restart();
    auto guard = boost::asio::make_work_guard(io);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!body && std::chrono::steady_clock::now() < deadline)
      io.run_one_for(std::chrono::milliseconds(100));
    if (!body) ADD_FAILURE() << "the batch never completed";
    return body.value_or("");
  }

  std::mutex mutex;
  std::condition_variable changed;
  int running = 0;
  int peak = 0;
  boost::asio::io_context io;
  boost::asio::thread_pool pool{2};
  thread_runner threads{pool.get_executor()};
  pool_target on_pool{&threads};
  registry reg;
};

TEST_F(DispatchTest, NamedParamsFollowTheRegisteredNames) {
  auto r = parsed(
      R"({"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":1})");
  EXPECT_FALSE(bind_named(reg, r));
  EXPECT_EQ(r.params, (array{std::int32_t{42}, std::int32_t{23}}));
}

// Trailing optional parameters may be left out by name too, but not one
// before another that is given: the call is positional by then.
TEST_F(DispatchTest, NamedParamsMayLeaveOutTrailingOptionalOnes) {
  reg.add("range",
          [](std::int32_t from, std::optional<std::int32_t> to, std::optional<std::int32_t> step) {
            return from + to.value_or(0) + step.value_or(0);
          });
  reg.set_param_names("range", {"from", "to", "step"});
  auto first = parsed(R"({"jsonrpc":"2.0","method":"range","params":{"from":1},"id":1})");
  EXPECT_FALSE(bind_named(reg, first));
  EXPECT_EQ(first.params, (array{1}));
  auto two = parsed(R"({"jsonrpc":"2.0","method":"range","params":{"to":5,"from":1},"id":1})");
  EXPECT_FALSE(bind_named(reg, two));
  EXPECT_EQ(two.params, (array{1, 5}));
  auto gap = parsed(R"({"jsonrpc":"2.0","method":"range","params":{"from":1,"step":2},"id":1})");
  auto f = bind_named(reg, gap);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->message(), "missing parameter 'to'");
  auto none = parsed(R"({"jsonrpc":"2.0","method":"range","params":{"to":1},"id":1})");
  f = bind_named(reg, none);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->message(), "missing parameter 'from'");
}

TEST_F(DispatchTest, NamedParamsErrors) {
  const char* cases[] = {
      R"({"jsonrpc":"2.0","method":"subtract","params":{"minuend":42},"id":1})",
      R"({"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":1,"x":0},"id":1})",
      R"({"jsonrpc":"2.0","method":"positional","params":{"a":1},"id":1})",
  };
  for (const char* text : cases) {
    auto r = parsed(text);
    auto f = bind_named(reg, r);
    ASSERT_TRUE(f) << text;
    EXPECT_EQ(f->code(), fault_code::invalid_params) << text;
  }
  // An empty object is no parameters, whatever the method.
  auto empty = parsed(R"({"jsonrpc":"2.0","method":"positional","params":{},"id":1})");
  EXPECT_FALSE(bind_named(reg, empty));
  // Unknown methods are left for invoke() to report.
  auto unknown = parsed(R"({"jsonrpc":"2.0","method":"nope","params":{"a":1},"id":1})");
  EXPECT_FALSE(bind_named(reg, unknown));
}

TEST_F(DispatchTest, BatchAnswersInOrderWithoutNotifications) {
  EXPECT_EQ(
      batch(R"([
      {"jsonrpc":"2.0","method":"slow","params":[1],"id":"a"},
      {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"b"},
      {"jsonrpc":"2.0","method":"subtract","params":[1,1]},
      {"foo":"boo"},
      {"jsonrpc":"2.0","method":"nope","id":5},
      {"jsonrpc":"2.0","method":"subtract","params":{"minuend":1},"id":6}
    ])"),
      R"([{"jsonrpc":"2.0","result":1,"id":"a"},)"
      R"({"jsonrpc":"2.0","result":19,"id":"b"},)"
      R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"a request needs \"jsonrpc\": \"2.0\""},"id":null},)"
      R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":5},)"
      R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":"missing parameter 'subtrahend'"},"id":6}])");
}

TEST_F(DispatchTest, AllNotificationsAnswerNothing) {
  EXPECT_EQ(
      batch(
          R"([{"jsonrpc":"2.0","method":"slow","params":[1]},{"jsonrpc":"2.0","method":"subtract","params":[1,2]}])"),
      "");
}

TEST_F(DispatchTest, BatchEntriesRunAtOnce) {
  std::string text = "[";
  for (int i = 0; i < 4; ++i)
    text += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","method":"paired","params":[)" +
            std::to_string(i) + "],\"id\":" + std::to_string(i) + "}";
  text += "]";
  auto body = batch(text);
  EXPECT_NE(body.find(R"("result":3,"id":3)"), std::string::npos) << body;
  EXPECT_EQ(peak, 2);  // both pool threads ran entries of the batch at once
}

}  // namespace
}  // namespace rapidrpc::detail::rpc

// Coroutine methods: a method returning boost::asio::awaitable<T> runs on
// the call's loop, and is cancelled past its deadline and when its caller
// goes.
#include <rapidrpc/registry.hpp>

#include "registry/caller_watch.hpp"
#include "registry/pool.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/describe/class.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rapidrpc {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

struct reading {
  std::string sensor;
  double celsius = 0;
};
BOOST_DESCRIBE_STRUCT(reading, (), (sensor, celsius))

// A caller that can be made to go, as a closed connection does.
class fake_caller final : public detail::caller_watch {
 public:
  void watch(std::weak_ptr<boost::asio::cancellation_signal> call) override {
    ++watched;
    calls.add(std::move(call));
  }
  int watched = 0;
  detail::watched_calls calls;
};

// What a waiting coroutine saw: how it ended.
struct wait_record {
  int started = 0;
  int cancelled = 0;  // its wait ended with operation_aborted
  int finished = 0;   // its frame is gone, however it ended
};

class CoroutineTest : public ::testing::Test {
 protected:
  call_context ctx() {
    call_context c{io.get_executor(), nullptr, &on_pool};
    c.caller = &caller;
    return c;
  }
  // Starts a call; its outcome lands in `result`.
  void start(std::string_view name, array params) {
    reg.invoke(ctx(), name, std::move(params), [this](outcome o) { result = std::move(o); });
  }
  // Runs the loop until `done` holds (at most 10 s: a bound, not a measure).
  template <class Pred>
  void run_until(Pred done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      io.restart();
      io.run_one_for(milliseconds(100));
    }
    ASSERT_TRUE(done()) << "the loop never got there";
  }
  outcome call(std::string_view name, array params) {
    start(name, std::move(params));
    run_until([this] { return result.has_value(); });
    return result ? std::move(*result) : outcome(fault(0, "never completed"));
  }
  // Registers "wait": waits `ms` on a timer, recording into `record`.
  void add_wait() {
    reg.add("wait", [this](std::int32_t ms) -> boost::asio::awaitable<bool> {
      ++record.started;
      struct leave {
        wait_record& r;
        ~leave() { ++r.finished; }
      } on_exit{record};
      auto loop = co_await boost::asio::this_coro::executor;
      boost::asio::steady_timer t(loop, milliseconds(ms));
      try {
        co_await t.async_wait(boost::asio::use_awaitable);
      } catch (const boost::system::system_error& e) {
        if (e.code() == boost::asio::error::operation_aborted) ++record.cancelled;
        throw;
      }
      co_return true;
    });
  }

  boost::asio::io_context io;
  registry reg;
  // Pool methods on a real thread pool (the pool outlives nothing the
  // registry holds: it is destroyed first).
  boost::asio::thread_pool pool{1};
  detail::thread_runner threads{pool.get_executor()};
  detail::pool_target on_pool{&threads};
  fake_caller caller;
  wait_record record;
  std::optional<outcome> result;
};

TEST_F(CoroutineTest, ReturnsWhatItCoReturnsAfterAwaiting) {
  reg.add("scaled",
          [](std::vector<reading> in, double by) -> boost::asio::awaitable<std::vector<reading>> {
            auto loop = co_await boost::asio::this_coro::executor;
            boost::asio::steady_timer t(loop, milliseconds(1));
            co_await t.async_wait(boost::asio::use_awaitable);
            for (auto& r : in) r.celsius *= by;
            co_return in;
          });
  auto o = call("scaled", {array{structure{{"sensor", "a"}, {"celsius", 1.5}}}, 2.0});
  ASSERT_TRUE(std::holds_alternative<value>(o));
  EXPECT_EQ(std::get<value>(o), value(array{structure{{"sensor", "a"}, {"celsius", 3.0}}}));
  const method* m = reg.find("scaled");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->where, execution::async);
  EXPECT_EQ(m->signature, (std::vector<std::string>{"array", "array", "double"}));
  EXPECT_EQ(m->result_schema.as<structure>().at("type"), value("array"));
}

TEST_F(CoroutineTest, AVoidCoroutineReturnsNil) {
  bool ran = false;
  reg.add("touch", [&ran]() -> boost::asio::awaitable<void> {
    ran = true;
    co_return;
  });
  auto o = call("touch", {});
  ASSERT_TRUE(std::holds_alternative<value>(o));
  EXPECT_TRUE(std::get<value>(o).is<nil_t>());
  EXPECT_TRUE(ran);
}

TEST_F(CoroutineTest, ArgumentsAreCheckedBeforeItRuns) {
  add_wait();
  auto o = call("wait", {"soon"});
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::invalid_params);
  EXPECT_STREQ(std::get<fault>(o).what(), "parameter 1: expected int, got string");
  EXPECT_EQ(record.started, 0);
}

TEST_F(CoroutineTest, AFaultItThrowsIsTheCallsFault) {
  reg.add("refuse", [](std::string why) -> boost::asio::awaitable<std::int32_t> {
    co_await boost::asio::this_coro::executor;
    throw fault(42, why);
  });
  reg.add("crash", []() -> boost::asio::awaitable<std::int32_t> {
    co_await boost::asio::this_coro::executor;
    throw std::runtime_error("/etc/secret");
  });
  auto o = call("refuse", {"no"});
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), 42);
  EXPECT_STREQ(std::get<fault>(o).what(), "no");
  result.reset();
  o = call("crash", {});
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::internal_error);
  EXPECT_STREQ(std::get<fault>(o).what(), "internal error");
}

TEST_F(CoroutineTest, PastItsDeadlineItIsCancelledAndTheCallTimesOut) {
  add_wait();
  ASSERT_TRUE(reg.set_timeout("wait", milliseconds(20)));
  auto o = call("wait", {3'600'000});
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::timeout);
  EXPECT_STREQ(std::get<fault>(o).what(), "the call took too long");
  // Not left waiting for an hour: its wait was cancelled and it ended.
  run_until([this] { return record.finished == 1; });
  EXPECT_EQ(record.cancelled, 1);
}

TEST_F(CoroutineTest, TheRegistrysDefaultTimeoutAppliesToo) {
  add_wait();
  reg.set_default_timeout(milliseconds(20));
  auto o = call("wait", {3'600'000});
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::timeout);
  run_until([this] { return record.finished == 1; });
  EXPECT_EQ(record.cancelled, 1);
}

TEST_F(CoroutineTest, WithinItsDeadlineItAnswers) {
  add_wait();
  reg.set_default_timeout(std::chrono::seconds(60));
  auto o = call("wait", {1});
  ASSERT_TRUE(std::holds_alternative<value>(o));
  EXPECT_EQ(std::get<value>(o), value(true));
  EXPECT_EQ(record.cancelled, 0);
}

TEST_F(CoroutineTest, WhenItsCallerGoesItIsCancelled) {
  add_wait();
  start("wait", {3'600'000});
  EXPECT_EQ(caller.watched, 1);
  run_until([this] { return record.started == 1; });  // waiting on its timer now
  caller.calls.gone();
  run_until([this] { return record.finished == 1; });
  EXPECT_EQ(record.cancelled, 1);
  // Its call completes all the same (no one reads the answer).
  run_until([this] { return result.has_value(); });
}

TEST_F(CoroutineTest, ACallThatEndedIsNotWatchedAnyMore) {
  add_wait();
  auto o = call("wait", {1});
  ASSERT_TRUE(std::holds_alternative<value>(o));
  run_until([this] { return record.finished == 1; });
  EXPECT_FALSE(caller.calls.any());
  caller.calls.gone();  // nothing left to cancel
  EXPECT_EQ(record.cancelled, 0);
}

TEST_F(CoroutineTest, ItAwaitsAPoolMethodThroughTheRegistry) {
  reg.add(
      "heavy", [](std::int32_t x) { return x * 2; }, "", execution::pool);
  reg.add(
      "heavier", [this](call_context c, std::int32_t x) -> boost::asio::awaitable<std::int32_t> {
        const value once = co_await reg.async_call(c, "heavy", boost::asio::use_awaitable, x);
        const value twice = co_await reg.async_call(c, "heavy", boost::asio::use_awaitable, once);
        co_return twice.as<std::int32_t>();
      });
  // The context is not one of the call's parameters.
  EXPECT_EQ(reg.find("heavier")->signature, (std::vector<std::string>{"int", "int"}));
  auto o = call("heavier", {5});
  ASSERT_TRUE(std::holds_alternative<value>(o));
  EXPECT_EQ(std::get<value>(o), value(20));
}

TEST_F(CoroutineTest, TheAwaitedCallsFaultIsThrownInTheCoroutine) {
  reg.add("relay",
          [this](call_context c, std::string name) -> boost::asio::awaitable<std::int32_t> {
            try {
              co_await reg.async_call(c, name, boost::asio::use_awaitable);
            } catch (const fault& f) {
              co_return f.code();
            }
            co_return 0;
          });
  auto o = call("relay", {"no.such.method"});
  ASSERT_TRUE(std::holds_alternative<value>(o));
  EXPECT_EQ(std::get<value>(o), value(fault_code::method_not_found));
}

TEST_F(CoroutineTest, CancelledWhileAwaitingAPoolCallItGoesOnAtOnce) {
  // Let go however the test ends: the pool joins its thread at the end.
  struct let_go {
    std::promise<void> p;
    ~let_go() { p.set_value(); }
  } release;
  std::shared_future<void> released = release.p.get_future().share();
  reg.add(
      "stuck",
      [released] {
        released.wait();
        return true;
      },
      "", execution::pool);
  reg.add("waits_on_stuck", [this](call_context c) -> boost::asio::awaitable<bool> {
    ++record.started;
    try {
      co_await reg.async_call(c, "stuck", boost::asio::use_awaitable);
    } catch (const boost::system::system_error& e) {
      if (e.code() == boost::asio::error::operation_aborted) ++record.cancelled;
      throw;
    }
    co_return true;
  });
  ASSERT_TRUE(reg.set_timeout("waits_on_stuck", milliseconds(20)));
  auto o = call("waits_on_stuck", {});
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::timeout);
  // Cancelled while the pool method is still stuck: not held by it.
  run_until([this] { return record.cancelled == 1; });
}

TEST_F(CoroutineTest, ACoroutineMethodRunsOnTheLoopOnly) {
  EXPECT_THROW(reg.add(
                   "elsewhere", []() -> boost::asio::awaitable<bool> { co_return true; }, "",
                   execution::pool),
               std::invalid_argument);
}

}  // namespace
}  // namespace rapidrpc

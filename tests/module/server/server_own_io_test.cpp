// rapidrpc::server on a caller's io_context: served there, beside the
// caller's own work, by the thread that runs it; finished with no work left
// there; refused where it could not be served safely.
#include <rapidrpc/client.hpp>
#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace rapidrpc {
namespace {

server_options on_loopback() {
  server_options o;
  o.listen.host = "127.0.0.1";
  o.listen.port = 0;
  o.workers.count = 1;
  return o;
}

std::string url_of(const server& s) { return "http://127.0.0.1:" + std::to_string(s.port()); }

TEST(ServerOwnIo, ServesOnTheCallersThreadAndLeavesNoWorkBehind) {
  boost::asio::io_context io(1);
  server s(io, on_loopback());
  std::thread::id ran_on;
  s.add("where", [&ran_on] {
    ran_on = std::this_thread::get_id();
    return true;
  });
  s.add(
      "heavy", [](std::int32_t x) { return x * 2; }, "", execution::pool);
  s.start();
  const std::string url = url_of(s);
  bool answered = false;
  std::int32_t heavy = 0;
  // A caller on another thread; the io_context runs on this one.
  std::thread caller([&] {
    client c(url);
    answered = c.call<bool>("where");
    heavy = c.call<std::int32_t>("heavy", 21);
    s.stop();
  });
  io.run();  // returns once the server has stopped: no work of its left here
  caller.join();
  s.wait();
  EXPECT_TRUE(answered);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(heavy, 42);
}

TEST(ServerOwnIo, ACoroutineMethodAwaitsTheClientOnTheSameLoop) {
  boost::asio::io_context io(1);
  server s(io, on_loopback());
  std::string url;
  s.add("double", [](std::int32_t x) { return 2 * x; });
  s.add("quadruple", [&url](std::int32_t x) -> boost::asio::awaitable<std::int32_t> {
    // (GCC 12 mis-builds a co_await inside a call whose other arguments
    // make temporaries, here the client's default options: awaited first.)
    auto loop = co_await boost::asio::this_coro::executor;
    client c(loop, url);
    const auto twice = co_await c.async_call<std::int32_t>("double", boost::asio::use_awaitable, x);
    co_return co_await c.async_call<std::int32_t>("double", boost::asio::use_awaitable, twice);
  });
  s.start();
  url = url_of(s);
  std::int32_t got = 0;
  std::thread caller([&] {
    got = client(url).call<std::int32_t>("quadruple", 5);
    s.stop();
  });
  io.run();
  caller.join();
  s.wait();
  EXPECT_EQ(got, 20);
}

TEST(ServerOwnIo, AFaultTheClientGetsIsThrownInTheCoroutine) {
  boost::asio::io_context io(1);
  server s(io, on_loopback());
  std::string url;
  s.add("refuse", []() -> std::int32_t { throw fault(42, "no"); });
  s.add("ask", [&url](std::string name) -> boost::asio::awaitable<std::string> {
    auto loop = co_await boost::asio::this_coro::executor;
    client c(loop, url);
    try {
      co_await c.async_call<std::int32_t>(name, boost::asio::use_awaitable);
    } catch (const fault& f) {
      co_return std::to_string(f.code()) + " " + f.what();
    }
    co_return "no fault";
  });
  s.start();
  url = url_of(s);
  std::string refused;
  std::string missing;
  std::thread caller([&] {
    client c(url);
    refused = c.call<std::string>("ask", "refuse");
    missing = c.call<std::string>("ask", "no.such.method");
    s.stop();
  });
  io.run();
  caller.join();
  s.wait();
  EXPECT_EQ(refused, "42 no");
  EXPECT_EQ(missing, "-32601 method not found");
}

TEST(ServerOwnIo, WaitOnTheThreadThatRunsItIsRefused) {
  boost::asio::io_context io(1);
  server s(io, on_loopback());
  s.start();
  bool refused = false;
  boost::asio::post(io, [&] {
    try {
      s.wait();
    } catch (const std::logic_error&) {
      refused = true;
    }
    s.stop();
  });
  io.run();
  s.wait();
  EXPECT_TRUE(refused);
}

TEST(ServerOwnIo, AnIoContextStoppedBeforeTheServerFinishedIsSaidSo) {
  boost::asio::io_context io(1);
  server s(io, on_loopback());
  s.start();
  io.stop();  // never run: the server cannot finish there
  s.stop();
  EXPECT_THROW(s.wait(), std::logic_error);
  // Run now, the io_context lets it finish.
  io.restart();
  std::thread runner([&io] { io.run(); });
  s.wait();
  runner.join();
}

TEST(ServerOwnIo, WhatCannotBeServedSafelyIsRefusedAtStart) {
  {
    boost::asio::io_context io(4);  // made for four threads
    server s(io, on_loopback());
    EXPECT_THROW(s.start(), std::invalid_argument);
  }
  {
    boost::asio::io_context io(1);
    auto o = on_loopback();
    o.serving.threads = 2;
    server s(io, o);
    EXPECT_THROW(s.start(), std::invalid_argument);
  }
  {
    boost::asio::io_context io(1);
    auto o = on_loopback();
    o.serving.mode = serving_mode::prefork;
    server s(io, o);
    EXPECT_THROW(s.start(), std::invalid_argument);
  }
  {
    boost::asio::io_context io;  // the default hint: it may be run by one thread
    server s(io, on_loopback());
    EXPECT_NO_THROW(s.start());
    s.stop();
    io.run();
    s.wait();
  }
}

}  // namespace
}  // namespace rapidrpc

// zmq_client with no server at the other end (a free port on 127.0.0.1, an
// ipc:// path nobody binds): calls time out, and what cannot be written is
// refused before anything is sent.
#include "peers.hpp"

#include <rapidrpc/zmq_client.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace rapidrpc {
namespace {

using std::chrono::steady_clock;
using why = transport_error::reason;

double seconds_since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

// A tcp:// endpoint on 127.0.0.1 with nothing bound to it.
std::string nobody_there() {
  unsigned short port = 0;
  {
    test::scripted_server s([](int, int) {});
    port = s.port();
  }  // closed again: a free port
  return "tcp://127.0.0.1:" + std::to_string(port);
}

TEST(ZmqNoServer, SynchronousCallTimesOut) {
  zmq_client_options o;
  o.timeout = std::chrono::milliseconds(500);
  for (const std::string& url :
       {nobody_there(), std::string("ipc:///tmp/rapidrpc-no-such-endpoint.sock")}) {
    zmq_client c(url, o);
    auto start = steady_clock::now();
    try {
      c.call("echo", {value(1)});
      FAIL() << "a reply from nobody at " << url;
    } catch (const transport_error& e) {
      EXPECT_EQ(e.why(), why::timeout) << e.what();
    }
    EXPECT_GE(seconds_since(start), 0.4);
    EXPECT_LE(seconds_since(start), 1.5);
  }
}

TEST(ZmqNoServer, AsynchronousCallsTimeOut) {
  boost::asio::io_context io;
  zmq_client_options o;
  o.timeout = std::chrono::milliseconds(300);
  zmq_client c(io.get_executor(), nobody_there(), o);
  int timed_out = 0;
  for (int i = 0; i < 10; ++i)
    c.async_call("echo", {value(i)}, [&](outcome r) {
      if (std::holds_alternative<fault>(r) &&
          std::get<fault>(r).code() == fault_code::transport_error)
        ++timed_out;
    });
  auto start = steady_clock::now();
  io.run();
  EXPECT_EQ(timed_out, 10);
  EXPECT_LE(seconds_since(start), 1.5);
}

TEST(ZmqNoServer, AValueThatCannotBeWrittenThrowsAndSendsNothing) {
  boost::asio::io_context io;
  zmq_client c(io.get_executor(), nobody_there());
  bool called = false;
  EXPECT_THROW(c.async_call("echo", {value(std::string("\xff"))}, [&](outcome) { called = true; }),
               std::invalid_argument);
  io.run();  // returns at once: no call is in flight
  EXPECT_FALSE(called);
  zmq_client sync(nobody_there());
  EXPECT_THROW(sync.call("echo", {value(std::string("\xff"))}), std::invalid_argument);
  EXPECT_THROW(sync.async_call("echo", {}, [](outcome) {}), std::logic_error);
}

}  // namespace
}  // namespace rapidrpc

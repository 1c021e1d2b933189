// server::start() refuses the option combinations it would not honour,
// before it binds anything.
#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace rapidrpc {
namespace {

server_options local() {
  server_options o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 1;
  o.workers = 1;
  return o;
}

void expect_refused(const server_options& o, const std::string& why) {
  server s(o);
  try {
    s.start();
    ADD_FAILURE() << "started: " << why;
    s.stop();
    s.wait();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_EQ(s.port(), 0) << "a port was bound before the refusal";
  }
}

TEST(ServerOptions, IsolateOutsideAsyncPoolIsRefused) {
  for (auto mode :
       {serving_mode::async, serving_mode::sequential, serving_mode::fork, serving_mode::prefork}) {
    auto o = local();
    o.mode = mode;
    o.isolate = true;
    o.worker_command = {"/bin/true"};
    expect_refused(o, "needs mode async-pool, not " + std::string(mode_name(mode)));
  }
}

TEST(ServerOptions, IsolateAndWorkerCommandGoTogether) {
  auto without_command = local();
  without_command.isolate = true;
  expect_refused(without_command, "isolate needs a worker_command");

  auto without_isolate = local();
  without_isolate.worker_command = {"/bin/true"};
  expect_refused(without_isolate, "worker_command is used with isolate only");

  auto recycling_threads = local();
  recycling_threads.worker_max_requests = 10;
  expect_refused(recycling_threads, "worker_max_requests is used with isolate only");
}

TEST(ServerOptions, RespawnBackOffOutsidePreforkIsRefused) {
  // Only prefork replaces its workers with a back-off: set elsewhere, it
  // would be ignored without a word.
  for (auto mode : {serving_mode::async_pool, serving_mode::async, serving_mode::sequential,
                    serving_mode::fork}) {
    auto base = local();
    base.mode = mode;
    auto o = base;
    o.respawn_backoff = std::chrono::milliseconds(25);
    expect_refused(o, "used with mode prefork only, not " + std::string(mode_name(mode)));
    o = base;
    o.respawn_backoff_max = std::chrono::seconds(1);
    expect_refused(o, "used with mode prefork only");
  }
}

}  // namespace
}  // namespace rapidrpc

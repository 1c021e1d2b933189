// server::start() refuses the option combinations it would not honour,
// before it binds anything.
#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rapidrpc {
namespace {

server_options local() {
  server_options o;
  o.listen.host = "127.0.0.1";
  o.listen.port = 0;
  o.serving.threads = 1;
  o.workers.count = 1;
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
    o.serving.mode = mode;
    o.workers.isolate = true;
    o.workers.command = {"/bin/true"};
    expect_refused(o, "needs serving.mode async-pool, not " + std::string(mode_name(mode)));
  }
}

TEST(ServerOptions, IsolateAndWorkerCommandGoTogether) {
  auto without_command = local();
  without_command.workers.isolate = true;
  expect_refused(without_command, "workers.isolate needs a workers.command");

  auto without_isolate = local();
  without_isolate.workers.command = {"/bin/true"};
  expect_refused(without_isolate, "workers.command is used with workers.isolate only");

  auto recycling_threads = local();
  recycling_threads.workers.max_requests = 10;
  expect_refused(recycling_threads, "workers.max_requests is used with workers.isolate only");
}

TEST(ServerOptions, RespawnBackOffOutsidePreforkIsRefused) {
  // Only prefork replaces its workers with a back-off: set elsewhere, it
  // would be ignored without a word.
  for (auto mode : {serving_mode::async_pool, serving_mode::async, serving_mode::sequential,
                    serving_mode::fork}) {
    auto base = local();
    base.serving.mode = mode;
    auto o = base;
    o.serving.respawn_backoff = std::chrono::milliseconds(25);
    expect_refused(o, "used with serving.mode prefork only, not " + std::string(mode_name(mode)));
    o = base;
    o.serving.respawn_backoff_max = std::chrono::seconds(1);
    expect_refused(o, "used with serving.mode prefork only");
  }
}

TEST(ServerOptions, TheServersOwnLinesGoToTheLogSink) {
  // A worker command that exits at once: the pool says so, and replaces it,
  // through options.log.lines rather than on standard error.
  std::mutex mutex;
  std::condition_variable heard_one;
  std::vector<std::pair<log_level, std::string>> heard;
  auto o = local();
  o.workers.isolate = true;
  o.workers.command = {"/bin/false"};
  o.log.lines = [&](log_level level, std::string_view text) {
    std::lock_guard lock(mutex);
    heard.emplace_back(level, std::string(text));
    heard_one.notify_all();
  };
  server s(o);
  s.start();
  {
    std::unique_lock lock(mutex);
    heard_one.wait_for(lock, std::chrono::seconds(30), [&] { return !heard.empty(); });
    ASSERT_FALSE(heard.empty()) << "no line in 30 s";
    EXPECT_EQ(heard.front().first, log_level::error);
    EXPECT_NE(heard.front().second.find("exited with status 1"), std::string::npos)
        << heard.front().second;
    EXPECT_EQ(heard.front().second.find("rapidrpc: "), std::string::npos) << heard.front().second;
  }
  s.stop(std::chrono::milliseconds(0));
  s.wait();
}

}  // namespace
}  // namespace rapidrpc

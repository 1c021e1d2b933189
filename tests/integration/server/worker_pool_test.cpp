// The worker processes of isolate as they start and when they die before
// they are ready (docs/design.md, "Worker processes"): no call goes to a
// worker before it says it is ready, so its start counts against no call's
// timeout; one that dies first is replaced, and while none is ready the
// call waiting fails after three; one that never says so is replaced. The
// workers are `rapidrpcd --worker` behind a shell that first holds the
// socket for a while, or exits.
#include "worker/worker_pool.hpp"
#include "paths.hpp"

#include <rapidrpc/client.hpp>
#include <rapidrpc/demo.hpp>
#include <rapidrpc/server.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <unistd.h>

namespace rapidrpc {
namespace {

namespace fs = std::filesystem;

class WorkerPool : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rapidrpc-worker-pool-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One worker process; `script` runs in sh with $0 the test's folder and $1
  // rapidrpcd.
  outcome call_with_worker(const std::string& script,
                           std::chrono::milliseconds method_timeout = {}) {
    server_options o;
    o.workers.method_timeout = method_timeout;
    o.listen.host = "127.0.0.1";
    o.listen.port = 0;
    o.serving.threads = 1;
    o.workers.count = 1;
    o.workers.isolate = true;
    o.workers.command = {"/bin/sh", "-c", script, dir_.string(), test::rapidrpcd_path};
    server s(o);
    demo::add_methods(s.methods());
    s.start();
    client_options co;
    co.timeout = std::chrono::seconds(20);
    client c("http://127.0.0.1:" + std::to_string(s.port()) + "/RPC2", co);
    outcome result = c.try_call("load", {20});
    s.stop();
    s.wait();
    return result;
  }

  // One load(20) through `pool`, posted back to a loop of the test's own:
  // its outcome, or none if it has none within `limit`.
  static std::optional<outcome> load_through(detail::pool_runner& pool,
                                             std::chrono::seconds limit) {
    registry methods;
    demo::add_methods(methods);
    boost::asio::io_context loop;
    auto work = boost::asio::make_work_guard(loop);
    std::optional<outcome> got;
    detail::pool_call call;
    call.m = methods.find("load");
    call.name = "load";
    call.params = {value(20)};
    call.loop = loop.get_executor();
    call.done = [&](outcome o) {
      got = std::move(o);
      loop.stop();
    };
    pool.run(std::move(call));
    loop.run_for(limit);
    return got;
  }

  // How many workers started: each script adds a line to $0/started.
  int workers_started() const {
    std::ifstream in(dir_ / "started");
    std::string line;
    int started = 0;
    while (std::getline(in, line)) ++started;
    return started;
  }

  fs::path dir_;
};

TEST_F(WorkerPool, ACallAWorkerDiedWithoutReadingGoesToTheNextWorker) {
  // The first worker holds the call unread for 0.5 s and exits; the one that
  // replaces it is a real worker.
  outcome r = call_with_worker(
      R"(mkdir "$0/once" 2>/dev/null && { sleep 0.5; exit 0; }; exec "$1" --worker)");
  ASSERT_TRUE(std::holds_alternative<value>(r)) << std::get<fault>(r).what();
  EXPECT_EQ(std::get<value>(r), value("6765"));
}

TEST_F(WorkerPool, ACallNoWorkerReadsFailsAfterThreeWorkers) {
  // Every worker dies without reading: the call fails, after three workers
  // (it counts them in $0).
  outcome r = call_with_worker(R"(echo x >>"$0/started"; sleep 0.2)");
  ASSERT_TRUE(std::holds_alternative<fault>(r));
  EXPECT_EQ(std::get<fault>(r).code(), fault_code::internal_error);
  EXPECT_NE(std::string(std::get<fault>(r).what()).find("keep dying"), std::string::npos)
      << std::get<fault>(r).what();
  // (a fourth may have started by the time the fault came: workers are
  // replaced at once)
  EXPECT_GE(workers_started(), 3);
  EXPECT_LE(workers_started(), 4);
}

TEST_F(WorkerPool, AWorkersStartCountsAgainstNoCallsTimeout) {
  // The worker takes 1 s to start, twice the call's timeout; the call waits
  // for it, then takes a few milliseconds.
  outcome r = call_with_worker(R"(sleep 1; exec "$1" --worker)", std::chrono::milliseconds(500));
  ASSERT_TRUE(std::holds_alternative<value>(r)) << std::get<fault>(r).what();
  EXPECT_EQ(std::get<value>(r), value("6765"));
}

TEST_F(WorkerPool, AWorkerNeverReadyIsReplacedAndTheCallWaitingFailsAfterThree) {
  // Each worker holds its socket without a word until killed at the start
  // timeout (0.2 s here); each counts against the one call waiting.
  worker_options wo;
  wo.command = {"/bin/sh", "-c", R"(echo x >>"$0/started"; exec sleep 30)", dir_.string()};
  auto pool = make_worker_pool(wo, 1, nullptr, std::chrono::milliseconds(200));
  auto got = load_through(*pool, std::chrono::seconds(10));
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(std::holds_alternative<fault>(*got));
  EXPECT_NE(std::string(std::get<fault>(*got).what()).find("keep dying"), std::string::npos)
      << std::get<fault>(*got).what();
  pool.reset();
  EXPECT_GE(workers_started(), 3);
  EXPECT_LE(workers_started(), 4);
}

TEST_F(WorkerPool, AForkedWorkerThatEndsAtOnceIsReapedWithItsStatus) {
  // A warm parent whose workers end as they are forked: it answers the
  // fork (P) and says the worker ended (X) at once, so the pool reads both
  // in one go, before its fork() has returned. The death is still the
  // worker's own, with its status, not a status lost with the parent.
  const fs::path parent = dir_ / "parent.py";
  {
    std::ofstream script(parent);
    script << R"(import os, socket
c = socket.socket(fileno=3)
c.send(b"R")
while True:
    message, fds, _, _ = socket.recv_fds(c, 16, 1)
    if not message:
        break
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    pidfd = os.pidfd_open(pid)
    os.waitpid(pid, 0)
    socket.send_fds(c, [b"P%d" % pid], [pidfd])
    c.send(b"X%d %d" % (pid, 7 << 8))
    for fd in fds + [pidfd]:
        os.close(fd)
)";
  }
  std::mutex m;
  std::condition_variable said;
  std::vector<std::string> lines;
  detail::logger log([&](log_level, std::string_view text) {
    std::lock_guard lock(m);
    lines.emplace_back(text);
    said.notify_all();
  });
  worker_options wo;
  wo.command = {"/usr/bin/python3", parent.string()};
  wo.warm_parent = true;
  auto pool = make_worker_pool(wo, 1, nullptr, worker_start_timeout, log);
  std::unique_lock lock(m);
  const bool died = said.wait_for(lock, std::chrono::seconds(20), [&] {
    return std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("worker process") != std::string::npos &&
             l.find("; replacing it") != std::string::npos;
    });
  });
  const auto all = lines;
  lock.unlock();
  pool.reset();
  std::string text;
  for (const auto& l : all) text += l + "\n";
  ASSERT_TRUE(died) << text;
  EXPECT_NE(text.find("exited with status 7"), std::string::npos) << text;
  EXPECT_EQ(text.find("ended with its warm parent"), std::string::npos) << text;
}

TEST_F(WorkerPool, AWorkerThatCannotBeStartedIsTriedAgainUntilItCan) {
  // The worker program is not there: each start fails (posix_spawn), and
  // counts against the call waiting, which fails after three. Once the
  // program is there, the slot's next try starts it and a call succeeds.
  const fs::path program = dir_ / "worker";
  worker_options wo;
  wo.command = {program.string()};
  auto pool = make_worker_pool(wo, 1);
  auto call = [&] { return load_through(*pool, std::chrono::seconds(15)); };
  auto first = call();
  ASSERT_TRUE(first.has_value()) << "the call waiting never heard the worker cannot start";
  ASSERT_TRUE(std::holds_alternative<fault>(*first));
  EXPECT_NE(std::string(std::get<fault>(*first).what()).find("keep dying"), std::string::npos)
      << std::get<fault>(*first).what();
  {
    std::ofstream script(program);
    script << "#!/bin/sh\nexec '" << test::rapidrpcd_path << "' --worker\n";
  }
  fs::permissions(program, fs::perms::owner_all);
  auto second = call();
  ASSERT_TRUE(second.has_value()) << "no worker started once the program was there";
  ASSERT_TRUE(std::holds_alternative<value>(*second)) << std::get<fault>(*second).what();
  EXPECT_EQ(std::get<value>(*second), value("6765"));
}

}  // namespace
}  // namespace rapidrpc

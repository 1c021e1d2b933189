// A start that fails part-way leaves nothing running: for every N, the Nth
// thread the server would start cannot be had (pthread_create says EAGAIN,
// as it does at a thread limit), start() throws, and the process has the
// threads, descriptors and children it had before. Every part of the server that
// runs on a thread of its own takes one (the access log's writer, the pool
// threads, the loops, the admin listener, the ZeroMQ endpoint), so every
// service and every step of the start is the one that fails once.
//
// This executable interposes pthread_create (its own definition comes before
// libc's, and before a sanitizer's, which it then calls): std::thread,
// Boost.Asio and libzmq all start their threads through it. libzmq's own
// threads (its context's I/O threads) are not failed: libzmq aborts on
// that rather than report it.
#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

namespace {

std::atomic<int> fail_at{0};  // the call to fail, from 1; 0: none
std::atomic<int> calls{0};    // calls counted since the last reset

bool from_libzmq(void* caller) {
  Dl_info info{};
  return dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libzmq") != nullptr;
}

}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) {
  using real_create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real = reinterpret_cast<real_create>(dlsym(RTLD_NEXT, "pthread_create"));
  if (!from_libzmq(__builtin_return_address(0)) && calls.fetch_add(1) + 1 == fail_at.load())
    return EAGAIN;
  return real(thread, attr, start, arg);
}

namespace rapidrpc {
namespace {

std::size_t entries(const char* dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

std::size_t threads() { return entries("/proc/self/task"); }
std::size_t descriptors() { return entries("/proc/self/fd"); }

// What each descriptor is, for a failure's message.
std::string descriptor_list() {
  std::string out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    out += e.path().filename().string() + " " +
           std::filesystem::read_symlink(e.path(), ec).string() + "\n";
  }
  return out;
}

// Waits for the thread count to come back to `want`: a thread joined has
// ended, but one a library detached may take a moment to leave /proc.
std::size_t threads_settled(std::size_t want) {
  for (int i = 0; i < 200 && threads() != want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return threads();
}

// No child process is left, running or unreaped.
bool no_children() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// Starts a server from `make()` once to count the threads a whole start
// takes, then once more for each of them, failing that one.
void fail_each_thread(const std::function<server_options()>& make, int at_least) {
  const std::size_t threads_before = threads();
  const std::size_t fds_before = descriptors();

  calls = 0;
  {
    server s(make());
    s.start();
    s.stop(std::chrono::milliseconds(0));
    s.wait();
  }
  const int total = calls.load();
  ASSERT_GE(total, at_least);
  EXPECT_EQ(threads_settled(threads_before), threads_before);
  EXPECT_EQ(descriptors(), fds_before);
  EXPECT_TRUE(no_children());

  for (int n = 1; n <= total; ++n) {
    SCOPED_TRACE("thread " + std::to_string(n) + " of " + std::to_string(total) + " fails");
    calls = 0;
    fail_at = n;
    {
      server s(make());
      bool threw = false;
      try {
        s.start();
      } catch (const std::exception&) {
        threw = true;
      }
      fail_at = 0;
      EXPECT_TRUE(threw) << "start() did not fail";
      EXPECT_GE(calls.load(), n);
      if (!threw) {
        s.stop(std::chrono::milliseconds(0));
        s.wait();
      }
      // Nothing of the failed start runs, before the server is destroyed.
      EXPECT_EQ(threads_settled(threads_before), threads_before);
      EXPECT_TRUE(no_children());
      EXPECT_EQ(s.port(), 0);
    }
    EXPECT_EQ(threads_settled(threads_before), threads_before);
    EXPECT_EQ(descriptors(), fds_before) << descriptor_list();
  }
}

std::string temp_log() {
  return (std::filesystem::temp_directory_path() / ("rapidrpc-start-" + std::to_string(::getpid())))
      .string();
}

// On 127.0.0.1, with an access log and an admin listener.
server_options logged_and_watched(const std::string& log) {
  server_options o;
  o.listen.host = "127.0.0.1";
  o.listen.port = 0;
  o.log.access_log = log;
  o.admin.address = "127.0.0.1:0";
  return o;
}

TEST(ServerStart, TheNthThreadFailingLeavesNothingRunning) {
  const std::string log = temp_log();
  fail_each_thread(
      [&] {
        server_options o = logged_and_watched(log);
        o.serving.threads = 2;
        o.workers.count = 2;
        o.zmq.endpoints = {"tcp://127.0.0.1:*"};
        return o;
      },
      6);  // the access log, two pool threads, two loops, admin, ZeroMQ
  std::filesystem::remove(log);
}

// The process modes fork their supervisor before any thread starts (it
// forks the workers when it starts): the admin listener's thread failing
// after that stops and reaps it. The parent has no other thread: the
// children write the access log themselves.
TEST(ServerStart, TheNthThreadFailingLeavesNoChildInPrefork) {
  const std::string log = temp_log();
  fail_each_thread(
      [&] {
        server_options o = logged_and_watched(log);
        o.serving.mode = serving_mode::prefork;
        o.serving.processes = 2;
        return o;
      },
      1);  // the admin listener's
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace rapidrpc

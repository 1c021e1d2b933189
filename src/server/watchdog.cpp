#include "server/watchdog.hpp"

#include "http/response.hpp"

#include <sys/time.h>
#include <unistd.h>
#include <csignal>
#include <cstring>
#include <string>

namespace rapidrpc::detail::watchdog {

namespace {

// Read by the signal handler: set before the timer is armed, never changed
// while it is.
volatile sig_atomic_t watched_fd = -1;
volatile sig_atomic_t answer_timeouts = 1;
std::string prepared;                          // the whole HTTP response to send on timeout
std::string server_header;                     // for the next prepared response
const rpc::exchange* watched_calls = nullptr;  // writes the timeout's reply

void on_alarm(int) {
  // Only async-signal-safe calls from here on.
  int fd = watched_fd;
  if (fd >= 0 && answer_timeouts) {
    const char* p = prepared.data();
    std::size_t left = prepared.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  ::_exit(3);
}

void arm(std::chrono::milliseconds timeout) {
  itimerval t{};
  t.it_value.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  t.it_value.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setitimer(ITIMER_REAL, &t, nullptr);
}

void disarm() {
  itimerval t{};
  ::setitimer(ITIMER_REAL, &t, nullptr);
}

}  // namespace

void install(bool answer) {
  answer_timeouts = answer ? 1 : 0;
  struct sigaction sa {};
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGALRM, &sa, nullptr);
}

void watch(int fd, std::string_view server_name, const rpc::exchange* calls) {
  watched_fd = fd;
  server_header.assign(server_name);
  watched_calls = calls;
}

void runner::run(pool_call c) {
  if (c.timeout.count() > 0) {
    std::string body;
    http::response_head head;
    head.content_type = watched_calls->timeout_reply(body);  // watch() came before the call
    prepared.clear();
    head.keep_alive = false;
    head.content_length = body.size();
    http::write_head(prepared, server_header, head);
    prepared += body;
    arm(c.timeout);
  }
  outcome result = call_method(*c.m, c.params);
  if (c.timeout.count() > 0) disarm();
  c.done(std::move(result));
}

}  // namespace rapidrpc::detail::watchdog

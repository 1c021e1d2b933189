// Test peers of the client tests, all on 127.0.0.1 with a free port:
//
// - scripted_server: an in-process HTTP server whose every connection runs a
//   test's own script (blocking sockets, one thread per connection), for
//   exact control over the bytes a client sees (tests/module);
// - counting_proxy: a TCP relay in front of a real server that counts the
//   connections made through it;
// - child_server: a server process (rapidrpcd, the Python peer) started for
//   the test and stopped with SIGTERM (tests/integration/client only: a
//   test that starts a process is an integration test).
//
// Every socket has a receive timeout and every wait a deadline, so a broken
// client fails a test instead of hanging it.
#pragma once

#include <rapidrpc/value.hpp>

#include <sys/types.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace rapidrpc {

/// Lets GoogleTest print values in failure messages (long ones cut short).
inline void PrintTo(const value& v, std::ostream* os) {
  std::string text = to_debug_string(v);
  if (text.size() > 300)
    text = text.substr(0, 300) + "... (" + std::to_string(text.size()) + " chars)";
  *os << text;
}

}  // namespace rapidrpc

namespace rapidrpc::test {

/// One HTTP request as a scripted server read it.
struct raw_request {
  std::string head;  ///< request line and headers, up to and including the blank line
  std::string body;
  /// The value of a header (case-insensitive name), or nullopt.
  std::optional<std::string> header(std::string_view name) const;
};

/// Reads one request (Content-Length framing only). nullopt at end of
/// stream or on error or timeout.
std::optional<raw_request> read_request(int fd);

/// Writes all of `data`; false if the peer is gone.
bool write_all(int fd, std::string_view data);

/// An HTTP/1.1 response with a Content-Length; `extra_headers` are whole
/// lines, each ending in \r\n.
std::string http_response(std::string_view body, int status = 200,
                          std::string_view extra_headers = {});

/// A methodResponse document carrying `v`.
std::string result_document(const value& v);

/// A server on 127.0.0.1 running `script(fd, n)` for its n-th connection
/// (from 0), each on a thread of its own. The script's return closes the
/// connection.
class scripted_server {
 public:
  using script = std::function<void(int fd, int connection_index)>;
  explicit scripted_server(script s);
  ~scripted_server();
  scripted_server(const scripted_server&) = delete;
  scripted_server& operator=(const scripted_server&) = delete;

  unsigned short port() const noexcept { return port_; }
  std::string url(std::string_view path = "/RPC2") const;
  /// Connections accepted so far.
  int connections() const noexcept { return accepted_.load(); }

 private:
  void accept_loop();

  script script_;
  int listen_fd_ = -1;
  unsigned short port_ = 0;
  std::atomic<int> accepted_{0};
  std::mutex mutex_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

/// Answers every request with echo semantics: the first parameter back
/// (nil without one); for the method "fault", a fault -1 "requested".
/// Serves requests on the connection until end of stream.
void echo_script(int fd);

/// A TCP relay from a port of its own to 127.0.0.1:`upstream_port`.
class counting_proxy {
 public:
  explicit counting_proxy(unsigned short upstream_port);
  ~counting_proxy();
  counting_proxy(const counting_proxy&) = delete;
  counting_proxy& operator=(const counting_proxy&) = delete;

  std::string url(std::string_view path = "/RPC2") const;
  /// Connections accepted so far.
  int connections() const noexcept { return server_.connections(); }

 private:
  unsigned short upstream_;
  scripted_server server_;
};

/// A server process started with `argv` that prints "listening on
/// HOST:PORT" on stdout when ready.
class child_server {
 public:
  explicit child_server(std::vector<std::string> argv);
  ~child_server();
  child_server(const child_server&) = delete;
  child_server& operator=(const child_server&) = delete;

  unsigned short port() const noexcept { return port_; }
  std::string url(std::string_view path = "/RPC2") const;
  /// What it printed up to its "listening on" line.
  const std::string& startup_output() const noexcept { return startup_output_; }
  /// Sends SIGTERM and waits up to `timeout`; returns the exit status, or
  /// -1 if it had to be killed (or died of a signal).
  int stop(std::chrono::seconds timeout = std::chrono::seconds(10));

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  unsigned short port_ = 0;
  std::string command_;
  std::string startup_output_;
};

}  // namespace rapidrpc::test

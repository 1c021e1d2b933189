// server_options::listen_fds (a listening socket handed over instead of
// host and port) and the "*" path, with an in-process server called by
// rapidrpc::client.
#include <rapidrpc/client.hpp>
#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rapidrpc {
namespace {

// A TCP socket on 127.0.0.1 at a free port; listening unless told not to.
int socket_on_loopback(bool listening = true) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      (listening && ::listen(fd, 16) != 0))
    throw std::runtime_error("cannot make a loopback socket");
  return fd;
}

std::uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

server_options handed(int fd, serving_mode mode = serving_mode::async_pool) {
  server_options o;
  o.listen.host = "no.such.host.invalid";  // not resolved: the socket is given
  o.listen.port = 1;
  o.listen.fds = {fd};
  o.serving.threads = 2;
  o.workers.count = 1;
  o.serving.mode = mode;
  o.serving.processes = 1;
  return o;
}

std::string url(std::uint16_t port, const std::string& path = "/RPC2") {
  return "http://127.0.0.1:" + std::to_string(port) + path;
}

TEST(ServerListen, ServesAHandedOverSocketAndLeavesTheCallersOpen) {
  for (auto mode : {serving_mode::async_pool, serving_mode::prefork}) {
    int fd = socket_on_loopback();
    const std::uint16_t port = port_of(fd);
    {
      server s(handed(fd, mode));
      s.add("sample.add", [](std::int32_t a, std::int32_t b) { return a + b; });
      s.start();
      EXPECT_EQ(s.port(), port) << mode_name(mode);
      client c(url(port));
      EXPECT_EQ(c.call<std::int32_t>("sample.add", 2, 3), 5) << mode_name(mode);
      s.stop(std::chrono::milliseconds(0));
      s.wait();
    }
    // The server served duplicates: the caller's socket still listens.
    int listening = 0;
    socklen_t len = sizeof listening;
    ASSERT_EQ(::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len), 0);
    EXPECT_EQ(listening, 1) << mode_name(mode);
    ::close(fd);
  }
}

TEST(ServerListen, RefusesWhatIsNotAListeningTcpSocket) {
  int bound = socket_on_loopback(false);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  for (int fd : {bound, pipe_fds[0], 12345}) {
    server s(handed(fd));
    try {
      s.start();
      ADD_FAILURE() << "started on descriptor " << fd;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("is not a listening TCP socket"), std::string::npos)
          << e.what();
    }
  }
  ::close(bound);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

server_options on_paths(std::vector<std::string> paths) {
  server_options o;
  o.listen.host = "127.0.0.1";
  o.listen.port = 0;
  o.serving.threads = 1;
  o.workers.count = 1;
  o.http.paths = std::move(paths);
  o.http.jsonrpc_paths = {};
  return o;
}

TEST(ServerListen, StarPathServesEveryPath) {
  server s(on_paths({"*"}));
  s.add("ping", [] { return std::string("pong"); });
  s.start();
  for (const char* path : {"/", "/RPC2", "/any/where?x=1"}) {
    client c(url(s.port(), path));
    EXPECT_EQ(c.call<std::string>("ping"), "pong") << path;
  }
  s.stop(std::chrono::milliseconds(0));
  s.wait();
}

TEST(ServerListen, WithoutTheStarOtherPathsAre404) {
  server s(on_paths({"/api"}));
  s.add("ping", [] { return std::string("pong"); });
  s.start();
  EXPECT_EQ(client(url(s.port(), "/api")).call<std::string>("ping"), "pong");
  client elsewhere(url(s.port(), "/RPC2"));
  try {
    elsewhere.call("ping");
    ADD_FAILURE() << "/RPC2 answered";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.http_status(), 404) << e.what();
  }
  s.stop(std::chrono::milliseconds(0));
  s.wait();
}

}  // namespace
}  // namespace rapidrpc

namespace rapidrpc {
namespace {

// What a binary upgrade hands on: every listening socket once, whether
// each loop bound its own or all serve duplicates of one handed over.
TEST(ServerListen, ListsEachListeningSocketOnce) {
  server_options own;
  own.listen.host = "127.0.0.1";
  own.listen.port = 0;
  own.serving.threads = 3;
  own.workers.count = 1;
  server bound(own);
  bound.start();
  EXPECT_EQ(bound.listening_descriptors().size(), 3u);  // one per loop (SO_REUSEPORT)
  for (int fd : bound.listening_descriptors()) EXPECT_EQ(port_of(fd), bound.port());

  int fd = socket_on_loopback();
  server_options o = handed(fd);
  o.serving.threads = 3;
  server adopted(o);
  adopted.start();
  ASSERT_EQ(adopted.listening_descriptors().size(), 1u);  // three loops, one socket
  EXPECT_EQ(port_of(adopted.listening_descriptors().front()), port_of(fd));
  EXPECT_TRUE(adopted.admin_descriptors().empty());
  bound.stop(std::chrono::milliseconds(0));
  adopted.stop(std::chrono::milliseconds(0));
  bound.wait();
  adopted.wait();
  ::close(fd);
}

// The admin listener on a socket handed over (the other half of a binary
// upgrade), and on an address of its own.
TEST(ServerListen, AdminListenerOnAHandedOverSocket) {
  int fd = socket_on_loopback();
  server_options o;
  o.listen.host = "127.0.0.1";
  o.listen.port = 0;
  o.serving.threads = 1;
  o.workers.count = 1;
  o.admin.listen_fds = {fd};
  server s(o);
  EXPECT_FALSE(s.ready());  // not before start() (/readyz: "not ready: starting")
  s.start();
  ASSERT_EQ(s.admin_endpoints().size(), 1u);
  EXPECT_EQ(s.admin_endpoints().front(), "127.0.0.1:" + std::to_string(port_of(fd)));
  EXPECT_EQ(s.admin_descriptors().size(), 1u);
  EXPECT_TRUE(s.ready());
  std::string metrics;
  s.write_metrics(metrics);
  EXPECT_NE(metrics.find("rapidrpc_connections_total 0"), std::string::npos) << metrics;
  s.stop(std::chrono::milliseconds(0));
  EXPECT_FALSE(s.ready());  // from stop() on
  s.wait();
  ::close(fd);
}

TEST(ServerListen, RefusesAnAdminAddressItCannotRead) {
  for (const char* bad : {"9100", "localhost:", ":9100", "[::1:9100", "host:99999", "h:1x"}) {
    server_options o;
    o.listen.host = "127.0.0.1";
    o.listen.port = 0;
    o.admin.address = bad;
    server s(o);
    EXPECT_THROW(s.start(), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace rapidrpc

// The real connection (src/server/connection.cpp) on one end of a Unix
// socketpair, served by a loop on the test's thread (loop::serve_here, as a
// fork-mode child serves its client), a client thread on the other end:
// - reads split at every byte: the client sends one byte at a time and waits
//   for the connection to have read it (its reads are counted), so that
//   every read returns one byte, and pipelined requests are all answered;
// - a tiny send buffer: a large reply leaves through many short sends and
//   would-block waits, and arrives whole;
// - a send failing at the Nth call, for every N: the connection closes at
//   once, sends nothing more, and the client gets exactly the bytes sent
//   before;
// - keep-alive requests one after another: one read each, none of them
//   finding the socket empty (drained_read.hpp).
//
// This executable interposes recvmsg(), recv() and send() (its own
// definitions come before libc's, and before a sanitizer's, which they then
// call), counting and failing the calls on the connection's descriptor only.
// A Unix socket gives no count of what a read left (socket_read.hpp): these
// are the connection's reads without one, a short read taken for drained.
#include "server/loop.hpp"

#include <rapidrpc/registry.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/socket.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

namespace {

std::atomic<int> watched{-1};           // the connection's descriptor
std::atomic<int> reads{0};              // reads (recvmsg(), recv()) on it that returned bytes
std::atomic<int> empty_reads{0};        // reads on it that said EAGAIN
std::atomic<int> sends{0};              // send() calls on it
std::atomic<int> would_block{0};        // send() calls on it that said EAGAIN
std::atomic<std::size_t> sent{0};       // bytes send() took
std::atomic<std::size_t> send_most{0};  // 0: as much as the socket takes
std::atomic<int> fail_send_at{0};       // this send() (from 1) fails; 0: none

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

ssize_t counted_read(int fd, ssize_t n) {
  if (fd == watched.load() && n > 0) ++reads;
  if (fd == watched.load() && n < 0 && errno == EAGAIN) ++empty_reads;
  return n;
}

}  // namespace

// The connection reads with recvmsg() (src/server/socket_read.hpp); recv()
// is counted all the same.
extern "C" ssize_t recv(int fd, void* buf, size_t len, int flags) {
  static const auto next = real<ssize_t (*)(int, void*, size_t, int)>("recv");
  return counted_read(fd, next(fd, buf, len, flags));
}

extern "C" ssize_t recvmsg(int fd, msghdr* msg, int flags) {
  static const auto next = real<ssize_t (*)(int, msghdr*, int)>("recvmsg");
  return counted_read(fd, next(fd, msg, flags));
}

extern "C" ssize_t send(int fd, const void* buf, size_t len, int flags) {
  static const auto next = real<ssize_t (*)(int, const void*, size_t, int)>("send");
  if (fd != watched.load()) return next(fd, buf, len, flags);
  if (++sends == fail_send_at.load()) {
    errno = ECONNRESET;
    return -1;
  }
  if (send_most.load() != 0 && len > send_most.load()) len = send_most.load();
  const ssize_t n = next(fd, buf, len, flags);
  if (n > 0) sent += static_cast<std::size_t>(n);
  if (n < 0 && errno == EAGAIN) ++would_block;
  return n;
}

namespace rapidrpc::detail {
namespace {

std::string xmlrpc_call(const std::string& method, const std::string& params) {
  const std::string body = "<?xml version=\"1.0\"?><methodCall><methodName>" + method +
                           "</methodName><params>" + params + "</params></methodCall>";
  return "POST /RPC2 HTTP/1.1\r\nHost: test\r\nContent-Type: text/xml\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string add_call(int a, int b) {
  return xmlrpc_call("add", "<param><value><i4>" + std::to_string(a) +
                                "</i4></value></param><param><value><i4>" + std::to_string(b) +
                                "</i4></value></param>");
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void reset_counts() {
  reads = 0;
  empty_reads = 0;
  sends = 0;
  would_block = 0;
  sent = 0;
  send_most = 0;
  fail_send_at = 0;
}

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest() {
    methods.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
    methods.add("text",
                [](std::int32_t n) { return std::string(static_cast<std::size_t>(n), 'x'); });
    shared.methods = &methods;
    shared.paths = {"/RPC2"};
    reset_counts();
  }

  // Serves one connection on this thread until it closes. `client` runs on
  // a thread of its own with the other end of the pair, which it closes.
  template <class Client>
  void serve(Client client, int sndbuf = 0) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    if (sndbuf != 0) ::setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    watched = pair[0];
    std::thread peer([&client, fd = pair[1]] {
      client(fd);
      ::close(fd);
    });
    {
      loop l(shared, 0);
      l.serve_here(pair[0]);  // owns pair[0] from here, and closes it
    }
    peer.join();
    watched = -1;
    EXPECT_EQ(shared.connections.load(), 0u);
  }

  registry methods;
  serving_state shared;
};

// Writes `n` bytes as a client does; a connection closed early makes it
// fail (a short count) rather than raise SIGPIPE.
ssize_t client_send(int fd, const char* data, std::size_t n) {
  return ::send(fd, data, n, MSG_NOSIGNAL);
}

// Reads until the end of the stream.
std::string read_all(int fd) {
  std::string got;
  char chunk[4096];
  for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) got.append(chunk, n);
  return got;
}

// Waits (a bounded while) until the connection has made `n` reads.
bool reads_made(int n) {
  for (int i = 0; i < 100000 && reads.load() < n; ++i) std::this_thread::yield();
  return reads.load() == n;
}

TEST_F(ConnectionTest, ReadsSplitAtEveryByteAnswerEveryPipelinedRequest) {
  const std::string stream = add_call(3, 5) + add_call(40, 2) +
                             xmlrpc_call("text", "<param><value><int>7</int></value></param>");
  std::string got;
  bool in_step = true;
  serve([&](int fd) {
    int sent_bytes = 0;
    for (char byte : stream) {
      if (client_send(fd, &byte, 1) != 1 || !reads_made(++sent_bytes)) in_step = false;
    }
    ::shutdown(fd, SHUT_WR);
    got = read_all(fd);
  });
  EXPECT_TRUE(in_step);
  EXPECT_EQ(reads.load(), static_cast<int>(stream.size())) << "one read per byte";
  EXPECT_EQ(count(got, "HTTP/1.1 200 OK\r\n"), 3u) << got;
  EXPECT_NE(got.find("<int>8</int>"), std::string::npos) << got;
  EXPECT_NE(got.find("<int>42</int>"), std::string::npos) << got;
  EXPECT_NE(got.find(">xxxxxxx<"), std::string::npos) << got;
  EXPECT_LT(got.find("<int>8</int>"), got.find("<int>42</int>")) << "answered in order";
}

TEST_F(ConnectionTest, ALargeReplyLeavesThroughATinySendBuffer) {
  constexpr int length = 300000;
  std::string got;
  serve(
      [&](int fd) {
        const std::string request = xmlrpc_call(
            "text", "<param><value><int>" + std::to_string(length) + "</int></value></param>");
        ASSERT_EQ(client_send(fd, request.data(), request.size()),
                  static_cast<ssize_t>(request.size()));
        ::shutdown(fd, SHUT_WR);
        // Slowly, so that the connection finds its socket full.
        char chunk[512];
        for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) {
          got.append(chunk, n);
          if (got.size() % 16384 < 512) std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      },
      1);  // the smallest the kernel allows
  EXPECT_EQ(count(got, "HTTP/1.1 200 OK\r\n"), 1u);
  EXPECT_NE(got.find(">" + std::string(length, 'x') + "<"), std::string::npos);
  EXPECT_EQ(got.size(), sent.load());
  EXPECT_GT(sends.load(), 10) << "the reply left in one send: the buffer was not tiny";
  EXPECT_GT(would_block.load(), 0) << "no send found the socket full";
}

// A connection that has read a request short (all the socket had) waits
// for epoll's report of the next one: it does not try a read first and
// find nothing, once per request (Asio's own read does).
TEST_F(ConnectionTest, AKeepAliveRequestCostsOneRead) {
  constexpr int calls = 50;
  int answered = 0;
  serve([&](int fd) {
    for (int i = 0; i < calls; ++i) {
      const std::string request = add_call(i, 1);
      ASSERT_EQ(client_send(fd, request.data(), request.size()),
                static_cast<ssize_t>(request.size()));
      std::string got;
      char chunk[4096];
      while (got.find("</methodResponse>") == std::string::npos) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        ASSERT_GT(n, 0) << "closed after " << i << " answers";
        got.append(chunk, static_cast<std::size_t>(n));
      }
      if (got.find("<int>" + std::to_string(i + 1) + "</int>") != std::string::npos) ++answered;
    }
    ::shutdown(fd, SHUT_WR);
    read_all(fd);
  });
  EXPECT_EQ(answered, calls);
  EXPECT_EQ(reads.load(), calls) << "one read per request";
#ifdef RAPIDRPC_DRAINED_READ
  // The first read may be tried before the client's first request is there.
  EXPECT_LE(empty_reads.load(), 1) << "reads that found nothing";
#else
  // Asio's own read (another Boost, or RAPIDRPC_NO_DRAINED_READ) tries the
  // socket before waiting: at most once per request, and the end of the
  // stream.
  EXPECT_LE(empty_reads.load(), calls + 1) << "reads that found nothing";
#endif
}

TEST_F(ConnectionTest, ASendFailingAtTheNthCallClosesTheConnection) {
  const std::string stream = add_call(1, 2) + add_call(3, 4) + add_call(5, 6);
  const auto run = [&](int fail_at) {
    reset_counts();
    send_most = 64;  // many sends per reply
    fail_send_at = fail_at;
    std::string got;
    serve([&](int fd) {
      ASSERT_EQ(client_send(fd, stream.data(), stream.size()), static_cast<ssize_t>(stream.size()));
      ::shutdown(fd, SHUT_WR);
      got = read_all(fd);
    });
    return got;
  };
  const std::string whole = run(0);
  const int total = sends.load();
  ASSERT_EQ(count(whole, "HTTP/1.1 200 OK\r\n"), 3u);
  ASSERT_GT(total, 6);
  for (int n = 1; n <= total; ++n) {
    SCOPED_TRACE("send " + std::to_string(n) + " of " + std::to_string(total) + " fails");
    const std::string got = run(n);
    EXPECT_EQ(sends.load(), n) << "sent again after the failure";
    EXPECT_EQ(got.size(), sent.load()) << "the client got other bytes than those sent";
  }
}

}  // namespace
}  // namespace rapidrpc::detail

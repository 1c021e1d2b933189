// The client against scripted in-process servers: the request it sends, how
// it reads every shape of response, keep-alive and the one retry, timeouts,
// the asynchronous API and object lifetimes.
#include "peers.hpp"

#include <rapidrpc/client.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include "http/gzip.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/describe/class.hpp>

#include <gtest/gtest.h>

#include <netdb.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

namespace rapidrpc {
namespace {

using std::chrono::steady_clock;
using test::http_response;
using test::read_request;
using test::result_document;
using test::scripted_server;
using test::write_all;
using why = transport_error::reason;

scripted_server::script echo = [](int fd, int) { test::echo_script(fd); };

template <class F>
transport_error expect_transport_error(F&& f) {
  try {
    f();
  } catch (const transport_error& e) {
    return e;
  }
  ADD_FAILURE() << "no transport_error";
  return transport_error(why::io, "none");
}

double seconds_since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

// ---- the request ----------------------------------------------------------------------

TEST(ClientRequest, IsAWellFormedXmlRpcPost) {
  std::optional<test::raw_request> seen;
  scripted_server server([&](int fd, int) {
    seen = read_request(fd);
    write_all(fd, http_response(result_document(value(1))));
  });
  client_options o;
  o.headers = {{"X-Trace", "abc"}};
  std::string u =
      "http://us%65r:pa%3Ass@127.0.0.1:" + std::to_string(server.port()) + "/custom/path";
  client c(u, o);
  c.call("demo.method", {value(7), value("seven")});
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->head.rfind("POST /custom/path HTTP/1.1\r\n", 0), 0U) << seen->head;
  EXPECT_EQ(seen->header("Host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(seen->header("User-Agent"), "rapidrpc/0.1");
  EXPECT_EQ(seen->header("Content-Type"), "text/xml");
  EXPECT_EQ(seen->header("Accept-Encoding"), "gzip");
  EXPECT_EQ(seen->header("X-Trace"), "abc");
  EXPECT_EQ(seen->header("Authorization"), "Basic dXNlcjpwYTpzcw==");  // user:pa:ss
  EXPECT_EQ(seen->header("Content-Length"), std::to_string(seen->body.size()));
  EXPECT_FALSE(seen->header("Content-Encoding"));
  auto parsed = xmlrpc::parse_call(seen->body);
  ASSERT_TRUE(std::holds_alternative<xmlrpc::method_call>(parsed)) << seen->body;
  auto& call = std::get<xmlrpc::method_call>(parsed);
  EXPECT_EQ(call.method, "demo.method");
  EXPECT_EQ(call.params, (array{value(7), value("seven")}));
}

TEST(ClientRequest, GzipsBodiesFromTheConfiguredSize) {
  std::vector<test::raw_request> seen;
  scripted_server server([&](int fd, int) {
    while (auto r = read_request(fd)) {
      seen.push_back(*r);
      write_all(fd, http_response(result_document(value(1))));
    }
  });
  client_options o;
  o.gzip_request_min_bytes = 300;
  client c(server.url(), o);
  c.call("small", {value("x")});
  c.call("large", {value(std::string(1000, 'y'))});
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_FALSE(seen[0].header("Content-Encoding"));
  ASSERT_EQ(seen[1].header("Content-Encoding"), "gzip");
  std::string document;
  ASSERT_EQ(http::gunzip(seen[1].body, document, 1 << 20), http::inflate_result::ok);
  auto parsed = xmlrpc::parse_call(document);
  ASSERT_TRUE(std::holds_alternative<xmlrpc::method_call>(parsed));
  EXPECT_EQ(std::get<xmlrpc::method_call>(parsed).params[0], value(std::string(1000, 'y')));
}

TEST(ClientRequest, AnUnencodableParameterThrowsAndSendsNothing) {
  scripted_server server(echo);
  client c(server.url());
  EXPECT_THROW(c.call("echo", {value(std::nan(""))}), std::invalid_argument);
  EXPECT_THROW(c.call("echo", {value("bad \x01 control")}), std::invalid_argument);
  EXPECT_THROW(c.call("bad\xff", {}), std::invalid_argument);  // not UTF-8
  EXPECT_EQ(server.connections(), 0);
  EXPECT_EQ(c.call("echo", {value("fine")}), value("fine"));
}

// ---- results, faults, typed calls -----------------------------------------------------

TEST(ClientCall, TypedResultsConvert) {
  scripted_server server(echo);
  client c(server.url());
  EXPECT_EQ(c.call<std::int32_t>("echo", 42), 42);
  EXPECT_EQ(c.call<std::int64_t>("echo", std::int64_t{1} << 40), std::int64_t{1} << 40);
  EXPECT_EQ(c.call<std::string>("echo", "text"), "text");
  EXPECT_EQ(c.call<double>("echo", 0.5), 0.5);
  EXPECT_EQ(c.call<bool>("echo", true), true);
  EXPECT_EQ(c.call<value>("echo", "any"), value("any"));
  EXPECT_EQ(c.call<array>("echo", array{value(1), value("a")}), (array{value(1), value("a")}));
  EXPECT_EQ(c.call<bytes>("echo", bytes("\x00\xff")), bytes("\x00\xff"));
  EXPECT_EQ(c.call<value>("echo"), value());  // no argument: nil
}

TEST(ClientCall, ATypedResultOfTheWrongKindIsABadResponse) {
  scripted_server server(echo);
  client c(server.url());
  auto e = expect_transport_error([&] { c.call<std::string>("echo", 5); });
  EXPECT_EQ(e.why(), why::bad_response);
  EXPECT_STREQ(e.what(), "the result: expected string, got int");
  // As a typed method's parameter: an int widens to a double or an i8, a
  // double does not narrow to an int.
  EXPECT_EQ(c.call<double>("echo", 5), 5.0);
  EXPECT_EQ(c.call<std::int64_t>("echo", 5), 5);
  EXPECT_THROW(c.call<std::int32_t>("echo", 0.5), transport_error);
}

}  // namespace
}  // namespace rapidrpc

namespace client_typed_test {
struct point {
  std::int32_t x = 0;
  std::int32_t y = 0;
  friend bool operator==(const point&, const point&) = default;
};
BOOST_DESCRIBE_STRUCT(point, (), (x, y))
}  // namespace client_typed_test

namespace rapidrpc {
namespace {

using client_typed_test::point;

TEST(ClientCall, ArgumentsAndResultsConvertAsTypedMethodsDo) {
  scripted_server server(echo);
  client c(server.url());
  const std::vector<point> route{{1, 2}, {3, 4}};
  EXPECT_EQ(c.call<std::vector<point>>("echo", route), route);
  EXPECT_EQ((c.call<std::map<std::string, std::optional<std::int32_t>>>(
                "echo", std::map<std::string, std::optional<std::int32_t>>{{"a", 1}, {"b", {}}})),
            (std::map<std::string, std::optional<std::int32_t>>{{"a", 1}, {"b", {}}}));
  EXPECT_EQ((c.call<std::tuple<std::string, bool>>("echo", std::tuple{std::string("t"), true})),
            std::tuple(std::string("t"), true));
  auto e = expect_transport_error([&] {
    c.call<std::vector<point>>("echo", array{to_value(point{1, 2}), 5});
  });
  EXPECT_EQ(e.why(), why::bad_response);
  EXPECT_STREQ(e.what(), "the result, element 1: expected struct, got int");
}

TEST(ClientCall, AFaultIsThrownAsAFaultAndTryCallReturnsIt) {
  scripted_server server(echo);
  client c(server.url());
  try {
    c.call("fault");
    FAIL() << "no fault";
  } catch (const fault& f) {
    EXPECT_EQ(f.code(), -1);
    EXPECT_EQ(f.message(), "requested");
  }
  outcome o = c.try_call("fault");
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), -1);
  EXPECT_EQ(std::get<value>(c.try_call("echo", {value(3)})), value(3));
}

TEST(ClientCall, TryCallTurnsTransportFailuresIntoFaults) {
  scripted_server server([](int fd, int) {
    while (read_request(fd)) write_all(fd, http_response("nope", 503));
  });
  client c(server.url());
  outcome o = c.try_call("x");
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::transport_error);
  EXPECT_NE(std::get<fault>(o).message().find("503"), std::string::npos);
}

// ---- responses of every shape ---------------------------------------------------------

TEST(ClientResponse, AnErrorStatusKeepsTheConnection) {
  scripted_server server([](int fd, int) {
    auto r = read_request(fd);
    write_all(fd, http_response("<html>missing</html>", 404));
    test::echo_script(fd);
  });
  client c(server.url());
  auto e = expect_transport_error([&] { c.call("x"); });
  EXPECT_EQ(e.why(), why::http_status);
  EXPECT_EQ(e.http_status(), 404);
  EXPECT_EQ(c.call("echo", {value(1)}), value(1));
  EXPECT_EQ(server.connections(), 1);
}

TEST(ClientResponse, ABodyThatIsNotXmlRpcIsABadResponse) {
  scripted_server server([](int fd, int) {
    while (read_request(fd)) write_all(fd, http_response("<html>hello</html>"));
  });
  client c(server.url());
  EXPECT_EQ(expect_transport_error([&] { c.call("x"); }).why(), why::bad_response);
}

TEST(ClientResponse, MalformedHttpIsABadResponse) {
  scripted_server server([](int fd, int) {
    if (read_request(fd)) write_all(fd, "HTTP/1.1 two hundred\r\n\r\n");
  });
  client c(server.url());
  EXPECT_EQ(expect_transport_error([&] { c.call("x"); }).why(), why::bad_response);
}

TEST(ClientResponse, ALargerBodyThanAllowedIsABadResponse) {
  scripted_server server([](int fd, int) {
    while (read_request(fd))
      write_all(fd, http_response(result_document(value(std::string(5000, 'x')))));
  });
  client_options o;
  o.max_response_bytes = 4096;
  client c(server.url(), o);
  auto e = expect_transport_error([&] { c.call("x"); });
  EXPECT_EQ(e.why(), why::bad_response);
  EXPECT_NE(std::string(e.what()).find("4096"), std::string::npos) << e.what();
}

TEST(ClientResponse, AGzipBodyIsInflatedUnderTheLimit) {
  std::string doc = result_document(value(std::string(50'000, 'z')));
  std::string packed;
  http::gzip(doc, packed);
  scripted_server server([&](int fd, int) {
    while (read_request(fd))
      write_all(fd, http_response(packed, 200, "Content-Encoding: gzip\r\n"));
  });
  client c(server.url());
  EXPECT_EQ(c.call("x"), value(std::string(50'000, 'z')));
  client_options small;
  small.max_response_bytes = 10'000;  // the packed body fits, the inflated one does not
  client d(server.url(), small);
  EXPECT_EQ(expect_transport_error([&] { d.call("x"); }).why(), why::bad_response);
}

TEST(ClientResponse, ChunkedBodies) {
  std::string doc = result_document(value("chunked!"));
  scripted_server server([&](int fd, int) {
    while (read_request(fd)) {
      std::string out = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
      std::size_t half = doc.size() / 2;
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", half);
      out += size + doc.substr(0, half) + "\r\n";
      std::snprintf(size, sizeof size, "%zx\r\n", doc.size() - half);
      out += size + doc.substr(half) + "\r\n0\r\n\r\n";
      write_all(fd, out);
    }
  });
  client c(server.url());
  EXPECT_EQ(c.call("x"), value("chunked!"));
  EXPECT_EQ(c.call("x"), value("chunked!"));
  EXPECT_EQ(server.connections(), 1);
}

TEST(ClientResponse, ABodyDelimitedByTheEndOfTheStream) {
  scripted_server server([](int fd, int) {
    if (read_request(fd))
      write_all(fd,
                "HTTP/1.0 200 OK\r\nContent-Type: text/xml\r\n\r\n" + result_document(value(5)));
  });
  client c(server.url());
  EXPECT_EQ(c.call("x"), value(5));
  EXPECT_EQ(c.call("x"), value(5));
  EXPECT_EQ(server.connections(), 2);
}

TEST(ClientResponse, AResponseCutShortIsAnIoError) {
  scripted_server server([](int fd, int) {
    if (read_request(fd)) write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n<?xml");
  });
  client c(server.url());
  EXPECT_EQ(expect_transport_error([&] { c.call("x"); }).why(), why::io);
}

TEST(ClientResponse, InterimResponsesAreSkipped) {
  scripted_server server([](int fd, int) {
    while (read_request(fd))
      write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n" + http_response(result_document(value(9))));
  });
  wire_trace t;
  client c(server.url());
  c.trace(&t);
  EXPECT_EQ(c.call("x"), value(9));
  EXPECT_EQ(t.response_header.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n", 0), 0U)
      << t.response_header;
}

TEST(ClientResponse, AnEarlyErrorEndsTheCallWhileTheBodyIsStillGoingOut) {
  // Like a server that refuses a body by its Content-Length: it answers
  // after the head and reads no further, so the body can never all go out.
  // The client reads while it writes, and so sees the answer.
  scripted_server server([](int fd, int) {
    std::string head;
    char ch;
    while (!head.ends_with("\r\n\r\n") && ::recv(fd, &ch, 1, 0) == 1) head += ch;
    write_all(fd, http_response("too large", 413, "Connection: close\r\n"));
    pollfd p{fd, POLLRDHUP, 0};
    ::poll(&p, 1, 20'000);  // until the test ends
  });
  client_options o;
  o.timeout = std::chrono::seconds(20);
  client c(server.url(), o);
  const std::string large(32 << 20, 'x');
  auto start = steady_clock::now();
  auto e = expect_transport_error([&] { c.call("echo", {value(large)}); });
  EXPECT_EQ(e.why(), why::http_status) << e.what();
  EXPECT_EQ(e.http_status(), 413);
  // A client that read only after writing would wait for its 20 s timeout;
  // encoding 32 MiB takes a moment on a loaded machine.
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(ClientResponse, ConnectionCloseFromTheServerIsHonoured) {
  // The server says close but would answer again: only the header tells
  // the client not to reuse the connection.
  scripted_server server([](int fd, int) {
    while (read_request(fd))
      write_all(fd, http_response(result_document(value(1)), 200, "Connection: close\r\n"));
  });
  client c(server.url());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.call("x"), value(1));
  EXPECT_EQ(server.connections(), 3);
}

// ---- keep-alive and the retry rule ------------------------------------------------------

TEST(ClientKeepAlive, CallsShareOneConnection) {
  scripted_server server(echo);
  client c(server.url());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(c.call("echo", {value(i)}), value(i));
  EXPECT_EQ(server.connections(), 1);
}

TEST(ClientKeepAlive, OffMeansAConnectionPerCall) {
  std::atomic<int> close_headers{0};
  scripted_server server([&](int fd, int) {
    while (auto r = read_request(fd)) {
      if (r->header("Connection") == "close") ++close_headers;
      write_all(fd, http_response(result_document(value(1))));
    }
  });
  client_options o;
  o.keep_alive = false;
  client c(server.url(), o);
  for (int i = 0; i < 5; ++i) c.call("x");
  EXPECT_EQ(server.connections(), 5);
  EXPECT_EQ(close_headers.load(), 5);
}

TEST(ClientKeepAlive, AConnectionIdleForASecondIsCheckedBeforeReuse) {
  std::atomic<int> sent_after_close{0};
  scripted_server server([&](int fd, int index) {
    if (!read_request(fd)) return;
    write_all(fd, http_response(result_document(value(1))));
    if (index == 0) {
      ::shutdown(fd, SHUT_WR);  // as on an idle timeout, without Connection: close
      while (read_request(fd)) ++sent_after_close;
    }
  });
  client c(server.url());
  c.call("x");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  c.call("x");
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(sent_after_close.load(), 0);  // found closed before anything was sent on it
}

TEST(ClientKeepAlive, AServerClosingAnIdleConnectionCostsNoCall) {
  // Closed a moment ago: the client sends on it, sees it closed before any
  // response byte, and retries on a fresh connection.
  std::atomic<int> requests{0};
  scripted_server server([&](int fd, int) {
    if (read_request(fd)) {
      ++requests;
      write_all(fd, http_response(result_document(value(1))));
    }
  });
  client c(server.url());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.call("x"), value(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the FIN arrives
  }
  EXPECT_EQ(server.connections(), 3);
  EXPECT_EQ(requests.load(), 3);
}

TEST(ClientRetry, AReusedConnectionClosedBeforeAnyResponseByteIsRetriedOnce) {
  std::atomic<int> requests{0};
  scripted_server server([&](int fd, int index) {
    if (index == 0) {
      if (read_request(fd)) {
        ++requests;
        write_all(fd, http_response(result_document(value("first"))));
      }
      if (read_request(fd)) ++requests;  // the race: the request arrives as the server closes
      return;
    }
    while (read_request(fd)) {
      ++requests;
      write_all(fd, http_response(result_document(value("retried"))));
    }
  });
  client c(server.url());
  EXPECT_EQ(c.call("x"), value("first"));
  EXPECT_EQ(c.call("x"), value("retried"));
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(requests.load(), 3);
}

TEST(ClientRetry, IsNotRepeated) {
  scripted_server server([&](int fd, int index) {
    if (index == 0 && read_request(fd)) write_all(fd, http_response(result_document(value(1))));
    read_request(fd);  // then every request is dropped
  });
  client c(server.url());
  c.call("x");
  EXPECT_EQ(expect_transport_error([&] { c.call("x"); }).why(), why::io);
  EXPECT_EQ(server.connections(), 2);  // the reused one, and one retry
}

TEST(ClientRetry, NeverOnAFreshConnection) {
  scripted_server server([](int fd, int) { read_request(fd); });
  client c(server.url());
  auto e = expect_transport_error([&] { c.call("x"); });
  EXPECT_EQ(e.why(), why::io);
  EXPECT_NE(std::string(e.what()).find("without answering"), std::string::npos) << e.what();
  EXPECT_EQ(server.connections(), 1);
}

TEST(ClientRetry, NeverAfterAResponseByte) {
  scripted_server server([](int fd, int index) {
    if (index == 0 && read_request(fd)) write_all(fd, http_response(result_document(value(1))));
    if (read_request(fd)) write_all(fd, "HTTP/1.1 2");
  });
  client c(server.url());
  c.call("x");
  EXPECT_EQ(expect_transport_error([&] { c.call("x"); }).why(), why::io);
  EXPECT_EQ(server.connections(), 1);
}

// ---- timeouts and connection failures -------------------------------------------------

TEST(ClientTimeout, ASilentServerTimesOut) {
  scripted_server server([](int fd, int) {
    read_request(fd);
    char c;
    ::recv(fd, &c, 1, 0);  // until the client gives up
  });
  client_options o;
  o.timeout = std::chrono::milliseconds(300);
  client c(server.url(), o);
  auto start = steady_clock::now();
  auto e = expect_transport_error([&] { c.call("x"); });
  double took = seconds_since(start);
  EXPECT_EQ(e.why(), why::timeout);
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 2.0);
}

TEST(ClientTimeout, ZeroMeansNoLimit) {
  scripted_server server([](int fd, int) {
    if (read_request(fd)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      write_all(fd, http_response(result_document(value(1))));
    }
  });
  client_options o;
  o.timeout = std::chrono::milliseconds(0);
  client c(server.url(), o);
  EXPECT_EQ(c.call("x"), value(1));
}

unsigned short closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);  // never listened: connections are refused
  return ntohs(addr.sin_port);
}

TEST(ClientConnect, ARefusedConnectionIsAConnectError) {
  client c("http://127.0.0.1:" + std::to_string(closed_port()) + "/RPC2");
  auto e = expect_transport_error([&] { c.call("x"); });
  EXPECT_EQ(e.why(), why::connect);
}

// A listening socket whose accept queue is full: the kernel drops further
// SYNs, so a connect to it hangs. fill_accept_queue() is false if that
// cannot be arranged here.
struct full_listener {
  int listen_fd = -1;
  std::vector<int> queued;
  unsigned short port = 0;
  ~full_listener() {
    for (int fd : queued) ::close(fd);
    if (listen_fd >= 0) ::close(listen_fd);
  }
};

bool fill_accept_queue(full_listener& l) {
  l.listen_fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(l.listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(l.listen_fd, 0) != 0)
    return false;
  socklen_t len = sizeof addr;
  ::getsockname(l.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  l.port = ntohs(addr.sin_port);
  for (int i = 0; i < 16; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // in progress
    l.queued.push_back(fd);
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 200) == 0) return true;  // this one hangs: the queue is full
  }
  return false;
}

TEST(ClientConnect, AConnectThatHangsTimesOutAfterTheConnectTimeout) {
  full_listener l;
  if (!fill_accept_queue(l)) GTEST_SKIP() << "could not make a connect hang on this system";
  client_options o;
  o.connect_timeout = std::chrono::milliseconds(300);
  o.timeout = std::chrono::seconds(10);
  client c("http://127.0.0.1:" + std::to_string(l.port) + "/RPC2", o);
  auto start = steady_clock::now();
  auto e = expect_transport_error([&] { c.call("x"); });
  double took = seconds_since(start);
  EXPECT_EQ(e.why(), why::timeout) << e.what();
  EXPECT_NE(std::string(e.what()).find("connecting"), std::string::npos) << e.what();
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 2.0);
}

TEST(ClientConnect, LocalhostIsTheLoopbackWithoutTheResolver) {
  // Works with no /etc/hosts too (RFC 6761); the server binds both addresses.
  scripted_server server(echo);
  client c("http://LocalHost:" + std::to_string(server.port()) + "/RPC2");
  EXPECT_EQ(c.call("echo", {value("loopback")}), value("loopback"));
}

TEST(ClientConnect, ANameIsResolved) {
  // This machine's own name, where it resolves to 127.0.0.1 (the scripted
  // server listens there); "localhost" would not ask the resolver.
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) GTEST_SKIP() << "no host name";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) != 0)
    GTEST_SKIP() << "this machine cannot resolve its name";
  bool loopback = false;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next)
    loopback = loopback || reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr.s_addr ==
                               htonl(INADDR_LOOPBACK);
  ::freeaddrinfo(found);
  if (!loopback) GTEST_SKIP() << "this machine's name does not resolve to 127.0.0.1";
  scripted_server server(echo);
  client c(std::string("http://") + name + ":" + std::to_string(server.port()) + "/RPC2");
  EXPECT_EQ(c.call("echo", {value("resolved")}), value("resolved"));
}

TEST(ClientConnect, AnUnknownHostIsAConnectError) {
  client c("http://no-such-host.invalid:1/RPC2");
  EXPECT_EQ(expect_transport_error([&] { c.call("x"); }).why(), why::connect);
}

// ---- trace ----------------------------------------------------------------------------

TEST(ClientTrace, RecordsEachExchangeWhileSet) {
  scripted_server server(echo);
  client c(server.url());
  wire_trace t;
  c.trace(&t);
  c.call("echo", {value("one")});
  EXPECT_EQ(t.request.rfind("POST /RPC2 HTTP/1.1\r\n", 0), 0U);
  EXPECT_NE(t.request.find("<string>one</string>"), std::string::npos) << t.request;
  EXPECT_EQ(t.response_header.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << t.response_header;
  EXPECT_TRUE(t.response_header.ends_with("\r\n\r\n"));
  EXPECT_EQ(t.response_body, result_document(value("one")));
  c.call("echo", {value("two")});
  EXPECT_NE(t.request.find("<string>two</string>"), std::string::npos);
  EXPECT_EQ(t.request.find("<string>one</string>"), std::string::npos);
  c.trace(nullptr);
  c.call("echo", {value("three")});
  EXPECT_NE(t.request.find("<string>two</string>"), std::string::npos);
}

// ---- the asynchronous API and lifetimes -------------------------------------------------

TEST(ClientAsync, CallsCompleteOnceEachOnTheExecutor) {
  scripted_server server(echo);
  boost::asio::io_context io;
  client c(io.get_executor(), server.url());
  std::vector<int> done(20, 0);
  auto io_thread = std::this_thread::get_id();
  for (int i = 0; i < 20; ++i) {
    c.async_call("echo", {value(i)}, [&, i](outcome o) {
      EXPECT_EQ(std::this_thread::get_id(), io_thread);
      ASSERT_TRUE(std::holds_alternative<value>(o));
      EXPECT_EQ(std::get<value>(o), value(i));
      ++done[static_cast<std::size_t>(i)];
    });
  }
  EXPECT_EQ(std::count(done.begin(), done.end(), 1), 0);  // never inside async_call
  io.run();
  EXPECT_EQ(std::count(done.begin(), done.end(), 1), 20);
  // Each call in flight had a connection of its own; they are pooled now.
  EXPECT_EQ(server.connections(), 20);
}

TEST(ClientAsync, TypedCallsConvertTheirArgumentsAndResult) {
  scripted_server server(echo);
  boost::asio::io_context io;
  client c(io.get_executor(), server.url());
  std::optional<std::variant<std::vector<point>, fault>> route, wrong;
  c.async_call<std::vector<point>>(
      "echo", [&](std::variant<std::vector<point>, fault> o) { route = std::move(o); },
      std::vector<point>{{1, 2}, {3, 4}});
  c.async_call<std::vector<point>>(
      "echo", [&](std::variant<std::vector<point>, fault> o) { wrong = std::move(o); },
      array{to_value(point{1, 2}), "x"});
  io.run();
  ASSERT_TRUE(route && wrong);
  ASSERT_TRUE(std::holds_alternative<std::vector<point>>(*route));
  EXPECT_EQ(std::get<std::vector<point>>(*route), (std::vector<point>{{1, 2}, {3, 4}}));
  ASSERT_TRUE(std::holds_alternative<fault>(*wrong));
  EXPECT_EQ(std::get<fault>(*wrong).code(), fault_code::transport_error);
  EXPECT_EQ(std::get<fault>(*wrong).message(),
            "the result, element 1: expected struct, got string");
}

TEST(ClientAsync, PooledConnectionsAreReusedByLaterCalls) {
  scripted_server server(echo);
  boost::asio::io_context io;
  client c(io.get_executor(), server.url());
  int left = 10;
  std::function<void(outcome)> next = [&](const outcome& o) {
    EXPECT_TRUE(std::holds_alternative<value>(o));
    if (--left > 0) c.async_call("echo", {value(left)}, next);
  };
  c.async_call("echo", {value(left)}, next);
  io.run();
  EXPECT_EQ(left, 0);
  EXPECT_EQ(server.connections(), 1);
}

TEST(ClientAsync, TransportFailuresArriveAsFaults) {
  boost::asio::io_context io;
  client c(io.get_executor(), "http://127.0.0.1:" + std::to_string(closed_port()) + "/");
  std::optional<outcome> got;
  c.async_call("x", {}, [&](outcome o) { got = std::move(o); });
  io.run();
  ASSERT_TRUE(got);
  ASSERT_TRUE(std::holds_alternative<fault>(*got));
  EXPECT_EQ(std::get<fault>(*got).code(), fault_code::transport_error);
}

TEST(ClientAsync, DestroyingTheClientCompletesCallsInFlight) {
  scripted_server server([](int fd, int) {
    read_request(fd);
    char c;
    ::recv(fd, &c, 1, 0);
  });
  boost::asio::io_context io;
  auto c = std::make_unique<client>(io.get_executor(), server.url());
  int completed = 0;
  for (int i = 0; i < 3; ++i) {
    c->async_call("x", {}, [&](outcome o) {
      ++completed;
      ASSERT_TRUE(std::holds_alternative<fault>(o));
      EXPECT_EQ(std::get<fault>(o).code(), fault_code::transport_error);
    });
  }
  io.run_for(std::chrono::milliseconds(200));  // the calls are waiting for answers
  EXPECT_EQ(completed, 0);
  c.reset();
  EXPECT_EQ(completed, 0);  // never inside the destructor
  io.run();
  EXPECT_EQ(completed, 3);
}

TEST(ClientAsync, SyncAndAsyncCallsNeedTheRightKindOfClient) {
  boost::asio::io_context io;
  client on_executor(io.get_executor(), "http://127.0.0.1:1/");
  EXPECT_THROW(on_executor.call("x"), std::logic_error);
  EXPECT_THROW(on_executor.try_call("x"), std::logic_error);
  client own("http://127.0.0.1:1/");
  EXPECT_THROW(own.async_call("x", {}, [](const outcome&) {}), std::logic_error);
}

TEST(ClientLifetime, MovingKeepsTheConnectionsAndTheTarget) {
  scripted_server server(echo);
  client a(server.url());
  a.call("echo", {value(1)});
  client b(std::move(a));
  EXPECT_EQ(b.target().port, std::to_string(server.port()));
  EXPECT_EQ(b.call("echo", {value(2)}), value(2));
  EXPECT_EQ(server.connections(), 1);
  EXPECT_THROW(a.call("echo"), std::logic_error);  // NOLINT(bugprone-use-after-move)
  client c("http://127.0.0.1:1/");
  c = std::move(b);
  EXPECT_EQ(c.call("echo", {value(3)}), value(3));
  EXPECT_EQ(server.connections(), 1);
}

TEST(ClientLifetime, ABadUrlHeaderOrCaFileFailsTheConstructor) {
  EXPECT_THROW(client("ftp://example.com/"), std::invalid_argument);
  client_options ca;
  ca.tls_ca_file = "/nonexistent/ca.pem";
  EXPECT_THROW(client("https://127.0.0.1/", ca), std::invalid_argument);
  EXPECT_NO_THROW(client("http://127.0.0.1/", ca));  // only https reads it
  client_options o;
  o.headers = {{"Content-Length", "1"}};
  EXPECT_THROW(client("http://127.0.0.1/", o), std::invalid_argument);
}

}  // namespace
}  // namespace rapidrpc

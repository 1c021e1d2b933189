// The relay's wire pieces (src/server/relay.hpp): the PROXY line, the
// request as the program gets it, the response as the client gets it.
#include "server/relay.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rapidrpc::detail {
namespace {

namespace ip = boost::asio::ip;

TEST(Relay, ProxyLineNamesBothEnds) {
  const ip::tcp::endpoint local4(ip::make_address("127.0.0.1"), 8000);
  EXPECT_EQ(proxy_line({ip::make_address("127.0.0.2"), 51000}, local4),
            "PROXY TCP4 127.0.0.2 127.0.0.1 51000 8000\r\n");
  const ip::tcp::endpoint local6(ip::make_address("::1"), 8000);
  EXPECT_EQ(proxy_line({ip::make_address("::1"), 51000}, local6),
            "PROXY TCP6 ::1 ::1 51000 8000\r\n");
  EXPECT_EQ(
      proxy_line({ip::make_address("::ffff:127.0.0.1"), 51000}, {ip::make_address("::"), 8000}),
      "PROXY TCP6 ::ffff:127.0.0.1 :: 51000 8000\r\n");
  EXPECT_EQ(proxy_line({}, local4), "PROXY UNKNOWN\r\n");
}

TEST(Relay, RequestGoesAsReceivedAChunkedOneWithItsLength) {
  http::request req;
  req.head = "POST /x HTTP/1.1\r\nHost: h\r\nX-Case: A\r\nContent-Length: 2\r\n\r\n";
  req.body = "ab";
  std::string out;
  write_relayed_request(out, req);
  EXPECT_EQ(out, req.head + "ab");

  req.head =
      "POST /x HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\r\nX-After: 1\r\n"
      "Transfer-Encoding:\r\n  chunked\r\n\r\n";
  req.chunked = true;
  req.body = "wikipedia!";
  out.clear();
  write_relayed_request(out, req);
  EXPECT_EQ(out,
            "POST /x HTTP/1.1\r\nHost: h\r\nX-After: 1\r\nContent-Length: 10\r\n\r\nwikipedia!");
}

TEST(Relay, ResponseKeepsItsFieldsButTheHopByHopOnes) {
  http::response r;
  r.status = 200;
  r.reason = "Fine";
  r.fields = {{"Server", "s"},
              {"connection", "close"},
              {"X-Case", "A"},
              {"Keep-Alive", "timeout=5"},
              {"Transfer-Encoding", "chunked"}};
  r.body = "hello";
  std::string out;
  write_relayed_response(out, r, true, false);
  EXPECT_EQ(out, "HTTP/1.1 200 Fine\r\nServer: s\r\nX-Case: A\r\nContent-Length: 5\r\n\r\nhello");

  // Its own Content-Length is kept, not repeated; the client's connection
  // decides Connection.
  r.fields = {{"Content-Length", "5"}};
  r.content_length = true;
  out.clear();
  write_relayed_response(out, r, false, false);
  EXPECT_EQ(out, "HTTP/1.1 200 Fine\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  out.clear();
  write_relayed_response(out, r, true, true);
  EXPECT_EQ(out, "HTTP/1.0 200 Fine\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello");

  // No body, no length added (HEAD, 204, 304).
  r.fields = {{"X-A", "b"}};
  r.content_length = false;
  r.bodyless = true;
  r.status = 204;
  r.reason = "No Content";
  r.body.clear();
  out.clear();
  write_relayed_response(out, r, true, false);
  EXPECT_EQ(out, "HTTP/1.1 204 No Content\r\nX-A: b\r\n\r\n");
}

}  // namespace
}  // namespace rapidrpc::detail

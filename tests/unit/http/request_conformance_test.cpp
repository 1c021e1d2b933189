// What RFC 9112 and RFC 9110 require of a server reading requests, checked
// on the request reader with and without its direct path, fed whole and a
// byte at a time (tests/conformance checks the same on the daemon).
#include "http/request_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace rapidrpc::http {
namespace {

struct outcome {
  int error = 0;  // the status of a framing error, or 0
  bool complete = false;
  bool continue_asked = false;
  std::string body;
};

// One request fed in reads of `step` bytes, as a connection does.
outcome read(std::string_view wire, std::size_t step, bool direct) {
  request_reader reader(16 * 1024, 1 << 20);
  reader.set_direct(direct);
  outcome out;
  std::string in;
  for (std::size_t pos = 0; pos < wire.size() && !out.complete;) {
    const std::size_t n = std::min(step, wire.size() - pos);
    in.append(wire.substr(pos, n));
    pos += n;
    std::size_t used = 0;
    const auto r = reader.parse(in, used);
    in.erase(0, used);
    if (r == request_reader::result::error) {
      out.error = reader.error_status();
      return out;
    }
    if (r == request_reader::result::need_more) {
      out.continue_asked = out.continue_asked || reader.take_continue();
    } else {
      out.complete = true;
      out.body = reader.current().body;
    }
  }
  return out;
}

// The same outcome whole and bytewise, with and without the direct reader.
void expect_outcome(std::string_view wire, int error) {
  for (bool direct : {true, false}) {
    for (std::size_t step : {wire.size(), std::size_t{1}}) {
      const outcome o = read(wire, step, direct);
      EXPECT_EQ(o.error, error) << "direct " << direct << ", step " << step << ": " << wire;
      if (error == 0) {
        EXPECT_TRUE(o.complete) << wire;
      }
    }
  }
}

std::string post_with_host(std::string_view host) {
  return "POST /RPC2 HTTP/1.1\r\nHost: " + std::string(host) + "\r\nContent-Length: 3\r\n\r\nabc";
}

TEST(RequestConformance, InvalidHostIsRefused) {  // RFC 9112, 3.2
  for (std::string_view host : {"a b", "user@h", "h/p", "h:8o", "[::1", "[::1]x", "[zz]", "[]",
                                "a%4", "a%zz", "h:1:2", "[v1]"}) {
    EXPECT_FALSE(valid_host(host)) << host;
    expect_outcome(post_with_host(host), 400);
  }
}

TEST(RequestConformance, ValidHostIsServed) {
  for (std::string_view host : {"", "h", "h:", "h:8080", "127.0.0.1", "[::1]", "[::1]:80",
                                "[2001:db8::7]", "[v1.x:y]", "a-b.c_d~e!$&'()*+,;=%41"}) {
    EXPECT_TRUE(valid_host(host)) << host;
    expect_outcome(post_with_host(host), 0);
  }
}

TEST(RequestConformance, ObsFoldIsRefused) {  // RFC 9112, 5.2
  expect_outcome("POST /RPC2 HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n",
                 400);
  expect_outcome("POST /RPC2 HTTP/1.1\r\nHost: h\r\nX-A:\r\n\tb\r\nContent-Length: 0\r\n\r\n", 400);
  expect_outcome("POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n 3\r\n\r\nabc", 400);
  // Whitespace around an unfolded value is no fold.
  expect_outcome(
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nX-A: \t a \t\r\nX-B:\r\n"
      "Content-Length: 0\r\n\r\n",
      0);
}

TEST(RequestConformance, TransferEncodingInHttp10IsRefused) {  // RFC 9112, 6.1
  expect_outcome("POST /RPC2 HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                 400);
  expect_outcome(
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\n\r\n",
      0);
}

TEST(RequestConformance, NoContinueForHttp10) {  // RFC 9110, 10.1.1 and 15.2
  const std::string head10 =
      "POST /RPC2 HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
  const std::string head11 =
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
  for (bool direct : {true, false}) {
    const outcome o10 = read(head10 + "abc", 1, direct);
    EXPECT_TRUE(o10.complete);
    EXPECT_FALSE(o10.continue_asked) << "direct " << direct;
    const outcome o11 = read(head11 + "abc", 1, direct);
    EXPECT_TRUE(o11.complete);
    EXPECT_TRUE(o11.continue_asked) << "direct " << direct;
  }
}

TEST(RequestConformance, TrailerFieldsAreNotMerged) {  // RFC 9110, 6.5.1
  const std::string head =
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Type: text/xml\r\n"
      "Authorization: Basic eDp5\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n";
  for (std::size_t step : {std::size_t{1}, std::size_t{4096}}) {
    request_reader reader(16 * 1024, 1 << 20);
    std::string in;
    const std::string wire = head +
                             "Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
                             "Expect: nothing\r\nAuthorization: Basic eTp6\r\nX-Sum: 1\r\n\r\n";
    bool complete = false;
    for (std::size_t pos = 0; pos < wire.size() && !complete; pos += step) {
      in.append(wire.substr(pos, step));
      std::size_t used = 0;
      const auto r = reader.parse(in, used);
      in.erase(0, used);
      ASSERT_NE(r, request_reader::result::error) << reader.error_status();
      complete = r == request_reader::result::complete;
    }
    ASSERT_TRUE(complete);
    const request& req = reader.current();
    EXPECT_EQ(req.body, "abc");
    EXPECT_EQ(req.content_type, media::xml);
    EXPECT_FALSE(req.gzip_body);
    EXPECT_FALSE(req.bad_expect);
    EXPECT_EQ(req.authorization, "Basic eDp5");
    EXPECT_FALSE(req.repeated_authorization);
  }
  for (std::string_view field : {"Connection: close", "Content-Length: 3", "Upgrade: h2c",
                                 "Transfer-Encoding: chunked", "Host: h", "Proxy-Connection: x"})
    expect_outcome(head + std::string(field) + "\r\n\r\n", 400);
}

TEST(RequestConformance, TargetPathOfEachForm) {  // RFC 9112, 3.2
  EXPECT_EQ(target_path("/RPC2"), "/RPC2");
  EXPECT_EQ(target_path("/RPC2?a=b"), "/RPC2");
  EXPECT_EQ(target_path("http://h/RPC2"), "/RPC2");
  EXPECT_EQ(target_path("HTTPS://h:443/RPC2?x"), "/RPC2");
  EXPECT_EQ(target_path("http://h"), "/");
  EXPECT_EQ(target_path("http://h?x"), "/");
  EXPECT_EQ(target_path("http://user@h:80/a/b"), "/a/b");
  EXPECT_EQ(target_path("*"), "*");
  EXPECT_EQ(target_path("h:443"), "h:443");
  EXPECT_EQ(target_path("ftp://h/RPC2"), "ftp://h/RPC2");
}

}  // namespace
}  // namespace rapidrpc::http

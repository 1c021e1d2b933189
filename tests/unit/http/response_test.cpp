#include "http/response.hpp"

#include <gtest/gtest.h>

namespace rapidrpc::http {
namespace {

TEST(Response, HeadHasTheHeadersClientsExpect) {
  std::string out;
  response_head head;
  head.content_length = 42;
  write_head(out, "rapidrpc/1", head);
  EXPECT_EQ(out.rfind("HTTP/1.1 200 OK\r\nServer: rapidrpc/1\r\nDate: ", 0), 0u);
  EXPECT_NE(out.find("\r\nContent-Type: text/xml\r\nContent-Length: 42\r\n\r\n"),
            std::string::npos);
  EXPECT_EQ(out.find("Connection"), std::string::npos);  // keep-alive is HTTP/1.1's default
}

TEST(Response, ConnectionHeaderOnlyWhenNeeded) {
  std::string out;
  response_head head;
  head.keep_alive = false;
  write_head(out, "s", head);
  EXPECT_NE(out.find("\r\nConnection: close\r\n"), std::string::npos);
  out.clear();
  head.keep_alive = true;
  head.http10 = true;
  write_head(out, "s", head);
  EXPECT_NE(out.find("\r\nConnection: keep-alive\r\n"), std::string::npos);
}

TEST(Response, ErrorHasABodyAndExtraHeaders) {
  std::string out;
  write_error(out, "s", 405, true, false, "Allow: POST\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u);
  EXPECT_NE(out.find("\r\nAllow: POST\r\n\r\nMethod Not Allowed\n"), std::string::npos);
}

TEST(Response, DateIsAnImfFixdate) {
  std::string_view d = http_date();
  ASSERT_EQ(d.size(), 29u);
  EXPECT_EQ(d.substr(25), " GMT");
  EXPECT_EQ(d[3], ',');
}

}  // namespace
}  // namespace rapidrpc::http

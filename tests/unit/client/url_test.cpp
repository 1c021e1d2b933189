// url::parse: what a client accepts as its target, and what it refuses.
#include <rapidrpc/client.hpp>
#include <rapidrpc/localhost.hpp>

#include <gtest/gtest.h>

#include <string>

namespace rapidrpc {
namespace {

TEST(Localhost, OneRuleInAnyCase) {
  // The rule the server's listener, the client and rapidrpc bench share.
  for (const char* host : {"localhost", "LocalHost", "LOCALHOST"})
    EXPECT_TRUE(is_localhost(host)) << host;
  for (const char* host : {"", "localhos", "localhost.", "xlocalhost", "localhost.localdomain",
                           "127.0.0.1", "::1", "local\x80host"})
    EXPECT_FALSE(is_localhost(host)) << host;
}

TEST(UrlParse, FullUrl) {
  url u = url::parse("http://alice:secret@example.com:8080/api/xmlrpc");
  EXPECT_EQ(u.scheme, "http");
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, "8080");
  EXPECT_EQ(u.path, "/api/xmlrpc");
  EXPECT_EQ(u.user, "alice");
  EXPECT_EQ(u.password, "secret");
}

TEST(UrlParse, DefaultsPortAndPath) {
  url u = url::parse("http://localhost");
  EXPECT_EQ(u.host, "localhost");
  EXPECT_EQ(u.port, "80");
  EXPECT_EQ(u.path, "/RPC2");
  EXPECT_TRUE(u.user.empty());
  EXPECT_TRUE(u.password.empty());
}

TEST(UrlParse, NoPathMeansRpc2ButASlashIsTheRoot) {
  EXPECT_EQ(url::parse("http://host:6677").path, "/RPC2");
  EXPECT_EQ(url::parse("http://host:6677/").path, "/");
}

TEST(UrlParse, SchemeIsCaseInsensitive) {
  url u = url::parse("HTTP://Host/RPC2");
  EXPECT_EQ(u.scheme, "http");
  EXPECT_EQ(u.host, "Host");
}

TEST(UrlParse, QueryIsKeptAndFragmentDropped) {
  EXPECT_EQ(url::parse("http://h/rpc?token=1#frag").path, "/rpc?token=1");
  EXPECT_EQ(url::parse("http://h?token=1").path, "/?token=1");
  EXPECT_EQ(url::parse("http://h#frag").path, "/RPC2");
}

TEST(UrlParse, UserInfoIsPercentDecoded) {
  url u = url::parse("http://us%65r%3Aname:p%40ss%3aw%2Fd@h/");
  EXPECT_EQ(u.user, "user:name");
  EXPECT_EQ(u.password, "p@ss:w/d");
}

TEST(UrlParse, UserWithoutPasswordAndEmptyPassword) {
  url a = url::parse("http://bob@h/");
  EXPECT_EQ(a.user, "bob");
  EXPECT_EQ(a.password, "");
  url b = url::parse("http://bob:@h/");
  EXPECT_EQ(b.user, "bob");
  EXPECT_EQ(b.password, "");
}

TEST(UrlParse, LastAtSignEndsTheUserInfo) {
  url u = url::parse("http://me@corp:pw@h:81/x");
  EXPECT_EQ(u.user, "me@corp");
  EXPECT_EQ(u.password, "pw");
  EXPECT_EQ(u.host, "h");
  EXPECT_EQ(u.port, "81");
}

TEST(UrlParse, Ipv6Literals) {
  url a = url::parse("http://[::1]:6677/RPC2");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, "6677");
  url b = url::parse("http://[2001:db8::7]");
  EXPECT_EQ(b.host, "2001:db8::7");
  EXPECT_EQ(b.port, "80");
  EXPECT_EQ(b.path, "/RPC2");
  url c = url::parse("http://u:p@[fe80::1]:1/");
  EXPECT_EQ(c.host, "fe80::1");
  EXPECT_EQ(c.user, "u");
}

TEST(UrlParse, Ipv4Literal) {
  url u = url::parse("http://127.0.0.1:1/");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, "1");
}

TEST(UrlParse, PortIsNormalized) {
  EXPECT_EQ(url::parse("http://h:08080/").port, "8080");
  EXPECT_EQ(url::parse("http://h:65535/").port, "65535");
  EXPECT_EQ(url::parse("http://h:/").port, "80");  // an empty port is the default (RFC 3986)
}

TEST(UrlParse, Https) {
  url u = url::parse("HTTPS://example.com/RPC2");
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, "443");  // https's default port
  EXPECT_EQ(u.path, "/RPC2");
  EXPECT_EQ(url::parse("https://u:p@[::1]:8443").port, "8443");
  EXPECT_EQ(url::parse("https://h").path, "/RPC2");
  EXPECT_EQ(url::parse("http://h").scheme, "http");
}

class UrlParseRejects : public ::testing::TestWithParam<const char*> {};

TEST_P(UrlParseRejects, WithInvalidArgument) {
  EXPECT_THROW(url::parse(GetParam()), std::invalid_argument) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(BadUrls, UrlParseRejects,
                         ::testing::Values("",                     // nothing
                                           "localhost:6677/RPC2",  // no scheme
                                           "ftp://h/",             // other scheme
                                           "https://",             // no host
                                           "https:/h/",            // malformed scheme
                                           "http:/h/",             // malformed scheme
                                           "http://",              // no host
                                           "http:///RPC2",         // no host
                                           "http://:80/",          // no host
                                           "http://u:p@/",         // no host
                                           "http://h:0/",          // port 0
                                           "http://h:65536/",      // port too large
                                           "http://h:12ab/",       // port not a number
                                           "http://h:-1/",         // negative port
                                           "http://h:+80/",        // signed port
                                           "http://[::1/",         // unterminated IPv6
                                           "http://[not-an-ip]/",  // not IPv6
                                           "http://[::1]x/",       // junk after IPv6
                                           "http://h]/",           // stray bracket
                                           "http://h/a b",         // space in path
                                           "http://h/a\r\nX: 1",   // header injection
                                           "http://h\t/",          // control in host
                                           "http://u%4:p@h/",      // short escape
                                           "http://u%zz:p@h/",     // bad escape
                                           "http://u:p%@h/",       // truncated escape
                                           "http://h%41/"));       // escape in host

}  // namespace
}  // namespace rapidrpc

// The client's wire pieces without I/O: the request head, the meaning of a
// complete response, and the system.multicall envelope.
#include "client/wire.hpp"
#include "http/gzip.hpp"

#include <gtest/gtest.h>

namespace rapidrpc::client_detail {
namespace {

std::string head_for(std::string_view u, const client_options& o = {}, std::size_t length = 42,
                     bool gzip = false) {
  std::string out;
  request_head(url::parse(u), o).write(out, length, gzip);
  return out;
}

TEST(RequestHead, CarriesTheRequiredHeaders) {
  std::string h = head_for("http://example.com:6677/RPC2");
  EXPECT_EQ(h.rfind("POST /RPC2 HTTP/1.1\r\n", 0), 0U) << h;
  EXPECT_NE(h.find("\r\nHost: example.com:6677\r\n"), std::string::npos) << h;
  EXPECT_NE(h.find("\r\nUser-Agent: rapidrpc/0.1\r\n"), std::string::npos) << h;
  EXPECT_NE(h.find("\r\nContent-Type: text/xml\r\n"), std::string::npos) << h;
  EXPECT_NE(h.find("\r\nContent-Length: 42\r\n"), std::string::npos) << h;
  EXPECT_NE(h.find("\r\nAccept-Encoding: gzip\r\n"), std::string::npos) << h;
  EXPECT_EQ(h.find("Content-Encoding"), std::string::npos) << h;
  EXPECT_EQ(h.find("Authorization"), std::string::npos) << h;
  EXPECT_EQ(h.find("Connection"), std::string::npos) << h;
  EXPECT_TRUE(h.ends_with("\r\n\r\n")) << h;
}

TEST(RequestHead, HostHeaderOmitsPort80AndBracketsIpv6) {
  EXPECT_NE(head_for("http://example.com/x").find("\r\nHost: example.com\r\n"), std::string::npos);
  EXPECT_NE(head_for("http://[::1]:8/x").find("\r\nHost: [::1]:8\r\n"), std::string::npos);
}

TEST(RequestHead, HostHeaderOmitsTheSchemesDefaultPortOnly) {
  EXPECT_NE(head_for("https://example.com/x").find("\r\nHost: example.com\r\n"), std::string::npos);
  EXPECT_NE(head_for("https://example.com:80/x").find("\r\nHost: example.com:80\r\n"),
            std::string::npos);
  EXPECT_NE(head_for("http://example.com:443/x").find("\r\nHost: example.com:443\r\n"),
            std::string::npos);
}

TEST(RequestHead, GzipBodyAndNoAcceptEncoding) {
  client_options o;
  o.accept_gzip = false;
  std::string h = head_for("http://h/", o, 7, true);
  EXPECT_NE(h.find("\r\nContent-Encoding: gzip\r\n"), std::string::npos) << h;
  EXPECT_EQ(h.find("Accept-Encoding"), std::string::npos) << h;
}

TEST(RequestHead, NoKeepAliveAsksTheServerToClose) {
  client_options o;
  o.keep_alive = false;
  EXPECT_NE(head_for("http://h/", o).find("\r\nConnection: close\r\n"), std::string::npos);
}

TEST(RequestHead, BasicAuthFromTheDecodedUserInfo) {
  // "Aladdin:open sesame" is RFC 7617's example.
  std::string h = head_for("http://Aladdin:open%20sesame@h/");
  EXPECT_NE(h.find("\r\nAuthorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n"), std::string::npos)
      << h;
}

TEST(RequestHead, ExtraHeadersAreSentAndMayReplaceDefaults) {
  client_options o;
  o.headers = {{"X-Trace", "1"}, {"User-Agent", "mine/2"}};
  std::string h = head_for("http://h/", o);
  EXPECT_NE(h.find("\r\nX-Trace: 1\r\n"), std::string::npos) << h;
  EXPECT_NE(h.find("\r\nUser-Agent: mine/2\r\n"), std::string::npos) << h;
  EXPECT_EQ(h.find("rapidrpc/"), std::string::npos) << h;
}

TEST(RequestHead, RefusesHeadersThatBreakTheRequest) {
  for (auto [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"X-Bad", "a\r\nInjected: 1"},
                                                        {"X-Bad", std::string("a\0b", 3)},
                                                        {"Bad Name", "1"},
                                                        {"", "1"},
                                                        {"Bad:Name", "1"},
                                                        {"Content-Length", "5"},
                                                        {"transfer-encoding", "chunked"},
                                                        {"Host", "elsewhere"},
                                                        {"Connection", "close"},
                                                        {"Content-Encoding", "gzip"}}) {
    client_options o;
    o.headers = {{name, value}};
    EXPECT_THROW(request_head(url::parse("http://h/"), o), std::invalid_argument) << name;
  }
}

// ---- interpret_response --------------------------------------------------------------

struct InterpretResponse : ::testing::Test {
  xmlrpc::parser parser{xmlrpc::document_type::response};
  std::string scratch;

  call_result run(std::string body, int status = 200, std::string_view encoding = {},
                  std::size_t limit = 1 << 20) {
    return interpret_response(status, "Reason", encoding, body, limit, parser, scratch);
  }
  static std::string doc(const value& v) {
    std::string out;
    xmlrpc::write_response(out, v);
    return out;
  }
};

TEST_F(InterpretResponse, AResult) {
  auto r = run(doc(value("hi")));
  ASSERT_EQ(r.index(), 0U);
  EXPECT_EQ(std::get<value>(r), value("hi"));
}

TEST_F(InterpretResponse, AFault) {
  std::string d;
  xmlrpc::write_fault(d, -32601, "no such method");
  auto r = run(d);
  ASSERT_EQ(r.index(), 1U);
  EXPECT_EQ(std::get<fault>(r).code(), -32601);
  EXPECT_EQ(std::get<fault>(r).message(), "no such method");
}

TEST_F(InterpretResponse, AnErrorStatusIsHttpStatus) {
  auto r = run("<html>not here</html>", 404);
  ASSERT_EQ(r.index(), 2U);
  const auto& e = std::get<transport_error>(r);
  EXPECT_EQ(e.why(), transport_error::reason::http_status);
  EXPECT_EQ(e.http_status(), 404);
  EXPECT_NE(std::string(e.what()).find("404"), std::string::npos) << e.what();
}

TEST_F(InterpretResponse, AGzipBodyIsInflated) {
  std::string packed;
  http::gzip(doc(value(std::int32_t{7})), packed);
  auto r = run(packed, 200, "gzip");
  ASSERT_EQ(r.index(), 0U);
  EXPECT_EQ(std::get<value>(r), value(std::int32_t{7}));
}

TEST_F(InterpretResponse, AGzipBombStopsAtTheLimit) {
  std::string packed;
  http::gzip(doc(value(std::string(100'000, 'x'))), packed);
  auto r = run(packed, 200, "gzip", 10'000);
  ASSERT_EQ(r.index(), 2U);
  EXPECT_EQ(std::get<transport_error>(r).why(), transport_error::reason::bad_response);
}

TEST_F(InterpretResponse, CorruptGzipAndUnknownEncodingsAreBadResponses) {
  for (auto [body, enc] : std::vector<std::pair<std::string, std::string>>{
           {"not gzip", "gzip"}, {doc(value(1)), "br"}, {doc(value(1)), "deflate"}}) {
    auto r = run(body, 200, enc);
    ASSERT_EQ(r.index(), 2U) << enc;
    EXPECT_EQ(std::get<transport_error>(r).why(), transport_error::reason::bad_response) << enc;
  }
  EXPECT_EQ(run(doc(value(1)), 200, "identity").index(), 0U);
}

TEST_F(InterpretResponse, ABodyThatIsNotAMethodResponseIsABadResponse) {
  for (std::string body : {"", "<html/>", "<methodResponse>",
                           "<?xml version=\"1.0\"?><methodCall>"
                           "<methodName>x</methodName></methodCall>"}) {
    auto r = run(body);
    ASSERT_EQ(r.index(), 2U) << body;
    EXPECT_EQ(std::get<transport_error>(r).why(), transport_error::reason::bad_response) << body;
  }
}

TEST_F(InterpretResponse, TheParserIsReusedAfterABadDocument) {
  EXPECT_EQ(run("<garbage").index(), 2U);
  EXPECT_EQ(run(doc(value(true))).index(), 0U);
}

// ---- outcomes and system.multicall ----------------------------------------------------

TEST(ToOutcome, TransportErrorsBecomeTransportErrorFaults) {
  outcome o = to_outcome(transport_error(transport_error::reason::timeout, "too slow"));
  ASSERT_TRUE(std::holds_alternative<fault>(o));
  EXPECT_EQ(std::get<fault>(o).code(), fault_code::transport_error);
  EXPECT_EQ(std::get<fault>(o).message(), "too slow");
}

TEST(Multicall, ParamsAreOneArrayOfMethodStructs) {
  array p = multicall_params({{"sample.add", {value(1), value(2)}}, {"echo", {}}});
  ASSERT_EQ(p.size(), 1U);
  const auto& calls = p[0].as<array>();
  ASSERT_EQ(calls.size(), 2U);
  const auto& first = calls[0].as<structure>();
  EXPECT_EQ(first.at("methodName"), value("sample.add"));
  EXPECT_EQ(first.at("params"), value(array{value(1), value(2)}));
  EXPECT_EQ(calls[1].as<structure>().at("params"), value(array{}));
}

TEST(Multicall, SlotsMapToValuesAndFaults) {
  structure f{{"faultCode", value(-32601)}, {"faultString", value("unknown")}};
  structure f8{{"faultCode", value(std::int64_t{-5})}, {"faultString", value("i8 code")}};
  auto out = split_multicall(value(array{value(array{value(3)}), value(f), value(f8)}), 3);
  ASSERT_EQ(out.size(), 3U);
  EXPECT_EQ(std::get<value>(out[0]), value(3));
  EXPECT_EQ(std::get<fault>(out[1]).code(), -32601);
  EXPECT_EQ(std::get<fault>(out[1]).message(), "unknown");
  EXPECT_EQ(std::get<fault>(out[2]).code(), -5);
}

TEST(Multicall, AMalformedSlotFailsThatCallOnly) {
  structure no_string{{"faultCode", value(1)}};
  auto out = split_multicall(value(array{value(array{}), value(array{value(1), value(2)}),
                                         value("x"), value(no_string), value(array{value(9)})}),
                             5);
  ASSERT_EQ(out.size(), 5U);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(std::holds_alternative<fault>(out[i])) << i;
    EXPECT_EQ(std::get<fault>(out[i]).code(), fault_code::transport_error) << i;
  }
  EXPECT_EQ(std::get<value>(out[4]), value(9));
}

TEST(Multicall, AResultOfTheWrongShapeThrows) {
  EXPECT_THROW(split_multicall(value("x"), 1), transport_error);
  EXPECT_THROW(split_multicall(value(array{}), 1), transport_error);
  EXPECT_THROW(split_multicall(value(array{value(array{value(1)})}), 2), transport_error);
}

}  // namespace
}  // namespace rapidrpc::client_detail

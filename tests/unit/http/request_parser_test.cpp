// The request parser fed whole, and split at every byte position.
#include "http/request_parser.hpp"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>

#include <string>
#include <utility>
#include <vector>

namespace rapidrpc::http {
namespace {

namespace bhttp = boost::beast::http;

struct parsed {
  std::vector<request> requests;
  boost::beast::error_code error;  // the first error other than need_more
};

// Feeds `wire` in pieces cut at `cuts`, the way a connection does: unconsumed
// bytes stay in the buffer and are offered again with the next piece.
parsed feed(std::string_view wire, const std::vector<std::size_t>& cuts,
            std::size_t body_limit = 1 << 20, std::uint32_t header_limit = 8192) {
  parsed out;
  std::string buffer;
  std::size_t pos = 0;
  request req;
  std::optional<request_parser> p;
  auto pieces = cuts;
  pieces.push_back(wire.size());
  for (std::size_t cut : pieces) {
    buffer.append(wire.substr(pos, cut - pos));
    pos = cut;
    while (!buffer.empty()) {
      if (!p) {
        req.clear();
        p.emplace(req);
        p->eager(true);
        p->body_limit(body_limit);
        p->header_limit(header_limit);
      }
      boost::beast::error_code ec;
      std::size_t used = p->put(boost::asio::buffer(buffer), ec);
      buffer.erase(0, used);
      if (ec == bhttp::error::need_more) break;
      if (ec) {
        out.error = ec;
        return out;
      }
      if (!p->is_done()) break;
      out.requests.push_back(req);
      p.reset();
    }
  }
  return out;
}

const std::string kBody =
    "<?xml version=\"1.0\"?><methodCall><methodName>x</methodName></methodCall>";

std::string post(std::string extra_headers, std::string body = kBody) {
  return "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Type: text/xml\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string chunked(std::string_view body) {
  std::string out = "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::size_t half = body.size() / 2;
  char size[32];
  std::snprintf(size, sizeof size, "%zx", half);
  out += std::string(size) + "\r\n" + std::string(body.substr(0, half)) + "\r\n";
  std::snprintf(size, sizeof size, "%zX;ext=1", body.size() - half);
  out += std::string(size) + "\r\n" + std::string(body.substr(half)) + "\r\n0\r\n\r\n";
  return out;
}

void expect_same_at_every_split(const std::string& wire, std::size_t expected_requests) {
  auto whole = feed(wire, {});
  ASSERT_FALSE(whole.error) << whole.error.message();
  ASSERT_EQ(whole.requests.size(), expected_requests);
  for (std::size_t cut = 1; cut < wire.size(); ++cut) {
    auto split = feed(wire, {cut});
    ASSERT_FALSE(split.error) << "cut at " << cut;
    ASSERT_EQ(split.requests.size(), expected_requests) << "cut at " << cut;
    for (std::size_t i = 0; i < expected_requests; ++i) {
      EXPECT_EQ(split.requests[i].body, whole.requests[i].body) << "cut at " << cut;
      EXPECT_EQ(split.requests[i].target, whole.requests[i].target) << "cut at " << cut;
    }
  }
  std::vector<std::size_t> every;
  for (std::size_t i = 1; i < wire.size(); ++i) every.push_back(i);
  auto bytewise = feed(wire, every);
  ASSERT_FALSE(bytewise.error);
  ASSERT_EQ(bytewise.requests.size(), expected_requests);
  EXPECT_EQ(bytewise.requests.back().body, whole.requests.back().body);
}

TEST(RequestParser, ContentLengthRequest) {
  auto r = feed(post("Accept-Encoding: gzip\r\n"), {});
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].method, bhttp::verb::post);
  EXPECT_EQ(r.requests[0].target, "/RPC2");
  EXPECT_EQ(r.requests[0].version, 11u);
  EXPECT_TRUE(r.requests[0].accepts_gzip);
  EXPECT_EQ(r.requests[0].body, kBody);
}

TEST(RequestParser, EverySplitOfOneRequest) { expect_same_at_every_split(post(""), 1); }

TEST(RequestParser, EverySplitOfAChunkedRequest) {
  auto r = feed(chunked(kBody), {});
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].body, kBody);
  expect_same_at_every_split(chunked(kBody), 1);
}

TEST(RequestParser, EverySplitOfThreePipelinedRequests) {
  expect_same_at_every_split(post("") + chunked(kBody) + post("Connection: close\r\n", "abc"), 3);
}

TEST(RequestParser, HeadersTheServerActsOn) {
  auto r = feed(post("Content-Encoding: gzip\r\nExpect: 100-continue\r\n"), {});
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_TRUE(r.requests[0].gzip_body);
  EXPECT_TRUE(r.requests[0].expect_continue);
  EXPECT_FALSE(r.requests[0].unsupported_encoding);
  auto br = feed(post("Content-Encoding: br\r\n"), {});
  EXPECT_TRUE(br.requests[0].unsupported_encoding);
  auto odd = feed(post("Expect: something\r\n"), {});
  EXPECT_TRUE(odd.requests[0].bad_expect);
}

TEST(RequestParser, Http10) {
  auto r = feed("POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", {});
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].version, 10u);
}

TEST(RequestParser, BodyLimitBoundary) {
  EXPECT_FALSE(feed(post("", std::string(100, 'x')), {}, 100).error);
  EXPECT_EQ(feed(post("", std::string(101, 'x')), {}, 100).error, bhttp::error::body_limit);
  // Chunked bodies are held to the same limit.
  EXPECT_EQ(feed(chunked(std::string(101, 'x')), {}, 100).error, bhttp::error::body_limit);
}

// A large body with a Content-Length grows eight-fold past the first 256
// KiB, up to its announced size: no chain of doubled buffers (each copied,
// each left resident in the heap once freed), and no more room than eight
// times what a client that stops sending has sent.
std::pair<std::size_t, std::size_t> body_growth(std::size_t announced, std::size_t sent,
                                                std::string* body_out = nullptr) {
  const std::string body(sent, 'b');
  std::string wire = post("", body);
  if (announced != sent) {
    const std::string cl = "Content-Length: " + std::to_string(sent);
    wire.replace(wire.find(cl), cl.size(), "Content-Length: " + std::to_string(announced));
  }
  request req;
  request_parser p(req);
  p.eager(true);
  p.body_limit(16 << 20);
  std::size_t pos = 0;
  std::size_t growths = 0;
  std::size_t capacity = req.body.capacity();
  while (pos < wire.size() && !p.is_done()) {
    boost::beast::error_code ec;
    pos += p.put(
        boost::asio::buffer(wire.data() + pos, std::min<std::size_t>(64 * 1024, wire.size() - pos)),
        ec);
    EXPECT_TRUE(!ec || ec == bhttp::error::need_more) << ec.message();
    if (ec && ec != bhttp::error::need_more) break;
    if (req.body.capacity() != capacity) ++growths;
    capacity = req.body.capacity();
  }
  EXPECT_EQ(p.is_done(), announced == sent);
  if (body_out != nullptr) *body_out = req.body;
  return {growths, capacity};
}

TEST(RequestParser, LargeBodyGrowsEightFoldUpToItsContentLength) {
  std::string got;
  // 256 KiB when the body starts, then all of it.
  EXPECT_EQ(body_growth(600 * 1024 + 7, 600 * 1024 + 7, &got),
            std::make_pair(std::size_t{2}, std::size_t{600 * 1024 + 7}));
  EXPECT_EQ(got, std::string(600 * 1024 + 7, 'b'));
  // 256 KiB, 2 MiB, then all of it.
  EXPECT_EQ(body_growth(5 << 20, 5 << 20), std::make_pair(std::size_t{3}, std::size_t{5} << 20));
  // 300 KiB sent of 16 MiB announced: 2 MiB of room, not 16.
  EXPECT_EQ(body_growth(16 << 20, 300 * 1024).second, std::size_t{2} << 20);
}

TEST(RequestParser, HeaderLimit) {
  std::string big = "X-Big: " + std::string(9000, 'a') + "\r\n";
  EXPECT_EQ(feed(post(big), {}).error, bhttp::error::header_limit);
}

TEST(RequestParser, MalformedFramingIsAnError) {
  for (std::string wire : {
           std::string("POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n"),
           std::string("POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: "
                       "4\r\n\r\nabcd"),
           std::string(
               "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
           std::string(
               "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: "
               "3\r\n\r\n0\r\n\r\n"),
           std::string("POST /RPC2 HTTP/9.9\r\n\r\n"),
           std::string("POST\r\n\r\n"),
           std::string("POST /RPC2 HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n"),
       }) {
    EXPECT_TRUE(feed(wire, {}).error) << wire;
  }
}

TEST(AcceptsGzip, Codings) {
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(accepts_gzip("GZIP"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("gzip; q=0.000"));
  EXPECT_FALSE(accepts_gzip("deflate"));
  EXPECT_FALSE(accepts_gzip(""));
  EXPECT_FALSE(accepts_gzip("*, gzip;q=0"));
}

// What a browser's navigation sends gets the API page; curl's */* and an
// XML-RPC client's text/xml do not.
TEST(AcceptsHtml, MediaRanges) {
  EXPECT_TRUE(accepts_html("text/html"));
  EXPECT_TRUE(
      accepts_html("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"));
  EXPECT_TRUE(accepts_html("application/json, TEXT/HTML ; level=1"));
  EXPECT_TRUE(accepts_html("text/html;q=0.1"));
  EXPECT_FALSE(accepts_html("text/html;q=0"));
  EXPECT_FALSE(accepts_html("*/*"));
  EXPECT_FALSE(accepts_html("text/*"));
  EXPECT_FALSE(accepts_html("text/xml"));
  EXPECT_FALSE(accepts_html("text/htmlx"));
  EXPECT_FALSE(accepts_html(""));
}

TEST(RequestParser, AcceptHeaderSetsAcceptsHtml) {
  auto get = [](std::string_view accept) {
    return feed("GET /RPC2 HTTP/1.1\r\nHost: x\r\n" + std::string(accept) + "\r\n", {});
  };
  auto browser = get("Accept: text/html,*/*;q=0.8\r\n");
  ASSERT_EQ(browser.requests.size(), 1u);
  EXPECT_EQ(browser.requests[0].method, bhttp::verb::get);
  EXPECT_TRUE(browser.requests[0].accepts_html);
  // A second Accept line counts too (a list may be split over fields).
  auto split = get("Accept: application/json\r\nAccept: text/html\r\n");
  ASSERT_EQ(split.requests.size(), 1u);
  EXPECT_TRUE(split.requests[0].accepts_html);
  auto curl = get("Accept: */*\r\n");
  ASSERT_EQ(curl.requests.size(), 1u);
  EXPECT_FALSE(curl.requests[0].accepts_html);
}

}  // namespace
}  // namespace rapidrpc::http

// The request reader: the server's framing, fed at every split.
#include "http/request_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rapidrpc::http {
namespace {

struct run {
  std::vector<std::string> bodies;
  int error = 0;  // the status of a framing error, or 0
  bool continue_asked = false;
};

// Feeds `wire` in reads of `step` bytes, keeping unconsumed bytes as the
// connection does.
run feed(std::string_view wire, std::size_t step, std::size_t header_limit = 1024,
         std::size_t body_limit = 1 << 20, std::size_t line_limit = 8 * 1024,
         std::size_t field_limit = 100) {
  request_reader reader(header_limit, body_limit, line_limit, field_limit);
  run out;
  std::string in;
  for (std::size_t pos = 0; pos < wire.size();) {
    std::size_t n = std::min(step, wire.size() - pos);
    in.append(wire.substr(pos, n));
    pos += n;
    for (;;) {
      std::size_t used = 0;
      auto r = reader.parse(in, used);
      in.erase(0, used);
      if (r == request_reader::result::error) {
        out.error = reader.error_status();
        return out;
      }
      if (r == request_reader::result::need_more) {
        out.continue_asked = out.continue_asked || reader.take_continue();
        break;
      }
      out.bodies.push_back(reader.current().body);
      reader.next();
    }
  }
  return out;
}

std::string post(std::string body, std::string headers = "") {
  return "POST /RPC2 HTTP/1.1\r\nHost: h\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// What the reader made of one whole request, and whether Beast read it.
struct read_one {
  request req;
  bool keep_alive = false;
  int error = 0;
  bool direct = false;
};

read_one read_whole(std::string_view wire, bool direct) {
  request_reader reader(16 * 1024, 1 << 20);
  reader.set_direct(direct);
  std::size_t used = 0;
  read_one out;
  auto r = reader.parse(wire, used);
  if (r == request_reader::result::error) out.error = reader.error_status();
  if (r == request_reader::result::complete) {
    EXPECT_EQ(used, wire.size());
    out.req = reader.current();
    out.keep_alive = reader.keep_alive();
    out.direct = reader.read_directly();
  }
  return out;
}

void expect_same(const read_one& a, const read_one& b, std::string_view wire) {
  EXPECT_EQ(a.error, b.error) << wire;
  EXPECT_EQ(a.keep_alive, b.keep_alive) << wire;
  EXPECT_EQ(a.req.method, b.req.method) << wire;
  EXPECT_EQ(a.req.target, b.req.target) << wire;
  EXPECT_EQ(a.req.version, b.req.version) << wire;
  EXPECT_EQ(a.req.accepts_gzip, b.req.accepts_gzip) << wire;
  EXPECT_EQ(a.req.accepts_html, b.req.accepts_html) << wire;
  EXPECT_EQ(a.req.gzip_body, b.req.gzip_body) << wire;
  EXPECT_EQ(a.req.unsupported_encoding, b.req.unsupported_encoding) << wire;
  EXPECT_EQ(a.req.expect_continue, b.req.expect_continue) << wire;
  EXPECT_EQ(a.req.bad_expect, b.req.bad_expect) << wire;
  EXPECT_EQ(a.req.content_type, b.req.content_type) << wire;
  EXPECT_EQ(a.req.authorization, b.req.authorization) << wire;
  EXPECT_EQ(a.req.repeated_authorization, b.req.repeated_authorization) << wire;
  EXPECT_EQ(a.req.body, b.req.body) << wire;
}

// The requests clients send (Python's xmlrpc.client, curl, wrk, a browser's
// fetch, HTTP/1.0 with and without keep-alive, a refused length) are read
// without Beast, the same as Beast reads them.
TEST(RequestReader, PlainRequestsAreReadDirectlyAsBeastReadsThem) {
  const std::string body = "<?xml version=\"1.0\"?><methodCall/>";
  const std::string length = "Content-Length: " + std::to_string(body.size()) + "\r\n";
  const std::string wires[] = {
      "POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:6677\r\nAccept-Encoding: gzip\r\n"
      "Content-Type: text/xml\r\nUser-Agent: Python-xmlrpc/3.11\r\n" +
          length + "\r\n" + body,
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n"
      "content-type: application/json\r\n" +
          length + "\r\n" + body,
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nAuthorization: Basic dTpw  \r\n" + length +
          "Connection: close\r\n\r\n" + body,
      "POST /RPC2 HTTP/1.0\r\n" + length + "Connection: Keep-Alive\r\n\r\n" + body,
      "POST /RPC2 HTTP/1.0\r\n" + length + "\r\n" + body,
      "GET /api HTTP/1.1\r\nHost: h\r\nAccept: text/html,application/xhtml+xml;q=0.9\r\n\r\n",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\nExpect: 100-continue\r\n" +
          length + "\r\n" + body,
  };
  for (const std::string& wire : wires) {
    const read_one direct = read_whole(wire, true);
    EXPECT_TRUE(direct.direct) << wire;
    expect_same(direct, read_whole(wire, false), wire);
  }
  // A POST without a length: 411 either way.
  const std::string no_length = "POST /RPC2 HTTP/1.1\r\nHost: h\r\n\r\n";
  EXPECT_EQ(read_whole(no_length, true).error, 411);
  expect_same(read_whole(no_length, true), read_whole(no_length, false), no_length);
}

// What the direct reader declines, Beast reads (or refuses) as before.
TEST(RequestReader, WhatIsNotPlainIsLeftToBeast) {
  const std::string wires[] = {
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nX-Folded: a\r\n b\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: +2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nConnection: close, te\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nX-Bin: \xC3\xA9\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nX_Under: a\r\n\r\nab",
      "post /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nab",
      "POST /RPC2 HTTP/2.0\r\nContent-Length: 2\r\n\r\nab",
  };
  for (const std::string& wire : wires) {
    const read_one direct = read_whole(wire, true);
    EXPECT_FALSE(direct.direct) << wire;
    expect_same(direct, read_whole(wire, false), wire);
  }
}

TEST(RequestReader, PipelinedRequestsAtEveryReadSize) {
  std::string wire = post("one") + post("two") + post("three");
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    auto r = feed(wire, step);
    ASSERT_EQ(r.error, 0) << "step " << step;
    ASSERT_EQ(r.bodies, (std::vector<std::string>{"one", "two", "three"})) << "step " << step;
  }
}

TEST(RequestReader, HeaderLimitHoldsWhenTheHeaderArrivesInPieces) {
  // Regression: Beast counts its header limit within one put() only, so a
  // header trickling in could grow without bound.
  std::string big = post("x", "X-Pad: " + std::string(2000, 'a') + "\r\n");
  for (std::size_t step : {1u, 7u, 100u, 5000u}) EXPECT_EQ(feed(big, step).error, 431) << step;
}

TEST(RequestReader, HeaderLimitBoundary) {
  std::string base = post("", "X-Pad: \r\n");
  std::string header = base.substr(0, base.find("\r\n\r\n") + 4);
  std::size_t limit = header.size();
  EXPECT_EQ(feed(base, 1, limit).error, 0);
  EXPECT_EQ(feed(post("", "X-Pad: a\r\n"), 1, limit).error, 431);
}

TEST(RequestReader, PostWithoutLengthIs411) {
  EXPECT_EQ(feed("POST /RPC2 HTTP/1.1\r\nHost: h\r\n\r\n", 3).error, 411);
}

TEST(RequestReader, FramingErrors) {
  EXPECT_EQ(feed(post(std::string(101, 'x')), 10, 1024, 100).error, 413);
  EXPECT_EQ(
      feed("POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 4)
          .error,
      400);
  EXPECT_EQ(feed("POST /RPC2 HTTP/2.0\r\nContent-Length: 0\r\n\r\n", 4).error, 505);
}

// A version Beast refuses is 505 only in a well-formed request line (RFC
// 9112, 3): a line of another shape is malformed, 400 (docs/limits.md).
TEST(RequestReader, MalformedRequestLineIs400NotA505) {
  const std::string rest = "\r\nHost: h\r\nContent-Length: 0\r\n\r\n";
  for (std::size_t step : {1u, 4u, 4096u}) {
    EXPECT_EQ(feed("POST /RP C2 HTTP/1.1" + rest, step).error, 400) << step;
    EXPECT_EQ(feed("POST /RPC2 HTTP/1.1x" + rest, step).error, 400) << step;
    EXPECT_EQ(feed("POST /RPC2 HTTP/9.9" + rest, step).error, 505) << step;
  }
}

TEST(RequestReader, RequestLineLimitIs414AtEveryReadSize) {
  const std::string line = "POST /RPC2 HTTP/1.1";  // 19 bytes
  for (std::size_t step : {1u, 2u, 5u, 19u, 21u, 64u, 4096u}) {
    EXPECT_EQ(feed(post("x"), step, 1024, 1 << 20, line.size()).error, 0) << step;
    EXPECT_EQ(feed(post("x"), step, 1024, 1 << 20, line.size() - 1).error, 414) << step;
  }
  // A line that never ends is refused once it passes the limit, not held.
  EXPECT_EQ(feed("POST /" + std::string(100, 'a'), 1, 1024, 1 << 20, 50).error, 414);
  // The line limit applies to each request of a keep-alive stream.
  std::string wire = post("one") + "POST /" + std::string(60, 'a') + " HTTP/1.1\r\nHost: h\r\n\r\n";
  auto r = feed(wire, 7, 1024, 1 << 20, 40);
  EXPECT_EQ(r.bodies, std::vector<std::string>{"one"});
  EXPECT_EQ(r.error, 414);
}

TEST(RequestReader, HeaderFieldLimitIs431) {
  std::string fields;
  for (int i = 0; i < 9; ++i) fields += "X-F" + std::to_string(i) + ": v\r\n";
  // Host + 9 + Content-Length = 11 fields.
  EXPECT_EQ(feed(post("x", fields), 3, 1024, 1 << 20, 8192, 11).error, 0);
  EXPECT_EQ(feed(post("x", fields), 3, 1024, 1 << 20, 8192, 10).error, 431);
  // Trailer fields count too.
  std::string chunked =
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n" +
      fields + "\r\n";
  // Host + Transfer-Encoding + 9 trailer fields = 11.
  EXPECT_EQ(feed(chunked, 5, 1024, 1 << 20, 8192, 11).error, 0);
  EXPECT_EQ(feed(chunked, 5, 1024, 1 << 20, 8192, 10).error, 431);
}

// Regression: Beast takes a repeated Content-Length of the same value, and a
// Transfer-Encoding that does not end in chunked as none (framing the body
// by Content-Length); a proxy in front may read either differently.
TEST(RequestReader, AmbiguousFramingIs400) {
  const char* cases[] = {
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\nContent-Length: "
      "2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
      "chunked\r\n\r\n0\r\n\r\n",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length : 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\nContent-Length: 2\n\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: +2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n",
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
  };
  for (const char* wire : cases)
    for (std::size_t step : {1u, 4096u})
      EXPECT_EQ(feed(wire, step).error, 400) << step << ": " << wire;
  EXPECT_EQ(feed("POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
                 1)
                .bodies,
            std::vector<std::string>{"ab"});
}

// RFC 9112, 3.2: an HTTP/1.1 request without Host, and any request with two
// Host fields, is answered 400; the same whether the direct reader or Beast
// reads it, at every read size.
TEST(RequestReader, Http11NeedsExactlyOneHost) {
  const std::string bad[] = {
      "POST /RPC2 HTTP/1.1\r\nContent-Length: 2\r\n\r\nab",
      "GET /api HTTP/1.1\r\n\r\n",
      "POST /RPC2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
      "POST /RPC2 HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nhost: a\r\n\r\nab",
      "POST /RPC2 HTTP/1.0\r\nHost: a\r\nHost: a\r\nContent-Length: 2\r\n\r\nab",
  };
  for (const std::string& wire : bad) {
    for (std::size_t step : {1u, 7u, 4096u}) EXPECT_EQ(feed(wire, step).error, 400) << wire;
    expect_same(read_whole(wire, true), read_whole(wire, false), wire);
  }
  const std::string good[] = {
      "POST /RPC2 HTTP/1.1\r\nhOsT: a\r\nContent-Length: 2\r\n\r\nab",
      "POST /RPC2 HTTP/1.1\r\nHost:\r\nContent-Length: 2\r\n\r\nab",  // empty is allowed
      "POST /RPC2 HTTP/1.0\r\nContent-Length: 2\r\n\r\nab",           // HTTP/1.0 may have none
  };
  for (const std::string& wire : good) {
    for (std::size_t step : {1u, 7u, 4096u})
      EXPECT_EQ(feed(wire, step).bodies, std::vector<std::string>{"ab"}) << wire;
    const read_one direct = read_whole(wire, true);
    EXPECT_TRUE(direct.direct) << wire;
    expect_same(direct, read_whole(wire, false), wire);
  }
}

// Beast looks for CRLF alone at the end of a chunk line: one ending in a
// bare LF was held until the request timeout, and a chunk line grew with
// whatever the client sent. Both are a 400 at once, at every read size; a
// line of max_chunk_line bytes (hex digits, leading zeros and extensions
// counted) is still read.
TEST(RequestReader, ChunkLinesEndInCrlfAndAreShort) {
  const std::string head = "POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string at_limit_ext = "1;" + std::string(max_chunk_line - 2, 'e');
  const std::string at_limit_zeros = std::string(max_chunk_line - 1, '0') + "1";
  const std::string bad[] = {
      head + "1\nA\n0\n\n",                    // the bare LF case found: never a CRLF
      head + "1\nA\r\n0\r\n\r\n",              // a bare LF, then CRLFs
      head + "1\r\nA\r\n0\n\n",                // the last chunk's line
      head + "1\r\nA\r\n1;x=y\n",              // after a good chunk
      head + "1;" + std::string(100000, 'e'),  // an extension that never ends
      head + at_limit_ext + "e\r\nA\r\n0\r\n\r\n",
      head + "0" + at_limit_zeros + "\r\nA\r\n0\r\n\r\n",
      head + "1\r\nA\r\n0;" + std::string(max_chunk_line, 'e') + "\r\n\r\n",
      head + "1;e=\"x\nA\"\r\nA\r\n0\r\n\r\n",  // a LF in a quoted value (found by fuzzing)
  };
  for (const std::string& wire : bad)
    for (std::size_t step : {1u, 3u, 64u, 1000u, 1u << 20})
      EXPECT_EQ(feed(wire, step).error, 400) << step << ": " << wire.substr(head.size(), 40);
  const std::string good[] = {
      head + at_limit_ext + "\r\nA\r\n0\r\n\r\n",
      head + at_limit_zeros + "\r\nA\r\n0\r\n\r\n",
      head + "1\r\nA\r\n0;" + std::string(max_chunk_line - 2, 'e') + "\r\n\r\n",
  };
  for (const std::string& wire : good) {
    for (std::size_t step : {1u, 3u, 64u, 1000u, 1u << 20}) {
      const run r = feed(wire, step);
      EXPECT_EQ(r.error, 0) << step;
      EXPECT_EQ(r.bodies, std::vector<std::string>{"A"}) << step;
    }
  }
}

TEST(RequestReader, AsksForContinueOnceWhenTheBodyIsHeldBack) {
  std::string head = post("", "Expect: 100-continue\r\n");
  head = head.substr(0, head.size());  // Content-Length: 0 body: complete at once
  EXPECT_FALSE(feed(head, 1000).continue_asked);
  std::string wire =
      "POST /RPC2 HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n";
  EXPECT_TRUE(feed(wire, 1000).continue_asked);
}

// Refuses requests whose Authorization is not "ok", from the header alone.
struct refuse_unless_ok final : header_hook {
  int on_header(const request& r) override {
    ++calls;
    seen_body_bytes += r.body.size();
    return r.authorization == "ok" && !r.repeated_authorization ? 0 : 401;
  }
  int calls = 0;
  std::size_t seen_body_bytes = 0;
};

TEST(RequestReader, HeaderHookRefusesBeforeAnyBodyIsRead) {
  std::string wire = post(std::string(5000, 'x'), "Authorization: no\r\n");
  std::size_t header_end = wire.find("\r\n\r\n") + 4;
  for (std::size_t step : {1u, 13u, 200u, 100000u}) {
    refuse_unless_ok hook;
    request_reader reader(1024, 1 << 20, 8 * 1024, 100, &hook);
    std::string in;
    std::size_t fed = 0;
    request_reader::result r = request_reader::result::need_more;
    while (r == request_reader::result::need_more && fed < wire.size()) {
      std::size_t n = std::min(step, wire.size() - fed);
      in.append(wire, fed, n);
      fed += n;
      std::size_t used = 0;
      r = reader.parse(in, used);
      in.erase(0, used);
    }
    ASSERT_EQ(r, request_reader::result::error) << step;
    EXPECT_EQ(reader.error_status(), 401) << step;
    EXPECT_EQ(hook.calls, 1) << step;
    EXPECT_EQ(hook.seen_body_bytes, 0u) << step;
    EXPECT_EQ(reader.current().body.size(), 0u) << step;
    // Decided as soon as the header was whole, not after the body.
    EXPECT_LT(fed, header_end + step) << step;
  }
}

TEST(RequestReader, HeaderHookLetsGoodRequestsThroughAtEveryReadSize) {
  std::string wire = post("one", "Authorization: ok\r\n") + post("two", "Authorization: ok\r\n");
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    refuse_unless_ok hook;
    request_reader reader(1024, 1 << 20, 8 * 1024, 100, &hook);
    std::string in;
    std::vector<std::string> bodies;
    for (std::size_t fed = 0; fed < wire.size();) {
      std::size_t n = std::min(step, wire.size() - fed);
      in.append(wire, fed, n);
      fed += n;
      for (;;) {
        std::size_t used = 0;
        auto r = reader.parse(in, used);
        in.erase(0, used);
        ASSERT_NE(r, request_reader::result::error) << step;
        if (r == request_reader::result::need_more) break;
        bodies.push_back(reader.current().body);
        EXPECT_EQ(reader.current().authorization, "ok");
        reader.next();
      }
    }
    EXPECT_EQ(bodies, (std::vector<std::string>{"one", "two"})) << step;
    EXPECT_EQ(hook.calls, 2) << step;
  }
}

TEST(RequestReader, RepeatedAuthorizationIsNoted) {
  refuse_unless_ok hook;
  request_reader reader(1024, 1 << 20, 8 * 1024, 100, &hook);
  std::string wire = post("x", "Authorization: ok\r\nAuthorization: ok\r\n");
  std::size_t used = 0;
  EXPECT_EQ(reader.parse(wire, used), request_reader::result::error);
  EXPECT_EQ(reader.error_status(), 401);
}

// The relay passes each request on as it came: with keep_head(), the
// request line and header are kept byte for byte, read directly or by
// Beast, however the bytes are cut.
TEST(RequestReader, KeptHeadIsTheHeadAsReceivedAtEveryReadSize) {
  const std::string plain =
      "POST /p?q=1 HTTP/1.1\r\nHost: h\r\nX-Mixed-CASE: a  b\r\nX-Dup: 1\r\nX-Dup: 2\r\n"
      "Content-Length: 3\r\n\r\n";
  const std::string general =
      "PUT /x HTTP/1.1\r\nHost: h\r\nX-Bin: \xC3\xA9\r\nContent-Length: 2\r\n\r\n";
  const std::string chunked = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string wire = plain + "abc" + general + "de" + chunked + "2\r\nfg\r\n0\r\n\r\n";
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    request_reader reader(1024, 1 << 20);
    reader.keep_head(true);
    std::vector<std::pair<std::string, bool>> heads;
    std::vector<std::string> bodies;
    std::string in;
    for (std::size_t pos = 0; pos < wire.size(); pos += step) {
      in.append(wire.substr(pos, step));
      for (;;) {
        std::size_t used = 0;
        auto r = reader.parse(in, used);
        in.erase(0, used);
        ASSERT_NE(r, request_reader::result::error) << "step " << step;
        if (r == request_reader::result::need_more) break;
        heads.emplace_back(reader.current().head, reader.current().chunked);
        bodies.push_back(reader.current().body);
        reader.next();
      }
    }
    ASSERT_EQ(heads, (std::vector<std::pair<std::string, bool>>{
                         {plain, false}, {general, false}, {chunked, true}}))
        << "step " << step;
    ASSERT_EQ(bodies, (std::vector<std::string>{"abc", "de", "fg"})) << "step " << step;
  }
  // Off (the default), no head is kept.
  auto one = read_whole(plain + "abc", true);
  EXPECT_TRUE(one.req.head.empty());
}

}  // namespace
}  // namespace rapidrpc::http

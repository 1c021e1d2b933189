// The response reader (what the relay reads back from the program behind
// it), fed at every split point.
#include "http/response_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rapidrpc::http {
namespace {

using fields = std::vector<std::pair<std::string, std::string>>;

struct outcome {
  std::vector<response> responses;
  bool error = false;
  std::string left;  // bytes not consumed
};

// Feeds `wire` in two pieces cut at `split` (then the end of the stream if
// `eof`), keeping unconsumed bytes as the relay does; a new response is
// started after each complete one while bytes remain.
outcome feed(std::string_view wire, std::size_t split, bool to_head = false, bool eof = false) {
  response_reader reader;
  reader.start(to_head);
  outcome out;
  std::string in;
  for (std::string_view piece : {wire.substr(0, split), wire.substr(split)}) {
    in.append(piece);
    for (;;) {
      std::size_t used = 0;
      auto r = reader.parse(in, used);
      in.erase(0, used);
      if (r == response_reader::result::error) {
        out.error = true;
        return out;
      }
      if (r == response_reader::result::need_more) break;
      out.responses.push_back(reader.current());
      reader.start(to_head);
      if (in.empty()) break;
    }
  }
  if (eof && reader.started()) {
    if (reader.finish() == response_reader::result::complete)
      out.responses.push_back(reader.current());
    else
      out.error = true;
  }
  out.left = in;
  return out;
}

// Runs `check` on the outcome of every split of `wire`.
template <class Check>
void at_every_split(std::string_view wire, Check check, bool to_head = false, bool eof = false) {
  for (std::size_t split = 0; split <= wire.size(); ++split) {
    SCOPED_TRACE("split at " + std::to_string(split));
    check(feed(wire, split, to_head, eof));
  }
}

TEST(ResponseReader, ContentLengthKeepsEveryFieldAsWritten) {
  const std::string wire =
      "HTTP/1.0 200 OK\r\nServer: BaseHTTP/0.6 Python/3.11\r\nx-lower: a  b\r\n"
      "Content-Type: text/xml\r\nX-Dup: 1\r\nX-Dup: 2\r\nContent-Length: 5\r\n\r\nhello";
  at_every_split(wire, [](const outcome& o) {
    ASSERT_FALSE(o.error);
    ASSERT_EQ(o.responses.size(), 1u);
    const response& r = o.responses[0];
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.version, 10u);
    EXPECT_EQ(r.reason, "OK");
    EXPECT_EQ(r.fields, (fields{{"Server", "BaseHTTP/0.6 Python/3.11"},
                                {"x-lower", "a  b"},
                                {"Content-Type", "text/xml"},
                                {"X-Dup", "1"},
                                {"X-Dup", "2"},
                                {"Content-Length", "5"}}));
    EXPECT_EQ(r.body, "hello");
    EXPECT_TRUE(r.content_length);
    EXPECT_FALSE(r.keep_alive);  // HTTP/1.0 without keep-alive
    EXPECT_FALSE(r.bodyless);
  });
}

TEST(ResponseReader, ChunkedBodyIsDechunkedAndTrailersAreNoFields) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n";
  at_every_split(wire, [](const outcome& o) {
    ASSERT_FALSE(o.error);
    ASSERT_EQ(o.responses.size(), 1u);
    EXPECT_EQ(o.responses[0].body, "hello, world");
    EXPECT_EQ(o.responses[0].fields, (fields{{"Transfer-Encoding", "chunked"}}));
    EXPECT_FALSE(o.responses[0].content_length);
    EXPECT_TRUE(o.responses[0].keep_alive);
  });
}

TEST(ResponseReader, BodyUntilTheEndOfTheStream) {
  const std::string wire = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it";
  at_every_split(
      wire,
      [](const outcome& o) {
        ASSERT_FALSE(o.error);
        ASSERT_EQ(o.responses.size(), 1u);
        EXPECT_EQ(o.responses[0].body, "all of it");
        EXPECT_FALSE(o.responses[0].content_length);
        EXPECT_FALSE(o.responses[0].keep_alive);
      },
      false, true);
}

TEST(ResponseReader, ResponsesToHeadAnd204And304HaveNoBody) {
  // The next response follows at once: nothing is taken as a body.
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
  const std::string next = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  at_every_split(
      head + head,
      [](const outcome& o) {
        ASSERT_FALSE(o.error);
        ASSERT_EQ(o.responses.size(), 2u);
        EXPECT_TRUE(o.responses[0].bodyless);
        EXPECT_EQ(o.responses[0].fields, (fields{{"Content-Length", "10"}}));
        EXPECT_EQ(o.responses[1].body, "");
      },
      true);
  at_every_split("HTTP/1.1 204 No Content\r\nX-A: b\r\n\r\n" + next, [](const outcome& o) {
    ASSERT_FALSE(o.error);
    ASSERT_EQ(o.responses.size(), 2u);
    EXPECT_EQ(o.responses[0].status, 204);
    EXPECT_TRUE(o.responses[0].bodyless);
    EXPECT_EQ(o.responses[1].body, "ok");
  });
  at_every_split("HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n" + next,
                 [](const outcome& o) {
                   ASSERT_FALSE(o.error);
                   ASSERT_EQ(o.responses.size(), 2u);
                   EXPECT_TRUE(o.responses[0].bodyless);
                   EXPECT_EQ(o.responses[1].body, "ok");
                 });
}

TEST(ResponseReader, InterimResponsesAreSkipped) {
  const std::string wire =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nafter";
  at_every_split(wire, [](const outcome& o) {
    ASSERT_FALSE(o.error);
    ASSERT_EQ(o.responses.size(), 1u);
    EXPECT_EQ(o.responses[0].status, 200);
    EXPECT_EQ(o.responses[0].body, "after");
  });
}

TEST(ResponseReader, KeepAliveAsTheSenderSaysIt) {
  const auto keeps = [](const std::string& wire) {
    auto o = feed(wire, wire.size());
    EXPECT_EQ(o.responses.size(), 1u) << wire;
    return !o.responses.empty() && o.responses[0].keep_alive;
  };
  EXPECT_TRUE(keeps("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_FALSE(keeps("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_FALSE(keeps("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_TRUE(keeps("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"));
}

TEST(ResponseReader, BareLineFeedsAndFoldedLinesAreMadePlain) {
  // What Python's SimpleXMLRPCRequestHandler writes for a failed request
  // with _send_traceback_header: the traceback's bare LFs and indented
  // lines inside a field, its last line a field of its own.
  const std::string wire =
      "HTTP/1.0 500 Internal Server Error\r\nServer: BaseHTTP/0.6\r\n"
      "X-exception: invalid literal\r\n"
      "X-traceback: Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n"
      "\t  int('a')\nValueError: invalid\r\nContent-length: 2\r\n\r\nno";
  at_every_split(wire, [](const outcome& o) {
    ASSERT_FALSE(o.error);
    ASSERT_EQ(o.responses.size(), 1u);
    const response& r = o.responses[0];
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(r.fields, (fields{{"Server", "BaseHTTP/0.6"},
                                {"X-exception", "invalid literal"},
                                {"X-traceback",
                                 "Traceback (most recent call last): File \"x.py\", line 1, in f "
                                 "int('a')"},
                                {"ValueError", "invalid"},
                                {"Content-length", "2"}}));
    EXPECT_EQ(r.body, "no");
  });
  // A head of bare LFs only, and a body holding CRLFs and LFs left as sent.
  at_every_split("HTTP/1.1 200 OK\nContent-Length: 6\n\na\r\nb\n\n", [](const outcome& o) {
    ASSERT_FALSE(o.error);
    ASSERT_EQ(o.responses.size(), 1u);
    EXPECT_EQ(o.responses[0].fields, (fields{{"Content-Length", "6"}}));
    EXPECT_EQ(o.responses[0].body, "a\r\nb\n\n");
  });
}

TEST(ResponseReader, AHeadPastItsLimitIsAnError) {
  response_reader reader(64);
  reader.start(false);
  const std::string wire = "HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'a') + "\r\n\r\n";
  std::size_t used = 0;
  EXPECT_EQ(reader.parse(wire, used), response_reader::result::error);
}

TEST(ResponseReader, ACutOrMalformedResponseIsAnError) {
  // Cut inside the body, the header, or before anything came.
  for (const std::string wire :
       {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", "HTTP/1.1 200 OK\r\nContent-Le",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhe"}) {
    at_every_split(
        wire, [](const outcome& o) { EXPECT_TRUE(o.error); }, false, true);
  }
  response_reader reader;
  reader.start(false);
  EXPECT_EQ(reader.finish(), response_reader::result::error);  // nothing at all
  // Not HTTP, a protocol switch, two lengths.
  for (const std::string wire :
       {"SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"}) {
    EXPECT_TRUE(feed(wire, wire.size()).error) << wire;
  }
}

}  // namespace
}  // namespace rapidrpc::http

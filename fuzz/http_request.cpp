// Fuzz target: the HTTP request parser, fed the way the server feeds it.
//
// Input: one control byte, then the bytes a client sends on one connection.
// The control byte picks where the stream is cut in two (0: before the first
// byte, 255: after the last), as if it arrived in two reads.
//
// The stream goes through the server's own request_reader, as
// connection::process_requests() drives it (pipelined requests one after
// another until "need more" or an error, unconsumed bytes offered again with
// the next read), whole and cut in two, under the server's default limits and
// under small ones. Gzip bodies of completed requests are
// inflated under a limit, as handle_request() does.
//
// Invariants:
// - The direct reader (request_reader::read_direct) changes nothing: with
//   Beast reading every request, the outcome is the same.
// - The header limit holds however the header arrives: the parser never
//   accepts more header bytes than the limit.
// - How the bytes are cut does not change the requests, nor whether the
//   stream ends in an error, a partial request or neither (see consistent()
//   for what Beast may do differently).
// - Under smaller limits the requests are a prefix of those under the
//   defaults, and all of them if no error stopped the parse.
// - No body is larger than the body limit; the gunzip invariants of
//   fuzz_support.hpp hold for gzip bodies.
#include "fuzz_support.hpp"

#include "http/gzip.hpp"
#include "http/request_reader.hpp"

#include <boost/asio/buffer.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace bhttp = boost::beast::http;
using rapidrpc::http::request;
using rapidrpc::http::request_parser;

struct limits {
  std::size_t header = 0;
  std::size_t body = 0;
};

// rapidrpc::limits defaults, and limits small enough for most inputs to reach.
constexpr limits server_limits{16 * 1024, 16 * 1024 * 1024};
constexpr limits small_limits{128, 64};

// What the server acts on in one completed request.
struct completed {
  request req;
  bool keep_alive = false;
};

bool operator==(const completed& a, const completed& b) {
  return a.req.method == b.req.method && a.req.target == b.req.target &&
         a.req.version == b.req.version && a.req.accepts_gzip == b.req.accepts_gzip &&
         a.req.gzip_body == b.req.gzip_body &&
         a.req.unsupported_encoding == b.req.unsupported_encoding &&
         a.req.expect_continue == b.req.expect_continue && a.req.bad_expect == b.req.bad_expect &&
         a.req.accepts_html == b.req.accepts_html && a.req.content_type == b.req.content_type &&
         a.req.authorization == b.req.authorization &&
         a.req.repeated_authorization == b.req.repeated_authorization && a.req.body == b.req.body &&
         a.keep_alive == b.keep_alive;
}

struct outcome {
  std::vector<completed> requests;
  int error = 0;         // a framing error: the status the server answers
  bool pending = false;  // the input ended inside a request
  bool stopped() const { return error != 0; }
};

// Feeds `wire` in reads cut at `cuts` (ascending) to the server's own
// request_reader, the way the connection does: each read is appended to the
// input, the reader consumes what it can, and the rest waits for the next.
outcome feed(std::string_view wire, const std::vector<std::size_t>& cuts, limits lim,
             bool direct = true) {
  outcome out;
  rapidrpc::http::request_reader reader(lim.header, lim.body);
  reader.set_direct(direct);
  std::string in;
  std::size_t pos = 0;
  std::size_t consumed = 0;       // bytes of `wire` the reader has taken
  std::size_t request_start = 0;  // where the current request began in `wire`
  auto reads = cuts;
  reads.push_back(wire.size());
  for (std::size_t cut : reads) {
    in.append(wire.substr(pos, cut - pos));
    pos = cut;
    for (;;) {
      std::size_t used = 0;
      auto r = reader.parse(in, used);
      FUZZ_CHECK(used <= in.size());
      in.erase(0, used);
      consumed += used;
      if (r == rapidrpc::http::request_reader::result::error) {
        out.error = reader.error_status();
        return out;  // the server closes the connection
      }
      if (r == rapidrpc::http::request_reader::result::need_more) {
        (void)reader.take_continue();
        (void)reader.body_remaining();
        break;
      }
      // The header limit holds however the header arrived.
      std::size_t header_end = wire.find("\r\n\r\n", request_start);
      FUZZ_CHECK(header_end != std::string_view::npos);
      FUZZ_CHECK(header_end + 4 - request_start <= lim.header);
      out.requests.push_back({reader.current(), reader.keep_alive()});
      reader.next();
      request_start = consumed;
    }
  }
  out.pending = reader.in_request() || !in.empty();
  return out;
}

// `a` ended no later than `b` and agrees with it until then.
bool is_prefix(const outcome& a, const outcome& b) {
  if (a.requests.size() > b.requests.size()) return false;
  for (std::size_t i = 0; i < a.requests.size(); ++i)
    if (!(a.requests[i] == b.requests[i])) return false;
  return true;
}

bool same(const outcome& a, const outcome& b) {
  return a.requests == b.requests && a.error == b.error && a.pending == b.pending;
}

// Whether the same stream cut differently was parsed alike. Where the input
// is malformed, Beast may report it differently depending on the cut, and
// the connection ends in an error either way (or when more input comes):
// - Once it has answered need_more inside a header, it looks for the end of
//   the header (within the limit) before it parses any further. So a bad
//   field that one feed reports at once (400), the other may still wait on,
//   or report as a header too large (431).
// - It charges a chunk's size to the body limit before it parses the chunk
//   extension; an unterminated quoted string there makes it answer need_more
//   and, with more input, parse the chunk header again, charging the size
//   twice (413 where the whole input gives 400).
// So the error itself is not compared, only that there is one.
bool consistent(const outcome& a, const outcome& b) {
  if (a.pending != b.pending) {
    const outcome& waiting = a.pending ? a : b;
    const outcome& ended = a.pending ? b : a;
    return ended.error && is_prefix(waiting, ended);
  }
  return a.requests == b.requests && bool(a.error) == bool(b.error);
}

outcome check(std::string_view wire, std::size_t cut, limits lim) {
  outcome whole = feed(wire, {}, lim);
  outcome split = feed(wire, {cut}, lim);
  FUZZ_CHECK(consistent(whole, split));
  // The direct reader takes only requests Beast reads, and reads them the
  // same way: with Beast alone, the outcome is the same to the error status.
  FUZZ_CHECK(same(whole, feed(wire, {}, lim, false)));
  FUZZ_CHECK(same(split, feed(wire, {cut}, lim, false)));
  for (const completed& c : whole.requests) FUZZ_CHECK(c.req.body.size() <= lim.body);
  for (const completed& c : split.requests) FUZZ_CHECK(c.req.body.size() <= lim.body);
  return split;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t cut = data[0] * wire.size() / 255;

  const outcome big = check(wire, cut, server_limits);
  const outcome small = check(wire, cut, small_limits);
  FUZZ_CHECK(is_prefix(small, big));
  if (!small.stopped()) FUZZ_CHECK(same(small, big));  // no limit was reached

  std::string inflated;
  for (const completed& c : big.requests) {
    if (!c.req.gzip_body) continue;
    rapidrpc::fuzz::check_gunzip(c.req.body, inflated, 64 * 1024);
    rapidrpc::fuzz::check_gunzip(c.req.body, inflated, 100);
  }
  return 0;
}

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
// Then the same stream, cut the same way, goes to the server's own
// connection (src/server/connection.cpp) on one end of a Unix socketpair,
// on a loop driven from here: the first part, then the second, then the end
// of the stream.
//
// Invariants:
// - The connection closes once the stream has ended, having written only
//   whole HTTP responses: one for each request it read, in order, and one
//   for a framing error. It stops early only after a response that says it
//   closes.
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
#include "http/response_reader.hpp"
#include "server/connection.hpp"
#include "server/loop.hpp"

#include <rapidrpc/registry.hpp>

#include <boost/asio/buffer.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
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
  int error = 0;               // a framing error: the status the server answers
  bool error_to_head = false;  // the request in error is a HEAD (its answer has no body)
  bool pending = false;        // the input ended inside a request
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
        out.error_to_head = reader.current().method == bhttp::verb::head;
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

// The server's connection on one end of a socketpair, this end the client's.
class served_connection {
 public:
  served_connection() {
    methods_.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
    shared_.methods = &methods_;
    shared_.paths = {"/RPC2", "/"};
  }

  // Sends `wire` cut at `cut`, then ends the stream; returns what came back.
  std::string exchange(std::string_view wire, std::size_t cut) {
    int pair[2];
    FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair) == 0);
    client_ = pair[1];
    out_.clear();
    rapidrpc::detail::loop& l = loop_;
    rapidrpc::detail::loop_socket s(l.io(), boost::asio::ip::tcp::v4(), pair[0]);
    std::make_shared<rapidrpc::detail::connection>(l, std::move(s),
                                                   boost::asio::ip::tcp::endpoint{})
        ->start();
    send(wire.substr(0, cut));
    send(wire.substr(cut));
    ::shutdown(client_, SHUT_WR);
    // Nothing is left to wait for: what the connection does next is ready now.
    for (int i = 0; i < 1000 && shared_.connections.load() != 0; ++i) pump();
    FUZZ_CHECK(shared_.connections.load() == 0);
    pump();
    ::close(client_);
    return out_;
  }

 private:
  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(client_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EPIPE) return;  // the connection has closed
      FUZZ_CHECK(n > 0 || errno == EAGAIN);
      if (n > 0) bytes.remove_prefix(static_cast<std::size_t>(n));
      pump();
    }
  }

  void pump() {
    loop_.io().poll();
    loop_.io().restart();
    char chunk[16384];
    for (ssize_t n; (n = ::read(client_, chunk, sizeof chunk)) > 0;) out_.append(chunk, n);
  }

  rapidrpc::registry methods_;
  rapidrpc::detail::serving_state shared_;
  rapidrpc::detail::loop loop_{shared_, 0};
  int client_ = -1;
  std::string out_;
};

// What the connection answered `wire` (as the request reader reads it,
// `expected`) is whole responses, one per request and one for an error.
void check_connection(std::string_view wire, std::size_t cut, const outcome& expected) {
  static served_connection served;
  const std::string out = served.exchange(wire, cut);
  rapidrpc::http::response_reader reader;
  std::string_view rest = out;
  std::size_t answered = 0;
  bool closed = false;
  constexpr std::string_view interim = "HTTP/1.1 100 Continue\r\n\r\n";
  for (;;) {
    // A 100 Continue may come before a request's response, or alone
    // before a request that never ends.
    while (rest.starts_with(interim)) rest.remove_prefix(interim.size());
    if (rest.empty()) break;
    FUZZ_CHECK(!closed);  // nothing after a response that closes
    const bool to_head = answered < expected.requests.size()
                             ? expected.requests[answered].req.method == bhttp::verb::head
                             : expected.error_to_head;
    reader.start(to_head);
    std::size_t used = 0;
    const auto r = reader.parse(rest, used);
    if (r != rapidrpc::http::response_reader::result::complete)
      std::fprintf(stderr, "the connection wrote:\n%s\n", out.c_str());
    FUZZ_CHECK(r == rapidrpc::http::response_reader::result::complete);
    rest.remove_prefix(used);
    closed = !reader.current().keep_alive;
    ++answered;
  }
  const std::size_t owed = expected.requests.size() + (expected.error != 0 ? 1 : 0);
  FUZZ_CHECK(answered <= owed);
  if (answered < owed) FUZZ_CHECK(closed);  // stopped early, and said so
  if (answered == owed && expected.error != 0)
    FUZZ_CHECK(reader.current().status == expected.error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t cut = data[0] * wire.size() / 255;

  const outcome big = check(wire, cut, server_limits);
  check_connection(wire, cut, big);
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

// The server's HTTP framing on its own: keep-alive POST /RPC2 requests as
// Python's xmlrpc.client sends them (request line, five header fields,
// the methodCall), each read by the connection's request_reader out of one
// buffer holding the whole request, as after a read that got it all.
// Bytes/s counts the request, head and body.
#include "http/request_reader.hpp"
#include "inputs.hpp"
#include "report.hpp"

#include <rapidrpc/limits.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <string_view>

namespace bench::micro {
namespace {

using rapidrpc::http::request_reader;

std::string post(const std::string& body) {
  return "POST /RPC2 HTTP/1.1\r\n"
         "Host: 127.0.0.1:8080\r\n"
         "Accept-Encoding: gzip\r\n"
         "Content-Type: text/xml\r\n"
         "User-Agent: Python-xmlrpc/3.11\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Reads the one request in `wire` as the connection does (offering what
// is left until the reader has a request); false if it does not come out
// whole.
bool read_one(request_reader& reader, std::string_view wire) {
  reader.next();
  for (;;) {
    std::size_t used = 0;
    const auto r = reader.parse(wire, used);
    wire.remove_prefix(used);
    if (r == request_reader::result::complete) return wire.empty();
    if (r == request_reader::result::error || used == 0) return false;
  }
}

void http_read_request(benchmark::State& state, input in) {
  const call& c = call_of(in);
  const std::string wire = post(c.xml_call);
  const rapidrpc::limits lim;
  request_reader reader(lim.max_header_bytes, lim.max_body_bytes, lim.max_request_line_bytes,
                        lim.max_header_fields);
  if (!read_one(reader, wire) || reader.current().target != "/RPC2" ||
      reader.current().body != c.xml_call || !reader.keep_alive() ||
      !reader.current().accepts_gzip) {
    state.SkipWithError("the request does not read back as the one written");
    return;
  }
  const std::size_t before = allocation_count();
  for (auto _ : state) {
    if (!read_one(reader, wire)) {
      state.SkipWithError("the request does not come out whole");
      break;
    }
    benchmark::DoNotOptimize(reader.current().body.data());
  }
  report(state, before, wire.size(), c.items);
}

}  // namespace

BENCHMARK_CAPTURE(http_read_request, small, input::small);
BENCHMARK_CAPTURE(http_read_request, array, input::array)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(http_read_request, base64, input::base64)->Unit(benchmark::kMillisecond);

}  // namespace bench::micro

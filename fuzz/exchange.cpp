// Fuzz target: the server's RPC exchange (src/rpc/exchange.hpp), the code
// every transport hands a request body to.
//
// Input: one byte that picks the protocol ('j': JSON-RPC, anything else:
// XML-RPC), then the request document.
//
// The document runs through one exchange, reused from input to input as a
// connection reuses its own, on a registry of inline, pool and async
// methods plus the built-in system.* ones (multicall included); an
// io_context stands in for the loop, and pool methods run on it.
//
// Invariants:
// - Every request gets exactly one reply, of its protocol's content type.
// - XML-RPC: the body is a methodResponse; a fault's code is the reply's
//   fault code, a result comes with none.
// - JSON-RPC: an empty body (notifications), a response object whose error
//   code is the reply's fault code, or (a batch) a JSON array of response
//   objects, each with an id and either a result or an error. The array is
//   read by Boost.JSON, not by rapidrpc's value reader: ids are answered as
//   they were written, and an integer id past 64 bits is valid JSON-RPC
//   that rapidrpc's values cannot hold.
// - The same request run again gets the same reply (no state left behind).
#include "fuzz_support.hpp"

#include "rpc/exchange.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

namespace rpc = rapidrpc::detail::rpc;
using rapidrpc::value;

struct heard final : rpc::reply_sink {
  void on_reply(const rpc::reply& r) override {
    ++count;
    body.assign(r.body);
    content_type = r.content_type;
    fault = r.fault;
  }
  int count = 0;
  std::string body;
  std::string_view content_type;
  std::int32_t fault = 0;
};

rapidrpc::registry& methods() {
  static rapidrpc::registry reg = [] {
    rapidrpc::registry r;
    r.add("echo", [](value v) { return v; });
    r.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
    r.set_param_names("add", {"a", "b"});
    r.add("fail", [](std::int32_t code) -> value { throw rapidrpc::fault(code, "asked to fail"); });
    r.add(
        "pool.echo", [](value v) { return v; }, "", rapidrpc::execution::pool);
    r.add_async<value>("later", [](rapidrpc::responder reply, value v) {
      auto loop = reply.loop();
      boost::asio::post(loop, [reply = std::move(reply), v = std::move(v)] { reply.reply(v); });
    });
    r.set_multicall_limit(16);
    return r;
  }();
  return reg;
}

heard run(rpc::exchange& ex, boost::asio::io_context& io, rpc::protocol p, std::string_view doc) {
  auto sink = std::make_shared<heard>();
  ex.start(p, doc, {io.get_executor(), nullptr, nullptr}, sink);  // pool methods on the loop
  io.restart();
  io.run();
  FUZZ_CHECK(sink->count == 1);
  return *sink;
}

void check_xml(const heard& h) {
  FUZZ_CHECK(h.content_type == rpc::xml_content_type);
  auto parsed = rapidrpc::xmlrpc::parse_response(h.body);
  const auto* response = std::get_if<rapidrpc::outcome>(&parsed);
  FUZZ_CHECK(response != nullptr);
  if (const auto* f = std::get_if<rapidrpc::fault>(response))
    FUZZ_CHECK(f->code() == h.fault);
  else
    FUZZ_CHECK(h.fault == 0);
}

void check_json(const heard& h) {
  FUZZ_CHECK(h.content_type == rpc::json_content_type);
  if (h.body.empty()) return;  // notifications (a failed one's fault is still given, for the log)
  if (h.body.front() == '[') {
    boost::system::error_code ec;
    const auto batch = boost::json::parse(h.body, ec);
    FUZZ_CHECK(!ec && batch.is_array());
    for (const auto& entry : batch.get_array()) {
      FUZZ_CHECK(entry.is_object());
      const auto& o = entry.get_object();
      FUZZ_CHECK(o.contains("id"));
      FUZZ_CHECK(o.contains("result") != o.contains("error"));
    }
    return;
  }
  auto parsed = rapidrpc::jsonrpc::parse_response(h.body);
  const auto* r = std::get_if<rapidrpc::jsonrpc::response>(&parsed);
  FUZZ_CHECK(r != nullptr);
  if (const auto* f = std::get_if<rapidrpc::fault>(&r->outcome))
    FUZZ_CHECK(f->code() == h.fault);
  else
    FUZZ_CHECK(h.fault == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static boost::asio::io_context io;
  static rpc::exchange ex(methods(), {});
  const auto p = data[0] == 'j' ? rpc::protocol::jsonrpc : rpc::protocol::xmlrpc;
  const std::string_view doc(reinterpret_cast<const char*>(data) + 1, size - 1);

  heard first = run(ex, io, p, doc);
  if (p == rpc::protocol::xmlrpc)
    check_xml(first);
  else
    check_json(first);
  heard again = run(ex, io, p, doc);
  FUZZ_CHECK(again.body == first.body && again.fault == first.fault);
  return 0;
}

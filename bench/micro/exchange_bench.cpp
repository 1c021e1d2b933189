// One whole RPC exchange, as every transport runs it: the request document
// in, decoded, dispatched through rapidrpcd's registry (the demo methods;
// sample.add and echo run inline, so the reply comes before start()
// returns) and the response document out. No socket, no HTTP, no metrics.
// Bytes/s counts the request and the response.
#include "inputs.hpp"
#include "report.hpp"
#include "rpc/exchange.hpp"

#include <rapidrpc/demo.hpp>
#include <rapidrpc/limits.hpp>
#include <rapidrpc/registry.hpp>

#include <benchmark/benchmark.h>
#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace bench::micro {
namespace {

using namespace rapidrpc;
using detail::rpc::protocol;

// Counts the replies and keeps the last one (its views last until the
// exchange's next request).
class last_reply final : public detail::rpc::reply_sink {
 public:
  void on_reply(const detail::rpc::reply& r) override {
    ++count;
    last = r;
  }
  std::int64_t count = 0;
  detail::rpc::reply last;
};

void exchange(benchmark::State& state, protocol p, input in) {
  const call& c = call_of(in);
  const bool xml = p == protocol::xmlrpc;
  const std::string& request = xml ? c.xml_call : c.json_request;
  const std::string& response = xml ? c.xml_response : c.json_response;

  registry methods;
  demo::add_methods(methods);
  boost::asio::io_context loop;
  const call_context ctx{loop.get_executor()};
  detail::rpc::exchange ex(methods, limits{});
  auto sink = std::make_shared<last_reply>();

  ex.start(p, request, ctx, sink);
  if (sink->count != 1 || sink->last.fault != 0 || sink->last.body != response) {
    state.SkipWithError("the reply is not the response document written for the call");
    return;
  }
  const std::size_t before = allocation_count();
  for (auto _ : state) ex.start(p, request, ctx, sink);
  if (sink->count != state.iterations() + 1) {
    state.SkipWithError("a request was not answered before start() returned");
    return;
  }
  report(state, before, request.size() + response.size(), c.items);
}

}  // namespace

BENCHMARK_CAPTURE(exchange, xmlrpc_small, protocol::xmlrpc, input::small);
BENCHMARK_CAPTURE(exchange, xmlrpc_array, protocol::xmlrpc, input::array)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(exchange, xmlrpc_base64, protocol::xmlrpc, input::base64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(exchange, jsonrpc_small, protocol::jsonrpc, input::small);
BENCHMARK_CAPTURE(exchange, jsonrpc_array, protocol::jsonrpc, input::array)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(exchange, jsonrpc_base64, protocol::jsonrpc, input::base64)
    ->Unit(benchmark::kMillisecond);

}  // namespace bench::micro

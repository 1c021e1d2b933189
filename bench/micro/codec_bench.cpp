// The codecs on their own, as a server uses them: the request document
// parsed (XML-RPC by the connection's reusable parser, JSON-RPC by
// parse_request) and the response written into a reused buffer. Bytes/s
// counts the document read or written.
#include "inputs.hpp"
#include "jsonrpc/reader.hpp"
#include "report.hpp"

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <variant>

namespace bench::micro {
namespace {

using namespace rapidrpc;

// Whether `document` is a methodResponse or a JSON-RPC response carrying
// `expected` (id 1 for JSON-RPC).
bool xml_response_carries(const std::string& document, const value& expected) {
  auto parsed = xmlrpc::parse_response(document);
  const auto* o = std::get_if<outcome>(&parsed);
  const auto* v = o != nullptr ? std::get_if<value>(o) : nullptr;
  return v != nullptr && *v == expected;
}
bool json_response_carries(const std::string& text, const value& expected) {
  auto parsed = jsonrpc::parse_response(text);
  const auto* r = std::get_if<jsonrpc::response>(&parsed);
  const auto* v = r != nullptr ? std::get_if<value>(&r->outcome) : nullptr;
  return v != nullptr && r->id == json_id && *v == expected;
}

// `fed`: the document fed to expat (feed() and finish()) rather than read
// whole by parse(), as the server does.
void parse_call(benchmark::State& state, input in, bool fed) {
  const call& c = call_of(in);
  xmlrpc::parser p(xmlrpc::document_type::call);
  auto parse = [&] {
    p.reset();
    return fed ? p.feed(c.xml_call) && p.finish() : p.parse(c.xml_call);
  };
  if (!parse() || p.call().method != c.method || p.call().params != c.params) {
    state.SkipWithError("the methodCall does not read back as the call written");
    return;
  }
  if (p.read_directly() == fed) {
    state.SkipWithError(fed ? "expat was not used" : "the direct scanner gave up");
    return;
  }
  const std::size_t before = allocation_count();
  for (auto _ : state) {
    if (!parse()) {
      state.SkipWithError("the methodCall does not parse");
      break;
    }
    benchmark::DoNotOptimize(p.call().params.data());
  }
  report(state, before, c.xml_call.size(), c.items);
}
void xmlrpc_parse_call(benchmark::State& state, input in) { parse_call(state, in, false); }
void xmlrpc_parse_call_expat(benchmark::State& state, input in) { parse_call(state, in, true); }

void xmlrpc_write_response(benchmark::State& state, input in) {
  const call& c = call_of(in);
  std::string out;
  xmlrpc::write_response(out, c.result);
  if (!xml_response_carries(out, c.result)) {
    state.SkipWithError("the methodResponse does not read back as the result written");
    return;
  }
  const std::size_t before = allocation_count();
  for (auto _ : state) {
    out.clear();
    xmlrpc::write_response(out, c.result);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, before, out.size(), c.items);
}

// `how`: the direct reader first (as the server reads), or basic_parser alone.
void parse_request(benchmark::State& state, input in, jsonrpc::detail::reader how) {
  const call& c = call_of(in);
  auto parsed = jsonrpc::detail::parse_request(c.json_request, {}, how);
  const auto* m = std::get_if<jsonrpc::message>(&parsed);
  const auto* r = m != nullptr && m->entries.size() == 1
                      ? std::get_if<jsonrpc::request>(&m->entries.front())
                      : nullptr;
  if (r == nullptr || r->method != c.method || r->params != c.params || r->id != json_id) {
    state.SkipWithError("the request does not read back as the call written");
    return;
  }
  if (!jsonrpc::detail::reads_directly(c.json_request)) {
    state.SkipWithError("the direct reader gave up");
    return;
  }
  const std::size_t before = allocation_count();
  for (auto _ : state) {
    auto result = jsonrpc::detail::parse_request(c.json_request, {}, how);
    if (!std::holds_alternative<jsonrpc::message>(result)) {
      state.SkipWithError("the request does not parse");
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  report(state, before, c.json_request.size(), c.items);
}
void jsonrpc_parse_request(benchmark::State& state, input in) {
  parse_request(state, in, jsonrpc::detail::reader::direct_first);
}
void jsonrpc_parse_request_boost(benchmark::State& state, input in) {
  parse_request(state, in, jsonrpc::detail::reader::boost_only);
}

void jsonrpc_write_result(benchmark::State& state, input in) {
  const call& c = call_of(in);
  std::string out;
  jsonrpc::write_result(out, json_id, c.result);
  if (!json_response_carries(out, c.result)) {
    state.SkipWithError("the response does not read back as the result written");
    return;
  }
  const std::size_t before = allocation_count();
  for (auto _ : state) {
    out.clear();
    jsonrpc::write_result(out, json_id, c.result);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, before, out.size(), c.items);
}

}  // namespace

BENCHMARK_CAPTURE(xmlrpc_parse_call, small, input::small);
BENCHMARK_CAPTURE(xmlrpc_parse_call, array, input::array)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_parse_call, base64, input::base64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_parse_call, structs, input::structs)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_parse_call_expat, small, input::small);
BENCHMARK_CAPTURE(xmlrpc_parse_call_expat, array, input::array)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_parse_call_expat, base64, input::base64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_parse_call_expat, structs, input::structs)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_write_response, small, input::small);
BENCHMARK_CAPTURE(xmlrpc_write_response, array, input::array)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_write_response, base64, input::base64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(xmlrpc_write_response, structs, input::structs)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_parse_request, small, input::small);
BENCHMARK_CAPTURE(jsonrpc_parse_request, array, input::array)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_parse_request, base64, input::base64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_parse_request, structs, input::structs)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_parse_request_boost, small, input::small);
BENCHMARK_CAPTURE(jsonrpc_parse_request_boost, array, input::array)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_parse_request_boost, base64, input::base64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_write_result, small, input::small);
BENCHMARK_CAPTURE(jsonrpc_write_result, array, input::array)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_write_result, base64, input::base64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(jsonrpc_write_result, structs, input::structs)->Unit(benchmark::kMillisecond);

}  // namespace bench::micro

// Struct-heavy documents through the codecs, and rapidrpc::structure on its
// own: ns per operation and heap allocations per operation (counted by
// bench/common/count_new.cpp).
//
// Built with -DRAPIDRPC_BUILD_BENCH=ON (target struct_bench). To compare two
// versions of the value model, build this same file against both trees
// (it uses only the public codec and structure interface, which a
// std::map-based structure also has) and run the two binaries one after
// the other, reading CPU time:
//
//   build/bench/structs/struct_bench --benchmark_repetitions=3 \
//       --benchmark_report_aggregates_only=true
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/value.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include "count_new.hpp"

#include <benchmark/benchmark.h>

#include <string>
#include <variant>
#include <vector>

namespace {

using namespace rapidrpc;

// A record as APIs send them: eight members, not in name order.
value record(int i) {
  structure r;
  r.emplace("id", i);
  r.emplace("name", "user" + std::to_string(i));
  r.emplace("email", "user" + std::to_string(i) + "@example.org");
  r.emplace("active", i % 2 == 0);
  r.emplace("score", 0.5 * i);
  r.emplace("created", date_time{2024, 1, 31, 12, 30, 0});
  r.emplace("tags", array{"a", "b"});
  r.emplace("owner", structure{{"uid", i}, {"gid", 100}});
  return r;
}

enum class input { small, records, wide };

// small: one struct of four members (a typical call's argument);
// records: an array of 100 records; wide: one struct of 1000 members.
value param_of(input in) {
  switch (in) {
    case input::small:
      return structure{{"user", "alice"}, {"limit", 10}, {"offset", 0}, {"filter", "active"}};
    case input::records: {
      array a;
      for (int i = 0; i < 100; ++i) a.push_back(record(i));
      return a;
    }
    case input::wide: {
      structure s;
      for (int i = 0; i < 1000; ++i) s.emplace("field" + std::to_string((i * 7919) % 1000), i);
      return s;
    }
  }
  return {};
}

// JSON cannot carry the records' date: the JSON inputs use its text instead.
value json_safe(value v) {
  if (auto* a = v.get_if<array>()) {
    for (auto& e : *a) e = json_safe(std::move(e));
  } else if (auto* s = v.get_if<structure>()) {
    for (auto& [name, m] : *s) m = json_safe(std::move(m));
  } else if (v.is<date_time>()) {
    return value("2024-01-31T12:30:00");
  }
  return v;
}

void count_allocations(benchmark::State& state, std::size_t before) {
  const std::size_t after = bench::allocation_count();
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(after - before), benchmark::Counter::kAvgIterations);
}

// echo over XML-RPC: the connection's reusable parser reads the call, the
// writer answers with its parameter.
void xmlrpc_echo(benchmark::State& state, input in) {
  std::string doc;
  xmlrpc::write_call(doc, "echo", array{param_of(in)});
  xmlrpc::parser p(xmlrpc::document_type::call);
  std::string out;
  const std::size_t before = bench::allocation_count();
  for (auto _ : state) {
    p.reset();
    if (!p.feed(doc) || !p.finish()) {
      state.SkipWithError("the call does not parse");
      return;
    }
    out.clear();
    xmlrpc::write_response(out, p.call().params.at(0));
    benchmark::DoNotOptimize(out.data());
  }
  count_allocations(state, before);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * doc.size()));
}

// echo over JSON-RPC: parse the request text, write the result.
void jsonrpc_echo(benchmark::State& state, input in) {
  std::string text;
  jsonrpc::write_request(text, "echo", array{json_safe(param_of(in))}, "1");
  std::string out;
  const std::size_t before = bench::allocation_count();
  for (auto _ : state) {
    auto m = jsonrpc::parse_request(text);
    auto* msg = std::get_if<jsonrpc::message>(&m);
    auto* r = msg ? std::get_if<jsonrpc::request>(&msg->entries.at(0)) : nullptr;
    if (r == nullptr) {
      state.SkipWithError("the request does not parse");
      return;
    }
    out.clear();
    jsonrpc::write_result(out, r->id, r->params.at(0));
    benchmark::DoNotOptimize(out.data());
  }
  count_allocations(state, before);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

// Copying a parsed value (a pool method's parameters are moved, but a
// handler keeping a struct copies it).
void copy_value(benchmark::State& state, input in) {
  const value v = param_of(in);
  const std::size_t before = bench::allocation_count();
  for (auto _ : state) {
    value copy = v;
    benchmark::DoNotOptimize(copy);
  }
  count_allocations(state, before);
}

// Building a struct of n members by name (the names exist already, as the
// parser's text buffer does), then finding each member once.
void build_and_find(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back("member_" + std::to_string((i * 7919) % n));
  const std::size_t before = bench::allocation_count();
  for (auto _ : state) {
    structure s;
    for (const auto& name : names) s.try_emplace(name, 1);
    std::size_t found = 0;
    for (const auto& name : names) found += s.find(name) != s.end();
    benchmark::DoNotOptimize(found);
  }
  count_allocations(state, before);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

// Finding each member of an existing struct of n members (ns per lookup).
void find_only(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::string> names;
  structure s;
  for (std::size_t i = 0; i < n; ++i) {
    names.push_back("member_" + std::to_string((i * 7919) % n));
    s.try_emplace(names.back(), 1);
  }
  for (auto _ : state) {
    std::size_t found = 0;
    for (const auto& name : names) found += s.find(name) != s.end();
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

}  // namespace

BENCHMARK_CAPTURE(xmlrpc_echo, small, input::small);
BENCHMARK_CAPTURE(xmlrpc_echo, records, input::records);
BENCHMARK_CAPTURE(xmlrpc_echo, wide, input::wide);
BENCHMARK_CAPTURE(jsonrpc_echo, small, input::small);
BENCHMARK_CAPTURE(jsonrpc_echo, records, input::records);
BENCHMARK_CAPTURE(jsonrpc_echo, wide, input::wide);
BENCHMARK_CAPTURE(copy_value, records, input::records);
BENCHMARK_CAPTURE(copy_value, wide, input::wide);
BENCHMARK(build_and_find)->Arg(4)->Arg(8)->Arg(15)->Arg(16)->Arg(32)->Arg(1000)->Arg(100000);
BENCHMARK(find_only)->Arg(4)->Arg(8)->Arg(12)->Arg(15)->Arg(16)->Arg(24)->Arg(32)->Arg(1000);

BENCHMARK_MAIN();

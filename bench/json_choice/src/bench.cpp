// Times each reader on the three requests: ns per parse (the value is built
// and destroyed inside the timed loop, as a server would) and heap
// allocations per parse (counted by bench/common/count_new.cpp).
#include "count_new.hpp"
#include "inputs.hpp"
#include "readers.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

namespace {

using namespace json_choice;

enum class input { small, array1000, batch10 };

std::string text_of(input in) {
  switch (in) {
    case input::small:
      return small_request();
    case input::array1000:
      return array_request();
    case input::batch10:
      return batch_request();
  }
  return {};
}

// The body as a server holding it in a std::string with room for simdjson's
// padding would have it.
std::string padded_body(const std::string& text) {
  std::string body;
  body.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  body = text;
  return body;
}

template <class Parse>
void run(benchmark::State& state, input in, Parse parse) {
  const std::string text = text_of(in);
  // Every reader must agree with the baseline before it is timed.
  if (!(parse(text) == parse_baseline(text))) {
    state.SkipWithError("result differs from the baseline");
    return;
  }
  std::size_t before = bench::allocation_count();
  for (auto _ : state) {
    rapidrpc::value v = parse(text);
    benchmark::DoNotOptimize(v);
  }
  std::size_t after = bench::allocation_count();
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(after - before), benchmark::Counter::kAvgIterations);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void baseline(benchmark::State& s, input in) {
  run(s, in, [](const std::string& t) { return parse_baseline(t); });
}

void simdjson_in_place(benchmark::State& s, input in) {
  simdjson_reader r;
  std::string body = padded_body(text_of(in));
  // parse_in_place reads `body` (with spare capacity), not the argument.
  run(s, in, [&](const std::string&) { return r.parse_in_place(body); });
}

void simdjson_copy(benchmark::State& s, input in) {
  simdjson_reader r;
  run(s, in, [&](const std::string& t) { return r.parse_copy(t); });
}

void simdjson_padded_string(benchmark::State& s, input in) {
  simdjson_reader r;
  run(s, in, [&](const std::string& t) { return r.parse_padded_string(t); });
}

void rapidjson_sax(benchmark::State& s, input in) {
  rapidjson_reader r;
  run(s, in, [&](const std::string& t) { return r.parse(t); });
}

void rapidjson_sax_native_numbers(benchmark::State& s, input in) {
  rapidjson_reader r;
  run(s, in, [&](const std::string& t) { return r.parse_native_numbers(t); });
}

void boost_json_sax(benchmark::State& s, input in) {
  boost_json_reader r;
  run(s, in, [&](const std::string& t) { return r.parse(t); });
}

void boost_json_sax_1460_byte_pieces(benchmark::State& s, input in) {
  boost_json_reader r;
  run(s, in, [&](const std::string& t) { return r.parse_in_pieces(t, 1460); });
}

#define JSON_CHOICE_INPUTS(fn)                        \
  BENCHMARK_CAPTURE(fn, small, input::small);         \
  BENCHMARK_CAPTURE(fn, array1000, input::array1000); \
  BENCHMARK_CAPTURE(fn, batch10, input::batch10)

JSON_CHOICE_INPUTS(baseline);
JSON_CHOICE_INPUTS(simdjson_in_place);
JSON_CHOICE_INPUTS(simdjson_copy);
JSON_CHOICE_INPUTS(simdjson_padded_string);
JSON_CHOICE_INPUTS(rapidjson_sax);
JSON_CHOICE_INPUTS(rapidjson_sax_native_numbers);
JSON_CHOICE_INPUTS(boost_json_sax);
JSON_CHOICE_INPUTS(boost_json_sax_1460_byte_pieces);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("simdjson_active", simdjson_reader::active_implementation());
  benchmark::AddCustomContext("simdjson_builtin", simdjson_reader::builtin_implementation());
  benchmark::AddCustomContext("sizes", std::to_string(small_request().size()) + "/" +
                                           std::to_string(array_request().size()) + "/" +
                                           std::to_string(batch_request().size()) + " bytes");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}

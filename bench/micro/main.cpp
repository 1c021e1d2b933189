// Google Benchmark's main, except for the exit status: 1 when a benchmark
// stopped with an error (SkipWithError: its check of the result failed),
// which Google Benchmark 1.7 only prints. The quick run in ctest relies on
// it. And the heap is set up as rapidrpcd sets it up.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <vector>

namespace {

// Hands everything to the display reporter the flags chose, noting errors.
class error_noting_reporter final : public benchmark::BenchmarkReporter {
 public:
  explicit error_noting_reporter(benchmark::BenchmarkReporter& display) : display_(display) {}

  bool ReportContext(const Context& context) override { return display_.ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) failed_ = failed_ || run.error_occurred;
    display_.ReportRuns(runs);
  }
  void Finalize() override { display_.Finalize(); }

  bool failed() const noexcept { return failed_; }

 private:
  benchmark::BenchmarkReporter& display_;
  bool failed_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  // rapidrpcd's thresholds (tools/rapidrpcd/main.cpp). With glibc's own,
  // which move with the largest block freed, whether the heap's top is
  // given back between two iterations (and faulted in again, page by page)
  // depended on which benchmarks ran before: xmlrpc_parse_call/structs took
  // 4.2 ms run alone and 1.05 ms after the array's.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_ARENA_MAX, 1);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  error_noting_reporter reporter(*benchmark::CreateDefaultDisplayReporter());
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return ran > 0 && !reporter.failed() ? 0 : 1;
}

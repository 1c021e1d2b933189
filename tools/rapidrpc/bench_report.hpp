// The outputs of `rapidrpc bench`: a summary for people, JSON for machines,
// and a self-contained HTML page with charts. No I/O: each returns text.
#pragma once

#include "live_line.hpp"
#include "loadgen.hpp"

#include <cstddef>
#include <string>

namespace rapidrpc::cli {

/// `v` as compact JSON, or, if that is longer than `max_chars` characters,
/// its start and its end with its length: a string as "1234...5678"
/// (4,180 characters), anything else as [1,2, ... ,99] (12,345 characters of
/// JSON). For people (the text summary); the JSON summary keeps it whole.
std::string shortened_json(const value& v, std::size_t max_chars = 72);

/// Successful calls per second.
double throughput(const bench_result& r) noexcept;

/// The human summary (several lines, ending with a newline).
std::string summary_text(const bench_result& r);

/// One JSON object with the settings, the summary and the timeline.
std::string summary_json(const bench_result& r);

/// The live line's text (live_line.hpp), one line, no control characters:
/// "3 s of 10 s: 41234 calls, 13745 calls/s (last second), 0 errors, p99 1.20 ms",
/// or, for a counted run, "3 s: 41234 of 100000 calls, ...". p99 is "-"
/// while no call was ok.
std::string progress_text(const progress& p);

/// A self-contained HTML page (inline CSS and SVG, no script, no external
/// URL): settings, summary, latency distribution, latency percentiles,
/// throughput and latency over time. Each chart is an <svg> with a fixed
/// width and height and an id starting with "chart-".
std::string report_html(const bench_result& r);

}  // namespace rapidrpc::cli

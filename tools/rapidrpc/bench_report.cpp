#include "bench_report.hpp"

#include "output.hpp"
#include "text/text.hpp"

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/literals.hpp>
#include <rapidrpc/zmq_client.hpp>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string_view>
#include <thread>

namespace rapidrpc::cli {

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// "850 us", "1.23 ms", "2.50 s" (mu: use "µs" instead of "us").
std::string fmt_ns(double ns, bool mu = false) {
  if (ns < 1e3) return fixed(ns / 1e3, 2) + (mu ? " µs" : " us");
  if (ns < 1e6) return fixed(ns / 1e3, ns < 1e4 ? 1 : 0) + (mu ? " µs" : " us");
  if (ns < 1e9) return fixed(ns / 1e6, ns < 1e7 ? 2 : 1) + " ms";
  return fixed(ns / 1e9, 2) + " s";
}

std::string fmt_count(double v) {
  // 1234567 -> "1,234,567"
  std::string digits = fixed(std::round(v), 0);
  std::string out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n && n % 3 == 0 && *it != '-') out += ',';
    out += *it;
    ++n;
  }
  return {out.rbegin(), out.rend()};
}

// A number in the JSON summary (every figure is finite; null if not).
void append_number(std::string& out, double d) {
  if (!append_double(out, d)) out += "null";
}

// A string in the JSON summary; bytes that are not UTF-8 (a server's text
// cut short in an error message) become U+FFFD.
void write_json_string(std::string& out, std::string_view s) {
  jsonrpc::write_string(out, s, jsonrpc::invalid_utf8::replace);
}

bool starts_code_point(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

std::size_t code_points(std::string_view s) noexcept {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), starts_code_point));
}

// The first (or last) n code points of s.
std::string_view first_code_points(std::string_view s, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i < s.size(); ++i)
    if (starts_code_point(s[i]) && n-- == 0) break;
  return s.substr(0, i);
}

std::string_view last_code_points(std::string_view s, std::size_t n) noexcept {
  std::size_t i = s.size();
  while (i > 0 && n > 0)
    if (starts_code_point(s[--i])) --n;
  return s.substr(i);
}

std::string html_escape(std::string_view s) {
  std::string out;
  rapidrpc::detail::append_html_escaped(out, s);
  return out;
}

struct percentiles {
  std::uint64_t min, p50, p90, p99, p999, max;
  double mean;
};

percentiles latency_of(const bench_result& r) {
  const auto& h = r.latency;
  return {h.min(),           h.quantile(0.50), h.quantile(0.90), h.quantile(0.99),
          h.quantile(0.999), h.max(),          h.mean()};
}

std::string load_description(const bench_options& o) {
  std::string s =
      zmq_endpoint::is_zmq_url(o.url)
          ? std::to_string(o.connections) +
                (o.connections == 1 ? " DEALER socket" : " DEALER sockets") + " (" +
                std::to_string(o.in_flight) + " in flight each), "
          : std::to_string(o.connections) + (o.connections == 1 ? " connection" : " connections") +
                (o.keep_alive ? " (keep-alive)" : " (a new connection per call)") + ", ";
  s += std::to_string(o.threads) + (o.threads == 1 ? " thread, " : " threads, ");
  s += o.rate > 0 ? "open loop at " + fmt_count(o.rate) + " calls/s" : "closed loop";
  s += ", ";
  s += o.requests ? fmt_count(static_cast<double>(o.requests)) + " calls"
                  : fixed(o.duration, 1) + " s";
  s += o.protocol == protocol::jsonrpc ? ", JSON-RPC" : ", XML-RPC";
  return s;
}

std::string error_breakdown(const error_counts& e) {
  return "connect " + std::to_string(e.connect) + ", io " + std::to_string(e.io) + ", timeout " +
         std::to_string(e.timeout) + ", http " + std::to_string(e.http_status) + ", bad response " +
         std::to_string(e.bad_response) + ", fault " + std::to_string(e.fault) + ", mismatch " +
         std::to_string(e.mismatch);
}

// ---- SVG charts -----------------------------------------------------------------

constexpr int chart_w = 960, chart_h = 320;
constexpr int m_left = 78, m_right = 24, m_top = 28, m_bottom = 52;
constexpr int plot_w = chart_w - m_left - m_right, plot_h = chart_h - m_top - m_bottom;

// A "nice" step (1, 2 or 5 times a power of ten) giving about `ticks` ticks up to `max`.
double nice_step(double max, int ticks) {
  if (max <= 0) return 1;
  double raw = max / ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

class svg {
 public:
  svg(std::string_view id, std::string_view title) {
    out_ += "<svg id=\"" + std::string(id) +
            "\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
            std::to_string(chart_w) + "\" height=\"" + std::to_string(chart_h) +
            "\" viewBox=\"0 0 " + std::to_string(chart_w) + " " + std::to_string(chart_h) +
            "\" role=\"img\" aria-label=\"" + html_escape(title) + "\">\n";
    out_ += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(chart_w) + "\" height=\"" +
            std::to_string(chart_h) + "\" fill=\"#ffffff\"/>\n";
    out_ += "<rect x=\"" + std::to_string(m_left) + "\" y=\"" + std::to_string(m_top) +
            "\" width=\"" + std::to_string(plot_w) + "\" height=\"" + std::to_string(plot_h) +
            "\" fill=\"#f8fafc\" stroke=\"#cbd5e1\"/>\n";
  }
  void raw(const std::string& s) { out_ += s; }
  void line(double x1, double y1, double x2, double y2, std::string_view style) {
    out_ += "<line x1=\"" + fixed(x1, 1) + "\" y1=\"" + fixed(y1, 1) + "\" x2=\"" + fixed(x2, 1) +
            "\" y2=\"" + fixed(y2, 1) + "\" " + std::string(style) + "/>\n";
  }
  void text(double x, double y, std::string_view s, std::string_view attrs = "") {
    out_ += "<text x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" " + std::string(attrs) +
            ">" + html_escape(s) + "</text>\n";
  }
  void rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view title = "") {
    out_ += "<rect x=\"" + fixed(x, 2) + "\" y=\"" + fixed(y, 2) + "\" width=\"" +
            fixed(std::max(w, 0.5), 2) + "\" height=\"" + fixed(std::max(h, 0.0), 2) +
            "\" fill=\"" + std::string(fill) + "\">";
    if (!title.empty()) out_ += "<title>" + html_escape(title) + "</title>";
    out_ += "</rect>\n";
  }
  void axis_labels(std::string_view x_label, std::string_view y_label) {
    text(m_left + plot_w / 2.0, chart_h - 10, x_label,
         "text-anchor=\"middle\" class=\"axis-label\"");
    out_ += "<text transform=\"translate(16," + fixed(m_top + plot_h / 2.0, 1) +
            ") rotate(-90)\" text-anchor=\"middle\" class=\"axis-label\">" + html_escape(y_label) +
            "</text>\n";
  }
  // Horizontal grid lines and labels for a linear y axis from 0 to `ymax`.
  double y_axis(double ymax, const std::function<std::string(double)>& label) {
    double step = nice_step(ymax, 5);
    double top = std::max(step, std::ceil(ymax / step) * step);
    for (double v = 0; v <= top + step / 2; v += step) {
      double y = m_top + plot_h - plot_h * v / top;
      line(m_left, y, m_left + plot_w, y, "stroke=\"#e2e8f0\"");
      text(m_left - 6, y + 4, v == 0 ? std::string("0") : label(v),
           "text-anchor=\"end\" class=\"tick\"");
    }
    return top;
  }
  void message(std::string_view s) {
    text(m_left + plot_w / 2.0, m_top + plot_h / 2.0, s, "text-anchor=\"middle\" class=\"empty\"");
  }
  std::string done() {
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  std::string out_;
};

// The latency histogram, on a logarithmic latency axis, with percentile markers.
std::string latency_histogram_chart(const bench_result& r) {
  svg s("chart-latency-histogram", "Latency distribution");
  const auto& h = r.latency;
  if (h.count() == 0) {
    s.message("no successful calls");
    s.axis_labels("latency", "share of calls");
    return s.done();
  }
  double lo = std::max<double>(1, static_cast<double>(h.min())) / 1.15;
  double hi = std::max<double>(static_cast<double>(h.max()) * 1.15, lo * 4);
  double llo = std::log10(lo), lhi = std::log10(hi);
  auto x_of = [&](double v) {
    return m_left + plot_w * (std::log10(std::max(v, lo)) - llo) / (lhi - llo);
  };
  constexpr int bins = 90;
  std::vector<std::uint64_t> count(bins, 0);
  for (std::size_t i = 0; i < h.buckets(); ++i) {
    std::uint64_t c = h.count_at(i);
    if (!c) continue;
    double mid = (static_cast<double>(histogram::lowest_in(i)) +
                  static_cast<double>(histogram::highest_in(i))) /
                 2;
    mid = std::clamp(mid, static_cast<double>(h.min()), static_cast<double>(h.max()));
    int b = static_cast<int>((std::log10(mid) - llo) / (lhi - llo) * bins);
    count[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))] += c;
  }
  double total = static_cast<double>(h.count());
  double max_pct = 0;
  for (auto c : count) max_pct = std::max(max_pct, 100.0 * static_cast<double>(c) / total);
  double top = s.y_axis(max_pct, [](double v) { return fixed(v, v < 1 ? 1 : 0) + " %"; });
  // x ticks: 1-2-5 per decade
  for (double decade = std::pow(10.0, std::floor(llo)); decade < hi; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      double v = decade * m;
      if (v < lo || v > hi) continue;
      double x = x_of(v);
      s.line(x, m_top + plot_h, x, m_top + plot_h + 5, "stroke=\"#64748b\"");
      s.text(x, m_top + plot_h + 18, fmt_ns(v, true), "text-anchor=\"middle\" class=\"tick\"");
    }
  }
  double bin_w = static_cast<double>(plot_w) / bins;
  for (int b = 0; b < bins; ++b) {
    if (!count[static_cast<std::size_t>(b)]) continue;
    double pct = 100.0 * static_cast<double>(count[static_cast<std::size_t>(b)]) / total;
    double bh = plot_h * pct / top;
    double from = std::pow(10.0, llo + (lhi - llo) * b / bins),
           to = std::pow(10.0, llo + (lhi - llo) * (b + 1) / bins);
    s.rect(m_left + b * bin_w + 0.5, m_top + plot_h - bh, bin_w - 1, bh, "#3b82f6",
           fmt_ns(from, true) + " – " + fmt_ns(to, true) + ": " + fixed(pct, 2) + " % (" +
               fmt_count(static_cast<double>(count[static_cast<std::size_t>(b)])) + " calls)");
  }
  auto p = latency_of(r);
  struct marker {
    const char* name;
    std::uint64_t v;
    const char* color;
  };
  const marker markers[] = {{"p50", p.p50, "#16a34a"},
                            {"p90", p.p90, "#ca8a04"},
                            {"p99", p.p99, "#ea580c"},
                            {"p99.9", p.p999, "#dc2626"}};
  int k = 0;
  for (const auto& mk : markers) {
    double x = x_of(static_cast<double>(mk.v));
    s.line(
        x, m_top, x, m_top + plot_h,
        "stroke=\"" + std::string(mk.color) + "\" stroke-dasharray=\"4 3\" stroke-width=\"1.5\"");
    std::string label = std::string(mk.name) + " " + fmt_ns(static_cast<double>(mk.v), true);
    // Right of the line, or left of it where the plot ends (about 7 px a character).
    bool fits = x + 4 + 7.0 * static_cast<double>(label.size()) < m_left + plot_w;
    s.text(fits ? x + 4 : x - 4, m_top + 14 + 14 * k, label,
           "class=\"marker\" fill=\"" + std::string(mk.color) + "\"" +
               (fits ? "" : " text-anchor=\"end\""));
    ++k;
  }
  s.axis_labels("latency (logarithmic)", "share of calls");
  return s.done();
}

// Latency by percentile: x = 1/(1-q) on a log axis (0, 90, 99, 99.9 %, ...).
std::string percentile_chart(const bench_result& r) {
  svg s("chart-percentiles", "Latency by percentile");
  const auto& h = r.latency;
  if (h.count() == 0) {
    s.message("no successful calls");
    s.axis_labels("percentile", "latency");
    return s.done();
  }
  // As far into the tail as the samples reach (at least 10 calls beyond the last mark).
  int nines = std::clamp(
      static_cast<int>(std::floor(std::log10(static_cast<double>(h.count())))) - 1, 2, 6);
  double top = s.y_axis(static_cast<double>(h.max()), [](double v) { return fmt_ns(v, true); });
  auto x_of = [&](double d) { return m_left + plot_w * d / nines; };
  auto y_of = [&](double v) { return m_top + plot_h - plot_h * v / top; };
  for (int d = 0; d <= nines; ++d) {
    double x = x_of(d);
    s.line(x, m_top, x, m_top + plot_h, "stroke=\"#e2e8f0\"");
    // d nines: 0 %, 90 %, 99 %, 99.9 %, ...
    std::string label = d == 0   ? "0"
                        : d == 1 ? "90"
                        : d == 2 ? "99"
                                 : "99." + std::string(static_cast<std::size_t>(d - 2), '9');
    label += " %";
    s.text(x, m_top + plot_h + 18, label, "text-anchor=\"middle\" class=\"tick\"");
  }
  std::string path = "M";
  constexpr int points = 240;
  for (int i = 0; i <= points; ++i) {
    double d = nines * static_cast<double>(i) / points;
    double q = 1 - std::pow(10.0, -d);
    double v = static_cast<double>(i == points ? h.max() : h.quantile(q));
    path += fixed(x_of(d), 1) + "," + fixed(y_of(v), 1) + (i < points ? " L" : "");
  }
  s.raw("<path d=\"" + path + "\" fill=\"none\" stroke=\"#7c3aed\" stroke-width=\"2\"/>\n");
  s.axis_labels("percentile (logarithmic towards the tail)", "latency");
  return s.done();
}

struct bar {
  double t0, t1;  // seconds from the start
  double ok_rate, err_rate, mean_ns, max_ns;
};

std::vector<bar> bars_of(const bench_result& r, double& bar_s) {
  double slot_s = std::chrono::duration<double>(r.slot_width).count();
  std::size_t per_bar =
      r.elapsed_s >= 20 ? static_cast<std::size_t>(std::llround(1.0 / slot_s)) : 1;
  per_bar = std::max<std::size_t>(per_bar, 1);
  bar_s = slot_s * static_cast<double>(per_bar);
  std::vector<bar> out;
  for (std::size_t i = 0; i < r.timeline.size(); i += per_bar) {
    std::uint64_t ok = 0, err = 0, sum = 0, mx = 0;
    for (std::size_t j = i; j < std::min(i + per_bar, r.timeline.size()); ++j) {
      ok += r.timeline[j].ok;
      err += r.timeline[j].errors;
      sum += r.timeline[j].latency_sum_ns;
      mx = std::max(mx, r.timeline[j].latency_max_ns);
    }
    double t0 = static_cast<double>(i) * slot_s;
    double t1 = t0 + bar_s;
    // The last bar may cover only part of its width.
    double covered = std::max(std::min(t1, std::max(r.elapsed_s, t0 + slot_s)) - t0, slot_s * 0.5);
    out.push_back({t0, t1, static_cast<double>(ok) / covered, static_cast<double>(err) / covered,
                   ok ? static_cast<double>(sum) / static_cast<double>(ok) : 0,
                   static_cast<double>(mx)});
  }
  return out;
}

void time_axis(svg& s, double t_end) {
  double step = nice_step(t_end, 8);
  for (double t = 0; t <= t_end + 1e-9; t += step) {
    double x = m_left + plot_w * t / t_end;
    s.line(x, m_top + plot_h, x, m_top + plot_h + 5, "stroke=\"#64748b\"");
    s.text(x, m_top + plot_h + 18, fixed(t, step < 1 ? 1 : 0) + " s",
           "text-anchor=\"middle\" class=\"tick\"");
  }
}

std::string throughput_chart(const bench_result& r) {
  svg s("chart-throughput", "Throughput over time");
  double bar_s = 1;
  auto bars = bars_of(r, bar_s);
  if (bars.empty()) {
    s.message("no calls completed");
    s.axis_labels("time since the start", "calls/s");
    return s.done();
  }
  double ymax = 0;
  for (const auto& b : bars) ymax = std::max(ymax, b.ok_rate + b.err_rate);
  double top = s.y_axis(ymax, [](double v) { return fmt_count(v); });
  double t_end = bars.back().t1;
  time_axis(s, t_end);
  for (const auto& b : bars) {
    double x = m_left + plot_w * b.t0 / t_end;
    double w = plot_w * (b.t1 - b.t0) / t_end;
    double h_ok = plot_h * b.ok_rate / top, h_err = plot_h * b.err_rate / top;
    std::string when = fixed(b.t0, 1) + "–" + fixed(b.t1, 1) + " s: ";
    s.rect(x + 0.5, m_top + plot_h - h_ok, w - 1, h_ok, "#3b82f6",
           when + fmt_count(b.ok_rate) + " ok calls/s");
    if (b.err_rate > 0)
      s.rect(x + 0.5, m_top + plot_h - h_ok - h_err, w - 1, h_err, "#ef4444",
             when + fmt_count(b.err_rate) + " errors/s");
  }
  s.axis_labels(
      "time since the start (bars of " + fixed(bar_s, bar_s < 1 ? 1 : 0) + " s; red: errors)",
      "calls/s");
  return s.done();
}

std::string latency_time_chart(const bench_result& r) {
  svg s("chart-latency-time", "Latency over time");
  double bar_s = 1;
  auto bars = bars_of(r, bar_s);
  if (bars.empty() || r.latency.count() == 0) {
    s.message("no successful calls");
    s.axis_labels("time since the start", "latency");
    return s.done();
  }
  double ymax = 0;
  for (const auto& b : bars) ymax = std::max(ymax, b.max_ns);
  double top = s.y_axis(ymax, [](double v) { return fmt_ns(v, true); });
  double t_end = bars.back().t1;
  time_axis(s, t_end);
  std::string mean_path, max_path;
  for (const auto& b : bars) {
    if (b.ok_rate <= 0) continue;
    double x = m_left + plot_w * (b.t0 + b.t1) / 2 / t_end;
    mean_path += (mean_path.empty() ? "M" : " L") + fixed(x, 1) + "," +
                 fixed(m_top + plot_h - plot_h * b.mean_ns / top, 1);
    max_path += (max_path.empty() ? "M" : " L") + fixed(x, 1) + "," +
                fixed(m_top + plot_h - plot_h * b.max_ns / top, 1);
  }
  s.raw("<path d=\"" + max_path + "\" fill=\"none\" stroke=\"#f97316\" stroke-width=\"1.5\"/>\n");
  s.raw("<path d=\"" + mean_path + "\" fill=\"none\" stroke=\"#2563eb\" stroke-width=\"2\"/>\n");
  s.rect(m_left + 12, m_top + 10, 14, 3, "#2563eb");
  s.text(m_left + 32, m_top + 15, "mean", "class=\"marker\"");
  s.rect(m_left + 80, m_top + 10, 14, 3, "#f97316");
  s.text(m_left + 100, m_top + 15, "max", "class=\"marker\"");
  s.axis_labels("time since the start (per " + fixed(bar_s, bar_s < 1 ? 1 : 0) + " s)", "latency");
  return s.done();
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

std::string shortened_json(const value& v, std::size_t max_chars) {
  const std::size_t keep = max_chars / 2 > 8 ? max_chars / 2 - 4 : 4;
  if (const auto* text = v.get_if<std::string>()) {
    const std::size_t n = code_points(*text);
    if (n <= max_chars) return to_json(v);
    std::string cut(first_code_points(*text, keep));
    cut += "...";
    cut += last_code_points(*text, keep);
    std::string out;
    write_json_string(out, cut);
    return out + " (" + fmt_count(static_cast<double>(n)) + " characters)";
  }
  std::string json = to_json(v);
  const std::size_t n = code_points(json);
  if (n <= max_chars) return json;
  return std::string(first_code_points(json, keep)) + " ... " +
         std::string(last_code_points(json, keep)) + " (" + fmt_count(static_cast<double>(n)) +
         " characters of JSON)";
}

double throughput(const bench_result& r) noexcept {
  return r.elapsed_s > 0 ? static_cast<double>(r.ok) / r.elapsed_s : 0;
}

std::string summary_text(const bench_result& r) {
  const auto& o = r.options;
  auto p = latency_of(r);
  std::string s;
  s += "rapidrpc bench: " + o.method + " on " + o.url + "\n";
  s += "  " + load_description(o) + "\n";
  s += "  expected result: " + shortened_json(r.expected) + "\n\n";
  s += "  calls       " + std::to_string(r.ok) + " ok, " + std::to_string(r.errors.total()) +
       " errors, in " + fixed(r.elapsed_s, 2) + " s";
  if (r.unfinished)
    s += " (" + std::to_string(r.unfinished) + " still in flight at the end, not counted)";
  s += "\n";
  s += "  throughput  " + fixed(throughput(r), 1) + " calls/s\n";
  if (r.latency.count()) {
    s += "  latency     p50 " + fmt_ns(static_cast<double>(p.p50)) + ", p90 " +
         fmt_ns(static_cast<double>(p.p90)) + ", p99 " + fmt_ns(static_cast<double>(p.p99)) +
         ", p99.9 " + fmt_ns(static_cast<double>(p.p999)) + ", max " +
         fmt_ns(static_cast<double>(p.max)) + "\n";
    s += "              min " + fmt_ns(static_cast<double>(p.min)) + ", mean " + fmt_ns(p.mean) +
         "\n";
  }
  if (r.errors.total()) {
    s += "  errors      " + error_breakdown(r.errors) + "\n";
    s += "  first error " + r.first_error + "\n";
  }
  return s;
}

std::string progress_text(const progress& p) {
  std::string s = fixed(p.elapsed_s, 0) + " s";
  if (p.requests) {
    s += ": " + std::to_string(p.calls) + " of " + std::to_string(p.requests) + " calls";
  } else {
    char total[32];
    std::snprintf(total, sizeof total, "%g", p.duration_s);
    s += std::string(" of ") + total + " s: " + std::to_string(p.calls) + " calls";
  }
  s += ", " + fixed(p.calls_per_s, 0) + " calls/s (last second), " + std::to_string(p.errors) +
       " errors, p99 " + (p.calls > p.errors ? fmt_ns(static_cast<double>(p.p99_ns)) : "-");
  return s;
}

std::string summary_json(const bench_result& r) {
  const auto& o = r.options;
  auto p = latency_of(r);
  auto us = [](double ns) {
    std::string out;
    append_number(out, std::round(ns) / 1e3);
    return out;
  };
  std::string s = "{\"settings\":{\"url\":";
  write_json_string(s, o.url);
  s += ",\"method\":";
  write_json_string(s, o.method);
  s += std::string(",\"protocol\":\"") + (o.protocol == protocol::jsonrpc ? "jsonrpc" : "xmlrpc") +
       "\"";
  s += ",\"params\":" + to_json(value(o.params));
  s += ",\"connections\":" + std::to_string(o.connections);
  s += ",\"in_flight\":" + std::to_string(o.in_flight);
  s += ",\"threads\":" + std::to_string(o.threads);
  s += std::string(",\"keep_alive\":") + (o.keep_alive ? "true" : "false");
  s += ",\"requests\":" + std::to_string(o.requests);
  s += ",\"duration_s\":";
  append_number(s, o.requests ? 0.0 : o.duration);
  s += ",\"rate\":";
  append_number(s, o.rate);
  s += ",\"timeout_s\":";
  append_number(s, o.timeout);
  s += ",\"max_idle_s\":";
  append_number(s, o.max_idle);
  s += ",\"expected\":" + to_json(r.expected) + "}";
  s += ",\"started_at\":\"" + r.started_at + "\"";
  s += ",\"elapsed_s\":";
  append_number(s, r.elapsed_s);
  s += ",\"calls\":" + std::to_string(r.ok + r.errors.total());
  s += ",\"ok\":" + std::to_string(r.ok);
  s += ",\"unfinished\":" + std::to_string(r.unfinished);
  const auto& e = r.errors;
  s += ",\"errors\":{\"total\":" + std::to_string(e.total()) +
       ",\"connect\":" + std::to_string(e.connect) + ",\"io\":" + std::to_string(e.io) +
       ",\"timeout\":" + std::to_string(e.timeout) +
       ",\"http_status\":" + std::to_string(e.http_status) +
       ",\"bad_response\":" + std::to_string(e.bad_response) +
       ",\"fault\":" + std::to_string(e.fault) + ",\"mismatch\":" + std::to_string(e.mismatch) +
       "}";
  s += ",\"first_error\":";
  write_json_string(s, r.first_error);
  s += ",\"throughput\":";
  append_number(s, std::round(throughput(r) * 10) / 10);
  s += ",\"latency_us\":{\"min\":" + us(static_cast<double>(p.min)) + ",\"mean\":" + us(p.mean) +
       ",\"p50\":" + us(static_cast<double>(p.p50)) + ",\"p90\":" + us(static_cast<double>(p.p90)) +
       ",\"p99\":" + us(static_cast<double>(p.p99)) +
       ",\"p99_9\":" + us(static_cast<double>(p.p999)) +
       ",\"max\":" + us(static_cast<double>(p.max)) + "}";
  s += ",\"timeline\":{\"slot_s\":";
  append_number(s, std::chrono::duration<double>(r.slot_width).count());
  std::string ok = ",\"ok\":[", err = ",\"errors\":[";
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    if (i) ok += ',', err += ',';
    ok += std::to_string(r.timeline[i].ok);
    err += std::to_string(r.timeline[i].errors);
  }
  s += ok + "]" + err + "]}}\n";
  return s;
}

std::string report_html(const bench_result& r) {
  const auto& o = r.options;
  auto p = latency_of(r);
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>rapidrpc bench: " + html_escape(o.method) + " — " + fixed(throughput(r), 0) +
       " calls/s</title>\n";
  h += R"(<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 24px auto; max-width: 1000px; color: #0f172a; background: #ffffff; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px 0; }
h2 { font-size: 17px; margin: 28px 0 8px 0; }
.sub { color: #475569; margin: 0 0 16px 0; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; }
.card { flex: 1 1 140px; border: 1px solid #e2e8f0; border-radius: 8px; padding: 10px 14px; background: #f8fafc; }
.card .v { font-size: 22px; font-weight: 600; }
.card .k { font-size: 12px; color: #64748b; text-transform: uppercase; letter-spacing: .04em; }
.card.bad .v { color: #dc2626; }
.card .u { font-size: 13px; font-weight: 400; color: #475569; }
table { border-collapse: collapse; font-size: 14px; }
td, th { padding: 3px 14px 3px 0; text-align: left; vertical-align: top; }
th { color: #475569; font-weight: 500; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; word-break: break-all; }
svg.chart { display: block; border: 1px solid #e2e8f0; border-radius: 6px; margin: 4px 0 8px 0; max-width: 100%; height: auto; }
svg .tick { font-size: 11px; fill: #475569; }
svg .axis-label { font-size: 12px; fill: #334155; }
svg .marker { font-size: 12px; font-weight: 600; }
svg .empty { font-size: 16px; fill: #94a3b8; }
svg text { font-family: system-ui, "DejaVu Sans", sans-serif; }
.note { color: #64748b; font-size: 13px; }
</style>
</head>
<body>
)";
  h += "<h1>rapidrpc bench: <code>" + html_escape(o.method) + "</code></h1>\n";
  h += "<p class=\"sub\">" + html_escape(o.url) + " · " + html_escape(load_description(o)) +
       " · started " + html_escape(r.started_at) + "</p>\n";

  bool bad = r.errors.total() > 0;
  h += "<div class=\"cards\">\n";
  auto card = [&](const std::string& k, const std::string& v, bool red = false,
                  const std::string& unit = "") {
    h += "<div class=\"card" + std::string(red ? " bad" : "") + "\"><div class=\"k\">" +
         html_escape(k) + "</div><div class=\"v\">" + html_escape(v) +
         (unit.empty() ? "" : " <span class=\"u\">" + html_escape(unit) + "</span>") +
         "</div></div>\n";
  };
  card("throughput", fmt_count(throughput(r)), false, "calls/s");
  card("p50 latency", r.latency.count() ? fmt_ns(static_cast<double>(p.p50), true) : "–");
  card("p99 latency", r.latency.count() ? fmt_ns(static_cast<double>(p.p99), true) : "–");
  card("p99.9 latency", r.latency.count() ? fmt_ns(static_cast<double>(p.p999), true) : "–");
  card("errors", fmt_count(static_cast<double>(r.errors.total())), bad);
  h += "</div>\n";

  h += "<h2>Latency distribution</h2>\n" + latency_histogram_chart(r);
  h += "<h2>Latency by percentile</h2>\n" + percentile_chart(r);
  h += "<h2>Throughput over time</h2>\n" + throughput_chart(r);
  h += "<h2>Latency over time</h2>\n" + latency_time_chart(r);
  if (o.rate > 0)
    h += "<p class=\"note\">Open loop: calls were started on a fixed schedule; each latency runs "
         "from the "
         "call's scheduled start, so time spent waiting for a free connection is included (no "
         "coordinated omission).</p>\n";

  h += "<h2>Summary</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v, bool num = true) {
    h += "<tr><th>" + html_escape(k) + "</th><td" + (num ? " class=\"num\"" : "") + ">" +
         html_escape(v) + "</td></tr>\n";
  };
  row("calls answered as expected", fmt_count(static_cast<double>(r.ok)));
  row("errors", fmt_count(static_cast<double>(r.errors.total())));
  if (r.unfinished)
    row("in flight at the end (not counted)", fmt_count(static_cast<double>(r.unfinished)));
  row("elapsed", fixed(r.elapsed_s, 3) + " s");
  row("throughput", fixed(throughput(r), 1) + " calls/s");
  if (r.latency.count()) {
    row("latency min", fmt_ns(static_cast<double>(p.min), true));
    row("latency mean", fmt_ns(p.mean, true));
    row("latency p50", fmt_ns(static_cast<double>(p.p50), true));
    row("latency p90", fmt_ns(static_cast<double>(p.p90), true));
    row("latency p99", fmt_ns(static_cast<double>(p.p99), true));
    row("latency p99.9", fmt_ns(static_cast<double>(p.p999), true));
    row("latency max", fmt_ns(static_cast<double>(p.max), true));
  }
  if (bad) {
    row("errors by kind", error_breakdown(r.errors), false);
    row("first error", r.first_error, false);
  }
  h += "</table>\n";

  h += "<h2>Settings</h2>\n<table>\n";
  row("URL", o.url, false);
  row("method", o.method, false);
  row("parameters", to_json(value(o.params)), false);
  row("expected result", to_json(r.expected) + (o.expect ? " (--expect)" : " (the warm-up call's)"),
      false);
  if (zmq_endpoint::is_zmq_url(o.url))
    row("connections",
        std::to_string(o.connections) + " DEALER sockets, " + std::to_string(o.in_flight) +
            " calls in flight on each",
        false);
  else
    row("connections",
        std::to_string(o.connections) + (o.keep_alive ? ", keep-alive" : ", a new one per call"),
        false);
  row("threads", std::to_string(o.threads), false);
  row("load",
      o.rate > 0 ? "open loop, " + fixed(o.rate, 1) + " calls/s"
                 : "closed loop (next call when answered)",
      false);
  row("length", o.requests ? std::to_string(o.requests) + " calls" : fixed(o.duration, 1) + " s",
      false);
  row("timeout", fixed(o.timeout, 1) + " s per call", false);
  row("request size", std::to_string(r.request_bytes) + " bytes", false);
  row("host", host_name() + ", " + std::to_string(std::thread::hardware_concurrency()) + " CPUs",
      false);
  h += "</table>\n";
  const bool zmq = zmq_endpoint::is_zmq_url(o.url);
  h += std::string("<p class=\"note\">") +
       (zmq ? "Request frame (the id varies per call):" : "Request head:") + "</p>\n<pre><code>" +
       html_escape(r.request_bytes_sample) + "</code></pre>\n";
  h += std::string(
           "<p class=\"note\">Made by <code>rapidrpc bench</code>. Latencies are recorded in a "
           "log-linear "
           "histogram (within 0.8 %); a call counts as ok only if its answer is ") +
       (zmq ? "a JSON-RPC reply with its id and a result" : "HTTP 200 and an XML-RPC result") +
       " equal to the expected one.</p>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace rapidrpc::cli

// What both load drivers share (loadgen.hpp): how a run is spread over its
// threads, which calls a thread may still start, the warm-up's verdict, and
// the start time of a run.
#include "loadgen.hpp"

#include <algorithm>
#include <ctime>
#include <string>
#include <variant>

namespace rapidrpc::cli {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

unsigned load_threads(const bench_options& o) noexcept {
  return std::max(1u, std::min<unsigned>(o.threads, static_cast<unsigned>(o.connections)));
}

thread_share share_of(const bench_options& o, unsigned threads, unsigned t) noexcept {
  thread_share s;
  s.connections = o.connections / threads + (t < o.connections % threads ? 1 : 0);
  s.quota = o.requests / threads + (t < o.requests % threads ? 1 : 0);
  s.rate = o.rate > 0 ? o.rate / threads : 0;
  if (o.rate > 0)
    s.phase = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(t / o.rate));
  return s;
}

call_schedule::call_schedule(const bench_options& o, const thread_share& share,
                             clock::time_point start, clock::time_point deadline) noexcept
    : counted_(o.requests != 0),
      open_loop_(share.rate > 0),
      quota_(share.quota),
      deadline_(deadline) {
  if (open_loop_) {
    interval_ = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double>(1.0 / share.rate));
    next_due_ = start + share.phase;
  }
}

bool call_schedule::take(clock::time_point now) noexcept {
  if (over_) return false;
  if (counted_ ? quota_ == 0 : now >= deadline_) {
    over_ = true;
    return false;
  }
  if (counted_) --quota_;
  return true;
}

std::optional<call_schedule::clock::time_point> call_schedule::take_due(
    clock::time_point now) noexcept {
  if (over_ || next_due_ > now) return std::nullopt;
  if (counted_ ? quota_ == 0 : next_due_ >= deadline_) {
    over_ = true;
    return std::nullopt;
  }
  if (counted_) --quota_;
  const auto due = next_due_;
  next_due_ += interval_;
  return due;
}

std::optional<call_schedule::clock::time_point> call_schedule::take_deferred() noexcept {
  if (deferred_head_ == deferred_.size()) return std::nullopt;
  const auto due = deferred_[deferred_head_++];
  if (deferred_head_ == deferred_.size()) drop_deferred();
  return due;
}

value expected_from_warmup(const outcome& warm) {
  if (const auto* f = std::get_if<fault>(&warm)) {
    if (f->code() == fault_code::transport_error)
      throw bench_error("the warm-up call failed: " + f->message());
    throw bench_error("the warm-up call returned fault " + std::to_string(f->code()) + ": " +
                      f->message() + " (a benchmark needs a call that succeeds)");
  }
  return std::get<value>(warm);
}

}  // namespace rapidrpc::cli

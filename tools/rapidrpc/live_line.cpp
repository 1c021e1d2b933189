#include "live_line.hpp"

#include "bench_report.hpp"

#include <sys/ioctl.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace rapidrpc::cli {

namespace {

constexpr auto refresh = std::chrono::seconds(1);
// Back to the start of the line, and erase to its end: the line is written
// over itself, however much shorter the new text is. A dumb terminal gets
// the carriage return alone, and spaces where the old text was longer.
constexpr std::string_view rewind = "\r\x1b[K";

bool dumb_terminal() noexcept {
  const char* term = std::getenv("TERM");
  return term == nullptr || *term == '\0' || std::string_view(term) == "dumb";
}

double seconds(live_line::clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The terminal's width in columns; 0 if it cannot say.
std::size_t columns(int fd) noexcept {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace

bool live_line::wanted(bool json, bool quiet) noexcept {
  return !json && !quiet && ::isatty(STDOUT_FILENO) == 1 && ::isatty(STDERR_FILENO) == 1;
}

live_line::live_line(double duration_s, std::uint64_t requests, int fd)
    : duration_s_(duration_s), requests_(requests), fd_(fd), dumb_(dumb_terminal()) {}

live_line::~live_line() { stop(); }

void live_line::start(reader read) {
  read_ = std::move(read);
  started_ = last_at_ = clock::now();
  thread_ = std::thread([this] { run(); });
}

void live_line::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  // The summary comes next, on standard output: it starts on a clean line.
  if (!shown_) return;
  if (dumb_) {
    std::string blank(shown_chars_ + 2, ' ');
    blank.front() = blank.back() = '\r';
    write_out(blank);
  } else {
    write_out(rewind);
  }
}

void live_line::run() {
  std::unique_lock lock(mutex_);
  auto next = started_ + refresh;
  while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    const auto now = clock::now();
    show(now);
    lock.lock();
    // A refresh late by more than one interval (a stopped process, a busy
    // machine) is not caught up with a burst of them.
    next = std::max(next + refresh, now + refresh / 2);
  }
}

void live_line::show(clock::time_point now) {
  if (broken_) return;
  live_figures f;
  read_(f);
  progress p;
  p.elapsed_s = seconds(now - started_);
  p.duration_s = duration_s_;
  p.requests = requests_;
  p.errors = f.errors;
  p.calls = f.latency.count() + f.errors;
  const double interval = seconds(now - last_at_);
  if (interval > 0 && p.calls >= last_calls_)
    p.calls_per_s = static_cast<double>(p.calls - last_calls_) / interval;
  p.p99_ns = f.latency.quantile(0.99);
  last_at_ = now;
  last_calls_ = p.calls;
  std::string text = progress_text(p);
  // Wider than the terminal, the line would wrap, and the carriage return
  // would go back to the start of its last row only.
  const std::size_t width = columns(fd_);
  if (width > 1 && text.size() >= width) text.resize(width - 1);
  const std::size_t chars = text.size();
  if (!dumb_) {
    text.insert(0, rewind);
  } else {
    text.insert(0, 1, '\r');
    if (chars < shown_chars_) text.append(shown_chars_ - chars, ' ');
  }
  write_out(text);
  shown_chars_ = chars;
  shown_ = true;
}

void live_line::write_out(std::string_view bytes) noexcept {
  while (!bytes.empty() && !broken_) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n > 0)
      bytes.remove_prefix(static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      broken_ = true;
  }
}

}  // namespace rapidrpc::cli

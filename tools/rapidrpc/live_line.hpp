// The live line of `rapidrpc bench` (docs/cli.md): on a terminal, one line
// on standard error, rewritten in place about once a second while the load
// runs (time, calls, calls/s over the last second, errors, p99 so far), and
// erased before the summary is printed, so that the summary reads as it
// does without it. A run watched by no one (output to a file or a pipe,
// --json, --quiet) has no line and no thread for it.
//
// Threads: start() starts a thread of the line's own, which once a second
// reads the load threads' figures through the reader it was given (relaxed
// atomic loads, histogram.hpp: the load threads take no lock and wait for
// nothing) and writes the line; stop() ends that thread and joins it.
#pragma once

#include "histogram.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace rapidrpc::cli {

/// What the load threads have counted so far, summed over them.
struct live_figures {
  histogram latency;  ///< of the ok calls; its count is the ok calls so far
  std::uint64_t errors = 0;
};

/// One refresh of the live line: what progress_text() shows.
struct progress {
  double elapsed_s = 0;        ///< since the load started
  double duration_s = 0;       ///< a timed run's length
  std::uint64_t requests = 0;  ///< a counted run's calls (0: the run is timed)
  std::uint64_t calls = 0;     ///< answered so far, ok or not
  std::uint64_t errors = 0;    ///< so far
  double calls_per_s = 0;      ///< calls answered since the last refresh, per second
  std::uint64_t p99_ns = 0;    ///< of the ok calls so far (none if calls == errors)
};

class live_line {
 public:
  using clock = std::chrono::steady_clock;
  /// Adds the load threads' figures so far to what it is given.
  using reader = std::function<void(live_figures&)>;

  /// True if a run is to show the line: standard output and standard error
  /// are both terminals, and neither --json nor --quiet was given. The
  /// line goes to standard error, so that standard output carries the
  /// summary alone; both are asked, so that a summary sent to a file or a
  /// pipe is not watched over by a line no one reads.
  static bool wanted(bool json, bool quiet) noexcept;

  /// The line of a run of `duration_s` seconds, or of `requests` calls if
  /// that is not 0, written to the descriptor `fd` (a terminal). It is
  /// written over in place with a carriage return and an erase to the end
  /// of the line; on a terminal whose TERM is dumb or unset, with a
  /// carriage return and spaces over what is left of the text before.
  live_line(double duration_s, std::uint64_t requests, int fd);
  ~live_line();  ///< stop()
  live_line(const live_line&) = delete;
  live_line& operator=(const live_line&) = delete;

  /// The load has started: from now until stop(), about once a second, the
  /// line's thread calls `read` and writes the line.
  void start(reader read);
  /// The load has ended: ends and joins the line's thread, then erases the
  /// line if one was written. Does nothing if start() was not called.
  void stop();

 private:
  void run();
  void show(clock::time_point now);
  void write_out(std::string_view bytes) noexcept;

  const double duration_s_;
  const std::uint64_t requests_;
  const int fd_;
  // A terminal that knows no escape sequences (TERM dumb or unset, such as
  // Emacs's shell): the line is written over with spaces instead of erased.
  const bool dumb_;
  reader read_;
  clock::time_point started_{};
  // The line's thread alone, until stop() has joined it.
  clock::time_point last_at_{};
  std::uint64_t last_calls_ = 0;
  std::size_t shown_chars_ = 0;  // of the text on the terminal now
  bool shown_ = false;
  bool broken_ = false;  // a write failed: the terminal is gone; show nothing more
  // stop() tells the line's thread through these.
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rapidrpc::cli

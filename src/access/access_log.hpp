// Private: the access log. One line per answered request, built on the loop
// thread into that loop's buffer, handed to a writer thread at most every
// 100 ms or every 64 KiB, and written by that thread, so a slow disk never
// blocks a loop. Lines of one loop stay in order.
//
// In the process-per-connection modes a child has no writer thread: it
// writes its lines itself (it serves one connection, so waiting on the disk
// delays no one else), and notices a reopen through a counter shared with
// the parent.
//
// A write the file refuses (a full disk, EIO, EFBIG, ...) loses its lines:
// the first failure is reported on standard error, once until a write
// succeeds again; the lines lost are counted, and the next write that works
// starts with a "#" line saying how many. A line cut short by a failure is
// finished (a child's: ended) before anything else is written, so every
// line stays whole (see write_all()).
#pragma once

#include "log/log.hpp"

#include <rapidrpc/access.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <sys/types.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace rapidrpc::detail {

/// One line's fields.
struct access_record {
  std::chrono::system_clock::time_point when;  ///< when the response was queued
  std::string_view peer;                       ///< "127.0.0.1:40312" or "[::1]:40312"
  std::string_view user;                       ///< empty: "-"
  std::string_view method;                     ///< empty: no call was parsed ("-")
  int status = 200;
  std::int32_t fault = 0;
  std::size_t request_bytes = 0;   ///< request body as received
  std::size_t response_bytes = 0;  ///< response body as sent
  std::chrono::microseconds duration{0};
};

/// One request's entry, filled as the request goes; every transport makes
/// its lines with it.
struct access_entry {
  std::chrono::steady_clock::time_point start{};  ///< when the request was read (zero: unknown)
  std::size_t request_bytes = 0;                  ///< its body as received

  /// Starts the entry of a request that has just been read.
  void begin(std::size_t bytes) noexcept {
    start = std::chrono::steady_clock::now();
    request_bytes = bytes;
  }
  /// The record of the response to it, queued now; the entry is then clear
  /// for the next request.
  access_record finish(std::string_view peer, std::string_view user, std::string_view method,
                       int status, std::int32_t fault, std::size_t response_bytes) noexcept;
};

/// Method names longer than this are cut, and the field is marked "...".
inline constexpr std::size_t max_logged_method = 128;

/// Appends one line (with its '\n'):
///   TIME PEER USER "METHOD" STATUS FAULT REQUEST_BYTES RESPONSE_BYTES MICROSECONDS
/// TIME is UTC, 2024-05-01T12:00:00.123456Z. In USER and METHOD, bytes
/// outside '!'..'~', '"' and '\' are written as \xHH, so no field holds a
/// space, a quote or a control character and a line cannot be forged.
void format_access_line(std::string& out, const access_record& r);

/// Appends one line (with its '\n') holding a JSON object:
///   {"time":"2024-05-01T12:00:00.123456Z","peer":"127.0.0.1:40312",
///    "user":"alice","method":"sample.add","status":200,"fault":0,
///    "request_bytes":198,"response_bytes":150,"microseconds":37}
/// "user" and "method" are null when there is none; a method cut at
/// max_logged_method bytes adds "method_cut":true. In strings, bytes outside
/// ' '..'~' (and '"', '\\') are written as \u00HH, one per byte, so a line
/// is always valid JSON, and ASCII.
void format_access_json(std::string& out, const access_record& r);

/// The log file and its writer thread. submit() and reopen() may be called
/// from any thread.
class access_log {
 public:
  /// Opens `path` for appending ("-": standard output); throws
  /// std::system_error if it cannot. Without `writer_thread` every submit()
  /// writes at once, in the calling process (the process modes, where the
  /// children write and a thread in the parent would only be forked with).
  /// What cannot be written is said to `lines`.
  explicit access_log(std::string path, bool writer_thread = true,
                      access_log_format format = access_log_format::text, logger lines = {});
  /// Writes what is queued, then stops the writer.
  ~access_log();
  access_log(const access_log&) = delete;
  access_log& operator=(const access_log&) = delete;

  /// Queues `lines` (`count` whole lines); `lines` is left empty. Past
  /// max_queued bytes waiting, lines are dropped and counted (a "#" line
  /// says how many), as are lines the file refuses to take.
  void submit(std::string& lines, std::size_t count);
  /// Re-opens the file by its path (after it was renamed).
  void reopen();
  /// Appends `r`'s line, in this log's format.
  void format(std::string& out, const access_record& r) const;

  static constexpr std::size_t max_queued = 16 * 1024 * 1024;

 private:
  // What the processes writing to the file share: in a mapping that fork
  // shares, so a child sees what its parent or another child did.
  struct mapped_state {
    std::atomic<std::uint32_t> generation{0};  // reopen() count
    std::atomic<std::uint64_t> lost{0};        // lines lost to failed writes, not yet told
    std::atomic<int> lost_error{0};            // the errno that lost them
    std::atomic<bool> failing{false};          // said once (logger); no write has worked since
    std::atomic<bool> mid_line{false};         // a child's write was cut: the file ends mid-line
  };
  struct put_result {
    int error = 0;                 // 0: all written
    std::uint64_t lines_lost = 0;  // whole lines not written (when error != 0)
  };

  void run();
  // Writes `data` (whole lines) after what a failure left to write; a
  // failure loses lines, counted, and is reported.
  void write_all(std::string_view data);
  // Ends a line a failed write cut (see write_all()); 0 or an errno.
  int end_cut_line();
  // Writes `text` (whole lines); on a failure, deals with the line it cut.
  put_result put(std::string_view text);
  // The "#" line (a JSON object in the json format): `lines` dropped, and why.
  std::string note(std::uint64_t lines, std::string_view why) const;
  // Counts `lines` as lost to `error`; reports the first failure of a run of them.
  void failed(int error, std::uint64_t lines);
  int open_file() const;
  void reopen_in_child();

  std::string path_;
  logger lines_;
  access_log_format format_;
  int fd_ = -1;
  pid_t owner_;                        // the process whose thread writes (0: none)
  mapped_state* shared_ = nullptr;     // shared with children
  std::uint32_t seen_generation_ = 0;  // in a child: the file it has open
  std::string rest_;              // the writer thread: the end of a line a failed write cut short
  std::uint64_t overflowed_ = 0;  // the writer thread: lines the full queue dropped, not yet told

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  std::size_t dropped_ = 0;
  bool reopen_ = false;
  bool stop_ = false;
  std::thread thread_;
};

/// One loop's buffer of lines. Loop thread only.
class access_log_buffer {
 public:
  access_log_buffer(access_log& sink, boost::asio::io_context& io);
  /// Hands over what is left.
  ~access_log_buffer();

  void add(const access_record& r);
  /// Hands the lines over now.
  void flush();
  /// Hands the lines over and stops the timer, so the loop can end at once;
  /// when no more lines will come (the loop is done).
  void finish();

  static constexpr std::size_t flush_bytes = 64 * 1024;
  static constexpr std::chrono::milliseconds flush_interval{100};

 private:
  access_log& sink_;
  std::string lines_;
  std::size_t count_ = 0;
  boost::asio::steady_timer timer_;
  bool armed_ = false;
};

}  // namespace rapidrpc::detail

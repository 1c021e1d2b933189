#include "access/access_log.hpp"

#include "text/text.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <system_error>

namespace rapidrpc::detail {

access_record access_entry::finish(std::string_view peer, std::string_view user,
                                   std::string_view method, int status, std::int32_t fault,
                                   std::size_t response_bytes) noexcept {
  access_record r;
  r.when = std::chrono::system_clock::now();
  r.peer = peer;
  r.user = user;
  r.method = method;
  r.status = status;
  r.fault = fault;
  r.request_bytes = request_bytes;
  r.response_bytes = response_bytes;
  if (start != std::chrono::steady_clock::time_point{})
    r.duration = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
  *this = {};
  return r;
}

namespace {

void append_escaped(std::string& out, std::string_view s) {
  const auto& hex = hex_digits;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c > ' ' && c < 0x7f && c != '"' && c != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
}

// "2024-05-01T12:00:00." formatted once a second per thread.
void append_time(std::string& out, std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  thread_local std::time_t cached_at = -1;
  thread_local char buf[32];
  thread_local std::size_t len = 0;
  auto us = duration_cast<microseconds>(when.time_since_epoch()).count();
  auto secs = static_cast<std::time_t>(us / 1'000'000);
  auto frac = static_cast<unsigned>(us % 1'000'000);
  if (secs != cached_at) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    len = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.", &tm);
    cached_at = secs;
  }
  out.append(buf, len);
  char digits[7];
  for (int i = 5; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  out.append(digits, 6);
  out += 'Z';
}

}  // namespace

void format_access_line(std::string& out, const access_record& r) {
  append_time(out, r.when);
  out += ' ';
  if (r.peer.empty()) out += '-';
  append_escaped(out, r.peer);
  out += ' ';
  if (r.user.empty()) out += '-';
  append_escaped(out, r.user);
  out += ' ';
  if (r.method.empty()) {
    out += '-';
  } else {
    out += '"';
    append_escaped(out, r.method.substr(0, max_logged_method));
    out += '"';
    if (r.method.size() > max_logged_method) out += "...";
  }
  out += ' ';
  append_decimal(out, static_cast<std::uint64_t>(r.status));
  out += ' ';
  append_decimal(out, r.fault);
  out += ' ';
  append_decimal(out, r.request_bytes);
  out += ' ';
  append_decimal(out, r.response_bytes);
  out += ' ';
  append_decimal(out, static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.duration.count())));
  out += '\n';
}

namespace {

// A JSON string's content: printable ASCII as it is but '"' and '\\', every
// other byte as \u00HH.
void append_json_escaped(std::string& out, std::string_view s) {
  const auto& hex = hex_digits;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= ' ' && c < 0x7f && c != '"' && c != '\\') {
      out += ch;
    } else {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
}

void append_json_string_or_null(std::string& out, std::string_view s) {
  if (s.empty()) {
    out += "null";
    return;
  }
  out += '"';
  append_json_escaped(out, s);
  out += '"';
}

}  // namespace

void format_access_json(std::string& out, const access_record& r) {
  out += "{\"time\":\"";
  append_time(out, r.when);
  out += "\",\"peer\":";
  append_json_string_or_null(out, r.peer);
  out += ",\"user\":";
  append_json_string_or_null(out, r.user);
  out += ",\"method\":";
  append_json_string_or_null(out, r.method.substr(0, max_logged_method));
  if (r.method.size() > max_logged_method) out += ",\"method_cut\":true";
  out += ",\"status\":";
  append_decimal(out, static_cast<std::uint64_t>(r.status));
  out += ",\"fault\":";
  append_decimal(out, r.fault);
  out += ",\"request_bytes\":";
  append_decimal(out, r.request_bytes);
  out += ",\"response_bytes\":";
  append_decimal(out, r.response_bytes);
  out += ",\"microseconds\":";
  append_decimal(out, static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.duration.count())));
  out += "}\n";
}

// ---- access_log -----------------------------------------------------------------

access_log::access_log(std::string path, bool writer_thread, access_log_format format, logger lines)
    : path_(std::move(path)),
      lines_(std::move(lines)),
      format_(format),
      owner_(writer_thread ? ::getpid() : 0) {
  fd_ = open_file();
  if (fd_ < 0)
    throw std::system_error(errno, std::generic_category(), "cannot open access log " + path_);
  // State the process-mode children can see change (fork shares it).
  void* p = ::mmap(nullptr, sizeof(mapped_state), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    if (fd_ != STDOUT_FILENO) ::close(fd_);
    throw std::system_error(e, std::generic_category(), "access log");
  }
  shared_ = new (p) mapped_state;
  if (!writer_thread) return;
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {  // no thread to be had: the destructor will not run
    if (fd_ != STDOUT_FILENO) ::close(fd_);
    shared_->~mapped_state();
    ::munmap(shared_, sizeof(mapped_state));
    throw;
  }
}

access_log::~access_log() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  shared_->~mapped_state();
  ::munmap(shared_, sizeof(mapped_state));
}

int access_log::open_file() const {
  if (path_ == "-") return STDOUT_FILENO;
  return ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

void access_log::submit(std::string& lines, std::size_t count) {
  if (lines.empty()) return;
  if (::getpid() != owner_) {
    // No writer thread in this process (a child of the process modes; the
    // parent's mutex may have been held when it forked). Write directly.
    reopen_in_child();
    write_all(lines);
    lines.clear();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (queued_bytes_ + lines.size() > max_queued) {
      dropped_ += count;
      lines.clear();
      return;
    }
    queued_bytes_ += lines.size();
    queue_.push_back(std::move(lines));
  }
  lines.clear();
  wake_.notify_one();
}

void access_log::reopen() {
  if (path_ == "-") return;
  shared_->generation.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    reopen_ = true;
  }
  wake_.notify_one();
}

void access_log::reopen_in_child() {
  std::uint32_t g = shared_->generation.load(std::memory_order_relaxed);
  if (g == seen_generation_ || path_ == "-") return;
  seen_generation_ = g;
  int fd = open_file();
  if (fd < 0) return;  // keep writing to the old file
  ::close(fd_);
  fd_ = fd;
}

namespace {

// Writes `data` until all of it is written or a write fails; returns 0, or
// the errno of the failure. `data` is left holding what was not written.
int write_fully(int fd, std::string_view& data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n < 0 ? errno : EIO;  // 0 bytes for a non-empty write: no progress either
    }
  }
  return 0;
}

std::uint64_t count_lines(std::string_view text) {
  return static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

// A failed write cuts the line it was in (a disk has room for the first
// part of a write, then none), so the next bytes written would be appended
// to a line without its end. The writer thread is the only one to write
// this file, so it keeps the rest of that line (rest_, at most one line)
// and writes it before anything else once writing works again: the line is
// then whole, only late, and nothing is lost from it. That is cleaner than
// ending the fragment with a '\n', which would leave a broken line for
// every reader to skip. A child of the process modes cannot: other children
// append to the same file in between, and it may exit first. It marks the
// file as ending mid-line instead, the line is counted as lost, and
// whichever process writes next starts with '\n', so the fragment is a line
// of its own and the lines after it are whole.
//
// Then, if lines were lost, "#" lines say how many, before the next lines
// (where the gap is); then `data`.
void access_log::write_all(std::string_view data) {
  int error = end_cut_line();
  if (error == 0) {
    if (std::uint64_t n = shared_->lost.exchange(0, std::memory_order_relaxed); n != 0) {
      int why = shared_->lost_error.load(std::memory_order_relaxed);
      put_result r = put(note(n, std::generic_category().message(why)));
      error = r.error;
      if (r.lines_lost != 0) shared_->lost.fetch_add(n, std::memory_order_relaxed);
    }
  }
  if (error == 0 && overflowed_ != 0) {
    put_result r = put(note(overflowed_, "the log could not keep up"));
    error = r.error;
    if (r.lines_lost == 0) overflowed_ = 0;  // written, or its end kept in rest_
  }
  std::uint64_t lost = count_lines(data);
  if (error == 0) {
    put_result r = put(data);
    error = r.error;
    lost = r.lines_lost;
  }
  if (error != 0) {
    failed(error, lost);
    return;
  }
  if (shared_->failing.load(std::memory_order_relaxed))
    shared_->failing.store(false, std::memory_order_relaxed);
}

int access_log::end_cut_line() {
  if (!rest_.empty()) {
    std::string_view left = rest_;
    int error = write_fully(fd_, left);
    rest_.erase(0, rest_.size() - left.size());
    return error;
  }
  if (shared_->mid_line.exchange(false, std::memory_order_relaxed)) {
    std::string_view left = "\n";
    int error = write_fully(fd_, left);
    if (error != 0) shared_->mid_line.store(true, std::memory_order_relaxed);
    return error;
  }
  return 0;
}

access_log::put_result access_log::put(std::string_view text) {
  std::string_view left = text;
  int error = write_fully(fd_, left);
  if (error == 0) return {};
  std::uint64_t cut = 0;
  std::size_t written = text.size() - left.size();
  if (written != 0 && text[written - 1] != '\n') {
    std::size_t end = left.find('\n') + 1;  // text is whole lines
    if (::getpid() == owner_) {
      rest_.assign(left.substr(0, end));
    } else {
      shared_->mid_line.store(true, std::memory_order_relaxed);
      cut = 1;
    }
    left.remove_prefix(end);
  }
  return {error, cut + count_lines(left)};
}

std::string access_log::note(std::uint64_t lines, std::string_view why) const {
  std::string out = format_ == access_log_format::json ? "{\"dropped\":" : "# ";
  append_decimal(out, lines);
  if (format_ == access_log_format::json) {
    out += ",\"why\":\"";
    append_json_escaped(out, why);
    out += "\"}\n";
  } else {
    out += " lines dropped: ";
    out += why;
    out += '\n';
  }
  return out;
}

void access_log::failed(int error, std::uint64_t lines) {
  shared_->lost.fetch_add(lines, std::memory_order_relaxed);
  shared_->lost_error.store(error, std::memory_order_relaxed);
  // Once until a write works again. On the writer thread (or a child of the
  // process modes, serving its one connection): no loop waits for this.
  if (!shared_->failing.exchange(true, std::memory_order_relaxed))
    lines_.say(log_level::error,
               "cannot write access log %s: %s; lines are dropped until it can be "
               "written again, then a line in it says how many",
               path_.c_str(), std::generic_category().message(error).c_str());
}

void access_log::run() {
  std::vector<std::string> batch;
  for (;;) {
    bool reopen = false;
    bool stop = false;
    std::size_t dropped = 0;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || reopen_ || !queue_.empty(); });
      // queued_bytes_ keeps counting the batch taken until it is written:
      // what waits for the disk is the queue and the batch both.
      batch.swap(queue_);
      reopen = reopen_;
      reopen_ = false;
      stop = stop_;
      dropped = dropped_;
      dropped_ = 0;
    }
    if (reopen) {
      int fd = open_file();
      if (fd >= 0) {
        if (!rest_.empty()) {
          // The cut line belongs to the old file: finish it there, or lose it.
          std::string_view left = rest_;
          if (write_fully(fd_, left) != 0) shared_->lost.fetch_add(1, std::memory_order_relaxed);
          rest_.clear();
        }
        ::close(fd_);
        fd_ = fd;
        seen_generation_ = shared_->generation.load(std::memory_order_relaxed);
      } else {
        lines_.say(log_level::error, "cannot reopen access log %s; still writing the old file",
                   path_.c_str());
      }
    }
    for (auto& b : batch) {
      write_all(b);
      std::lock_guard lock(mutex_);
      queued_bytes_ -= b.size();
    }
    batch.clear();
    if (dropped != 0) {
      overflowed_ += dropped;
      write_all({});  // the "#" line, after the lines that were queued before them
    }
    if (stop) {
      std::lock_guard lock(mutex_);
      if (queue_.empty()) return;
    }
  }
}

// ---- access_log_buffer -------------------------------------------------------------

access_log_buffer::access_log_buffer(access_log& sink, boost::asio::io_context& io)
    : sink_(sink), timer_(io) {}

access_log_buffer::~access_log_buffer() { flush(); }

void access_log::format(std::string& out, const access_record& r) const {
  if (format_ == access_log_format::json)
    format_access_json(out, r);
  else
    format_access_line(out, r);
}

void access_log_buffer::add(const access_record& r) {
  sink_.format(lines_, r);
  ++count_;
  if (lines_.size() >= flush_bytes) {
    flush();
    return;
  }
  if (!armed_) {
    // At most one timer operation per interval, none while the log is quiet.
    armed_ = true;
    timer_.expires_after(flush_interval);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      armed_ = false;
      if (!ec) flush();
    });
  }
}

void access_log_buffer::finish() {
  flush();
  timer_.cancel();
}

void access_log_buffer::flush() {
  sink_.submit(lines_, count_);
  count_ = 0;
}

}  // namespace rapidrpc::detail

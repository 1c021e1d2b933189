// The access log: line format and escaping, the writer, re-opening, writes
// the file refuses.
#include "access/access_log.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace rapidrpc::detail {
namespace {

access_record record() {
  access_record r;
  // 2024-05-01T12:00:00.000042Z
  r.when = std::chrono::system_clock::time_point(std::chrono::seconds(1714564800) +
                                                 std::chrono::microseconds(42));
  r.peer = "127.0.0.1:40312";
  r.user = "alice";
  r.method = "sample.add";
  r.status = 200;
  r.fault = 0;
  r.request_bytes = 198;
  r.response_bytes = 150;
  r.duration = std::chrono::microseconds(37);
  return r;
}

std::string line(const access_record& r) {
  std::string out;
  format_access_line(out, r);
  return out;
}

TEST(AccessLogLine, Fields) {
  EXPECT_EQ(line(record()),
            "2024-05-01T12:00:00.000042Z 127.0.0.1:40312 alice \"sample.add\" 200 0 198 150 37\n");
  auto r = record();
  r.user = {};
  r.method = {};
  r.status = 401;
  r.peer = "[::1]:5";
  r.fault = -32002;
  EXPECT_EQ(line(r), "2024-05-01T12:00:00.000042Z [::1]:5 - - 401 -32002 198 150 37\n");
}

TEST(AccessLogLine, HostileNamesAreEscapedSoNoLineCanBeForged) {
  auto r = record();
  r.method = "a\"b c\\d\ne\rf\x01\x7f\xc3\xa9";
  r.user = "x y\n";
  std::string l = line(r);
  EXPECT_EQ(l,
            "2024-05-01T12:00:00.000042Z 127.0.0.1:40312 x\\x20y\\x0a "
            "\"a\\x22b\\x20c\\x5cd\\x0ae\\x0df\\x01\\x7f\\xc3\\xa9\" 200 0 198 150 37\n");
  // One line, nine space-separated fields.
  EXPECT_EQ(l.find('\n'), l.size() - 1);
  std::istringstream fields(l);
  std::string f;
  int n = 0;
  while (fields >> f) ++n;
  EXPECT_EQ(n, 9);
}

std::string json_line(const access_record& r) {
  std::string out;
  format_access_json(out, r);
  return out;
}

TEST(AccessLogJson, Fields) {
  EXPECT_EQ(json_line(record()),
            "{\"time\":\"2024-05-01T12:00:00.000042Z\",\"peer\":\"127.0.0.1:40312\","
            "\"user\":\"alice\",\"method\":\"sample.add\",\"status\":200,\"fault\":0,"
            "\"request_bytes\":198,\"response_bytes\":150,\"microseconds\":37}\n");
  auto r = record();
  r.user = {};
  r.method = {};
  r.status = 401;
  r.fault = -32002;
  EXPECT_NE(json_line(r).find("\"user\":null,\"method\":null,\"status\":401,\"fault\":-32002,"),
            std::string::npos)
      << json_line(r);
}

TEST(AccessLogJson, EveryByteOutsidePrintableAsciiIsEscapedSoEachLineIsJson) {
  auto r = record();
  r.method = "a\"b c\\d\ne\x01\x7f\xc3\xa9";
  const std::string l = json_line(r);
  EXPECT_NE(l.find("\"method\":\"a\\u0022b c\\u005cd\\u000ae\\u0001\\u007f\\u00c3\\u00a9\""),
            std::string::npos)
      << l;
  EXPECT_EQ(l.find('\n'), l.size() - 1);
  for (char c : l) EXPECT_TRUE(static_cast<unsigned char>(c) < 0x80);
}

TEST(AccessLogJson, LongMethodNamesAreCutAndMarked) {
  auto r = record();
  const std::string name(1000, 'm');
  r.method = name;
  EXPECT_NE(json_line(r).find("\"method\":\"" + std::string(max_logged_method, 'm') +
                              "\",\"method_cut\":true,"),
            std::string::npos);
}

TEST(AccessLogLine, LongMethodNamesAreCutAndMarked) {
  auto r = record();
  std::string name(1000, 'm');
  r.method = name;
  std::string l = line(r);
  EXPECT_NE(l.find(" \"" + std::string(max_logged_method, 'm') + "\"... 200 "), std::string::npos)
      << l;
  name.assign(max_logged_method, 'm');
  r.method = name;
  EXPECT_NE(line(r).find(" \"" + name + "\" 200 "), std::string::npos);
  // Cutting happens before escaping: at most 4 bytes per byte kept.
  std::string nasty(1000, '\n');
  r.method = nasty;
  EXPECT_LT(line(r).size(), 100 + 4 * max_logged_method);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class AccessLogFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rapidrpc-access-log-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
    path = dir + "/access.log";
  }
  void TearDown() override {
    std::remove(path.c_str());
    std::remove((path + ".1").c_str());
    ::rmdir(dir.c_str());
  }
  std::string dir, path;
};

TEST_F(AccessLogFile, BufferedLinesReachTheFileInOrder) {
  {
    access_log log(path);
    boost::asio::io_context io;
    {
      access_log_buffer buffer(log, io);
      auto r = record();
      for (int i = 0; i < 1000; ++i) {
        std::string name = "m" + std::to_string(i);
        r.method = name;
        buffer.add(r);
      }
    }  // the buffer hands over what is left; the log writes it before it ends
  }
  std::string text = slurp(path);
  std::istringstream lines(text);
  std::string l;
  int i = 0;
  while (std::getline(lines, l)) {
    EXPECT_NE(l.find(" \"m" + std::to_string(i) + "\" "), std::string::npos) << l;
    ++i;
  }
  EXPECT_EQ(i, 1000);
}

TEST_F(AccessLogFile, TheTimerFlushesAQuietBuffer) {
  access_log log(path);
  boost::asio::io_context io;
  access_log_buffer buffer(log, io);
  buffer.add(record());
  io.run_for(std::chrono::seconds(2));  // the 100 ms timer fires, then nothing is left to run
  // The writer thread has the line; give it a moment to write.
  for (int i = 0; i < 200 && slurp(path).empty(); ++i) ::usleep(10'000);
  EXPECT_EQ(slurp(path), line(record()));
}

TEST_F(AccessLogFile, ReopenStartsANewFileAfterARename) {
  access_log log(path);
  std::string first = "one\n";
  log.submit(first, 1);
  EXPECT_TRUE(first.empty());
  for (int i = 0; i < 200 && slurp(path).empty(); ++i) ::usleep(10'000);
  ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);
  log.reopen();
  std::string second = "two\n";
  log.submit(second, 1);
  for (int i = 0; i < 200 && slurp(path).empty(); ++i) ::usleep(10'000);
  EXPECT_EQ(slurp(path + ".1"), "one\n");
  EXPECT_EQ(slurp(path), "two\n");
}

// Standard error sent to a pipe while it lives, so a test can read it (a
// pipe, not a file: file_size_limit applies to files).
class stderr_capture {
 public:
  stderr_capture() {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
    read_end_ = fds[0];
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
  }
  ~stderr_capture() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    if (read_end_ >= 0) ::close(read_end_);
  }
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;
  /// What was written so far.
  std::string text() {
    std::fflush(stderr);
    char buf[4096];
    ssize_t n = 0;
    while (read_end_ >= 0 && (n = ::read(read_end_, buf, sizeof buf)) > 0)
      text_.append(buf, static_cast<std::size_t>(n));
    return text_;
  }
  /// How many lines so far hold `s`.
  int lines_with(const std::string& s) {
    std::istringstream in(text());
    int n = 0;
    for (std::string l; std::getline(in, l);) n += l.find(s) != std::string::npos;
    return n;
  }

 private:
  int saved_ = -1;
  int read_end_ = -1;
  std::string text_;
};

// Files may grow to `bytes` while it lives (RLIMIT_FSIZE): a write that
// would pass that is cut short, the next one fails with EFBIG, as on a full
// disk, without root.
class file_size_limit {
 public:
  explicit file_size_limit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG, not a signal that kills
    rlimit lower = saved_;
    lower.rlim_cur = bytes;
    ok_ = ::setrlimit(RLIMIT_FSIZE, &lower) == 0;
  }
  ~file_size_limit() { lift(); }
  file_size_limit(const file_size_limit&) = delete;
  file_size_limit& operator=(const file_size_limit&) = delete;
  bool ok() const { return ok_; }
  void lift() {
    if (!ok_) return;
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
    ok_ = false;
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = SIG_DFL;
  bool ok_ = false;
};

bool wait_for(const std::function<bool()>& done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    ::usleep(10'000);
  }
  return done();
}

// /dev/full refuses every write with ENOSPC; the log's path is a symlink to
// it, then a regular file once "space is free" (and the log re-opened).
TEST_F(AccessLogFile, LinesAFullDiskRefusesAreReportedOnceAndCountedInTheLog) {
  ASSERT_EQ(::symlink("/dev/full", path.c_str()), 0);
  stderr_capture err;
  access_log log(path, /*writer_thread=*/false);  // writes in submit(), as a process mode's child
  std::string lines = "a\nb\n";
  log.submit(lines, 2);
  lines = "c\n";
  log.submit(lines, 1);
  EXPECT_EQ(
      err.lines_with("rapidrpc: cannot write access log " + path + ": No space left on device"), 1)
      << err.text();

  ASSERT_EQ(::unlink(path.c_str()), 0);
  log.reopen();
  lines = "d\n";
  log.submit(lines, 1);
  EXPECT_EQ(slurp(path), "# 3 lines dropped: No space left on device\nd\n");

  // A new run of failures after a write that worked is reported again.
  ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/full", path.c_str()), 0);
  log.reopen();
  lines = "e\n";
  log.submit(lines, 1);
  EXPECT_EQ(err.lines_with("cannot write access log"), 2) << err.text();
  ::unlink(path.c_str());
}

TEST_F(AccessLogFile, InTheJsonFormatTheDroppedLineIsJsonToo) {
  ASSERT_EQ(::symlink("/dev/full", path.c_str()), 0);
  stderr_capture err;
  access_log log(path, /*writer_thread=*/false, access_log_format::json);
  std::string lines = "{}\n{}\n";
  log.submit(lines, 2);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  log.reopen();
  lines = "{}\n";
  log.submit(lines, 1);
  EXPECT_EQ(slurp(path), "{\"dropped\":2,\"why\":\"No space left on device\"}\n{}\n");
}

TEST_F(AccessLogFile, TheWriterThreadFinishesALineCutShortBeforeTheNextLines) {
  const std::string one = "first line, whole\n";
  const std::string two = "second line, cut short\n";
  const std::string three = "third line, never begun\n";  // lost with the disk full
  stderr_capture err;
  access_log log(path);
  {
    file_size_limit limit(one.size() + 5);  // room for "secon"
    ASSERT_TRUE(limit.ok());
    std::string lines = one + two + three;
    log.submit(lines, 3);
    ASSERT_TRUE(wait_for([&] { return err.lines_with("cannot write access log") == 1; }))
        << err.text();
    EXPECT_EQ(slurp(path), one + "secon");
  }
  std::string lines = "fourth line\n";
  log.submit(lines, 1);
  const std::string whole = one + two + "# 1 lines dropped: File too large\nfourth line\n";
  EXPECT_TRUE(wait_for([&] { return slurp(path) == whole; })) << slurp(path);
}

TEST_F(AccessLogFile, AfterAChildsLineIsCutShortTheNextLineStartsALineOfItsOwn) {
  const std::string one = "first line, whole\n";
  const std::string two = "second line, cut short\n";
  stderr_capture err;
  access_log log(path, /*writer_thread=*/false);
  {
    file_size_limit limit(one.size() + 5);
    ASSERT_TRUE(limit.ok());
    std::string lines = one + two;
    log.submit(lines, 2);
  }
  EXPECT_EQ(err.lines_with("cannot write access log"), 1) << err.text();
  std::string lines = "third line\n";
  log.submit(lines, 1);
  EXPECT_EQ(slurp(path), one + "secon\n# 1 lines dropped: File too large\nthird line\n");
}

TEST_F(AccessLogFile, AnUnopenableFileThrows) {
  EXPECT_THROW(access_log(dir + "/no/such/dir/log"), std::system_error);
}

}  // namespace
}  // namespace rapidrpc::detail

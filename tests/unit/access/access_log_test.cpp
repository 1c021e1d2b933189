// The access log: line format and escaping, the writer, re-opening.
#include "access/access_log.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <unistd.h>
#include <cstdio>
#include <fstream>
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

TEST_F(AccessLogFile, AnUnopenableFileThrows) {
  EXPECT_THROW(access_log(dir + "/no/such/dir/log"), std::system_error);
}

}  // namespace
}  // namespace rapidrpc::detail

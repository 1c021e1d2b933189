// The server's own lines (src/log/log.hpp): to the sink a program gives,
// whole and without decoration; without one, to standard error as
// "rapidrpc: TEXT", one write a line.
#include "log/log.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace rapidrpc::detail {
namespace {

TEST(Logger, ALineGoesToTheSinkFormattedWithItsLevel) {
  std::vector<std::pair<log_level, std::string>> heard;
  const logger lines([&](log_level level, std::string_view text) {
    heard.emplace_back(level, std::string(text));
  });
  lines.say(log_level::warning, "drain deadline reached; closing %zu connection(s)",
            std::size_t{3});
  const logger copy = lines;  // copies share the sink
  copy.say(log_level::notice, "worker host %s connected, %u at once", "10.0.0.2:4100", 8u);
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(heard[0].first, log_level::warning);
  EXPECT_EQ(heard[0].second, "drain deadline reached; closing 3 connection(s)");
  EXPECT_EQ(heard[1].first, log_level::notice);
  EXPECT_EQ(heard[1].second, "worker host 10.0.0.2:4100 connected, 8 at once");
}

TEST(Logger, ALongLineIsWhole) {
  std::string heard;
  const logger lines([&](log_level, std::string_view text) { heard = text; });
  const std::string long_text(5000, 'x');
  lines.say(log_level::error, "cannot start worker %s: %s", long_text.c_str(), "No such file");
  EXPECT_EQ(heard, "cannot start worker " + long_text + ": No such file");
}

TEST(Logger, WithoutASinkALineGoesToStandardErrorPrefixed) {
  std::FILE* captured = std::tmpfile();
  ASSERT_NE(captured, nullptr);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(captured), STDERR_FILENO);
  logger{}.say(log_level::error, "worker process %d died from signal %d", 42, 9);
  logger{log_sink{}}.say(log_level::notice, "an empty sink is no sink");
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text(256, '\0');
  std::rewind(captured);
  text.resize(std::fread(text.data(), 1, text.size(), captured));
  std::fclose(captured);
  EXPECT_EQ(text,
            "rapidrpc: worker process 42 died from signal 9\n"
            "rapidrpc: an empty sink is no sink\n");
}

}  // namespace
}  // namespace rapidrpc::detail

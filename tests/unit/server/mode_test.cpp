// Serving-mode names: mode_name() and parse_mode() are each other's inverse,
// and parse_mode() takes exactly the names rapidrpcd's --mode documents.
#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace rapidrpc {
namespace {

constexpr serving_mode every_mode[] = {serving_mode::async_pool, serving_mode::async,
                                       serving_mode::sequential, serving_mode::fork,
                                       serving_mode::prefork};

TEST(ModeName, ParsesEveryModesName) {
  for (auto m : every_mode) {
    auto parsed = parse_mode(mode_name(m));
    ASSERT_TRUE(parsed.has_value()) << mode_name(m);
    EXPECT_EQ(*parsed, m) << mode_name(m);
  }
}

TEST(ModeName, NamesAreTheDocumentedOnes) {
  EXPECT_EQ(parse_mode("async-pool"), serving_mode::async_pool);
  EXPECT_EQ(parse_mode("async"), serving_mode::async);
  EXPECT_EQ(parse_mode("sequential"), serving_mode::sequential);
  EXPECT_EQ(parse_mode("fork"), serving_mode::fork);
  EXPECT_EQ(parse_mode("prefork"), serving_mode::prefork);
}

TEST(ModeName, RejectsAnythingElse) {
  for (std::string bad : {"", "unknown", "async_pool", "Async", "PREFORK", " fork", "fork ",
                          "async-", "async-pool\n", "threads", "pre-fork"})
    EXPECT_EQ(parse_mode(bad), std::nullopt) << '"' << bad << '"';
  // A name with an embedded NUL is not the name before it.
  EXPECT_EQ(parse_mode(std::string_view("fork\0x", 6)), std::nullopt);
}

}  // namespace
}  // namespace rapidrpc

// The admin listener's routes, without a socket.
#include "server/admin.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rapidrpc::detail {
namespace {

TEST(AdminRoutes, MetricsHealthAndReadiness) {
  std::string why;
  admin_listener admin("test", {[](std::string& out) { out += "x 1\n"; }, [&why] { return why; }});
  auto metrics = admin.route("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics.body, "x 1\n");
  EXPECT_EQ(admin.route("GET", "/healthz").status, 200);
  EXPECT_EQ(admin.route("GET", "/readyz").body, "ready\n");
  why = "draining";
  auto ready = admin.route("GET", "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready: draining\n");
  EXPECT_EQ(admin.route("GET", "/healthz").status, 200);  // it still serves
  EXPECT_EQ(admin.route("HEAD", "/metrics").status, 200);
  EXPECT_EQ(admin.route("", "/metrics").status, 405);
  EXPECT_EQ(admin.route("GET", "/").status, 404);
  EXPECT_EQ(admin.route("GET", "/RPC2").status, 404);
}

}  // namespace
}  // namespace rapidrpc::detail

// The library's access features end to end: an in-process server with
// users, an authorizer and an access log, called by rapidrpc::client.
#include <rapidrpc/client.hpp>
#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t lines_in(const std::string& path) {
  std::string text = slurp(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

bool wait_until(const std::function<bool()>& ok) {
  for (int i = 0; i < 500; ++i) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ok();
}

struct seen_call {
  std::string method;
  std::string address;
  std::uint16_t port;
  std::string user;
};

class ServerAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rapidrpc-server-access-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
    log = dir + "/access.log";

    server_options o;
    o.listen.host = "127.0.0.1";
    o.listen.port = 0;
    o.serving.threads = 1;
    o.workers.count = 1;
    o.access.users = {{"alice", hash_password("pw", 1000)}, {"bob", hash_password("bob's", 1000)}};
    o.access.authorize = [this](std::string_view method, const call_peer* peer) {
      std::lock_guard lock(mutex);
      seen.push_back({std::string(method), peer ? peer->address.to_string() : "",
                      peer ? peer->port : std::uint16_t{0}, peer ? std::string(peer->user) : ""});
      // Only alice may call "secret".
      return method != "secret" || (peer != nullptr && peer->user == "alice");
    };
    o.log.access_log = log;
    srv = std::make_unique<server>(o);
    srv->add("secret", [] { return 42; });
    srv->add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
    srv->start();
  }
  void TearDown() override {
    srv.reset();
    std::remove(log.c_str());
    std::remove((log + ".1").c_str());
    ::rmdir(dir.c_str());
  }
  std::string url(std::string_view credentials) {
    return "http://" + std::string(credentials) + "@127.0.0.1:" + std::to_string(srv->port()) +
           "/RPC2";
  }

  std::string dir, log;
  std::unique_ptr<server> srv;
  std::mutex mutex;
  std::vector<seen_call> seen;
};

TEST_F(ServerAccess, TheAuthorizerSeesTheAuthenticatedUserAndThePeer) {
  client alice(url("alice:pw"));
  EXPECT_EQ(alice.call<std::int32_t>("secret"), 42);
  client bob(url("bob:bob's"));
  EXPECT_EQ(bob.call<std::int32_t>("add", 2, 3), 5);
  auto refused = bob.try_call("secret");
  ASSERT_TRUE(std::holds_alternative<fault>(refused));
  EXPECT_EQ(std::get<fault>(refused).code(), fault_code::not_authorized);

  std::lock_guard lock(mutex);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].method, "secret");
  EXPECT_EQ(seen[0].user, "alice");
  EXPECT_EQ(seen[0].address, "127.0.0.1");
  EXPECT_NE(seen[0].port, 0);
  EXPECT_EQ(seen[1].user, "bob");
  EXPECT_EQ(seen[2].user, "bob");
}

TEST_F(ServerAccess, MulticallEntriesAreAuthorizedOneByOne) {
  client bob(url("bob:bob's"));
  auto out = bob.multicall({{"add", {1, 1}}, {"secret", {}}, {"add", {2, 2}}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(std::get<value>(out[0]), value(2));
  ASSERT_TRUE(std::holds_alternative<fault>(out[1]));
  EXPECT_EQ(std::get<fault>(out[1]).code(), fault_code::not_authorized);
  EXPECT_EQ(std::get<value>(out[2]), value(4));
  std::lock_guard lock(mutex);
  std::vector<std::string> methods;
  for (const auto& s : seen) methods.push_back(s.method);
  EXPECT_EQ(methods, (std::vector<std::string>{"system.multicall", "add", "secret", "add"}));
}

int status_of_call(client& c) {
  try {
    c.call("add", {1, 2});
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), transport_error::reason::http_status) << e.what();
    return e.http_status();
  }
  ADD_FAILURE() << "the call was answered";
  return 0;
}

TEST_F(ServerAccess, WrongCredentialsNeverReachTheAuthorizer) {
  client mallory(url("alice:wrong"));
  EXPECT_EQ(status_of_call(mallory), 401);
  client nobody(url("nobody:pw"));
  EXPECT_EQ(status_of_call(nobody), 401);
  std::lock_guard lock(mutex);
  EXPECT_TRUE(seen.empty());
}

TEST_F(ServerAccess, ReopenLogsStartsANewFileAfterARename) {
  client alice(url("alice:pw"));
  alice.call("add", {1, 2});
  ASSERT_TRUE(wait_until([&] { return lines_in(log) == 1; })) << slurp(log);
  ASSERT_EQ(std::rename(log.c_str(), (log + ".1").c_str()), 0);
  srv->reopen_logs();
  // The reopen is asynchronous: call until a line lands in the new file.
  ASSERT_TRUE(wait_until([&] {
    alice.call("add", {2, 2});
    return lines_in(log) >= 1;
  }));
  EXPECT_EQ(lines_in(log + ".1"), 1u);
  EXPECT_NE(slurp(log + ".1").find(" alice \"add\" 200 0 "), std::string::npos)
      << slurp(log + ".1");
}

}  // namespace
}  // namespace rapidrpc

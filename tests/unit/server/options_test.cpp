// options_refusal(): the one check of server_options' combinations, group by
// group, that server::start() and rapidrpcd make. One table: each row a
// combination and the sentence that refuses it; then the combinations beside
// them that pass, and the names a namer gives.
#include <rapidrpc/server_options.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc {
namespace {

// Z85 keys as zmq_curve_keypair() writes them (any 40 characters of Z85).
const std::string key_a = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
const std::string key_b = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";

struct row {
  const char* what;
  std::function<void(server_options&)> set;
  const char* says;  // with the fields' names; empty: accepted
};

const std::vector<row>& table() {
  static const std::vector<row> rows = {
      // workers
      {"isolate outside async-pool",
       [](auto& o) {
         o.workers.isolate = true;
         o.workers.command = {"w"};
         o.serving.mode = serving_mode::fork;
       },
       "workers.isolate (worker processes) needs serving.mode async-pool, not fork"},
      {"isolate without a command", [](auto& o) { o.workers.isolate = true; },
       "workers.isolate needs a workers.command, the command that starts one worker"},
      {"a command without isolate", [](auto& o) { o.workers.command = {"w"}; },
       "workers.command is used with workers.isolate only"},
      {"max requests without isolate", [](auto& o) { o.workers.max_requests = 5; },
       "workers.max_requests is used with workers.isolate only"},
      {"a lifetime without isolate",
       [](auto& o) { o.workers.max_lifetime = std::chrono::seconds(60); },
       "workers.max_lifetime is used with workers.isolate only"},
      {"a memory limit without isolate", [](auto& o) { o.workers.max_memory_bytes = 1 << 30; },
       "workers.max_memory_bytes is used with workers.isolate only"},
      {"a warm parent without isolate", [](auto& o) { o.workers.warm_parent = true; },
       "workers.warm_parent is used with workers.isolate only"},
      {"jitter without max requests",
       [](auto& o) {
         o.workers.isolate = true;
         o.workers.command = {"w"};
         o.workers.max_requests_jitter = 5;
       },
       "workers.max_requests_jitter is used with workers.max_requests only"},
      {"a negative lifetime",
       [](auto& o) {
         o.workers.isolate = true;
         o.workers.command = {"w"};
         o.workers.max_lifetime = std::chrono::seconds(-1);
       },
       "workers.max_lifetime is negative"},
      {"back-off outside prefork",
       [](auto& o) { o.serving.respawn_backoff = std::chrono::milliseconds(25); },
       "serving.respawn_backoff and serving.respawn_backoff_max are used with serving.mode prefork "
       "only, not async-pool"},
      {"back-off maximum outside prefork",
       [](auto& o) {
         o.serving.mode = serving_mode::fork;
         o.serving.respawn_backoff_max = std::chrono::seconds(1);
       },
       "serving.respawn_backoff and serving.respawn_backoff_max are used with serving.mode prefork "
       "only, not fork"},
      {"back-off in prefork",
       [](auto& o) {
         o.serving.mode = serving_mode::prefork;
         o.serving.respawn_backoff = std::chrono::milliseconds(25);
       },
       ""},
      {"isolate with a command and max requests",
       [](auto& o) {
         o.workers.isolate = true;
         o.workers.command = {"w"};
         o.workers.max_requests = 5;
       },
       ""},
      {"isolate with every recycling limit",
       [](auto& o) {
         o.workers.isolate = true;
         o.workers.command = {"w"};
         o.workers.max_requests = 5;
         o.workers.max_requests_jitter = 5;
         o.workers.max_lifetime = std::chrono::seconds(60);
         o.workers.max_memory_bytes = 1 << 30;
       },
       ""},
      // relay
      {"relay with isolate",
       [](auto& o) {
         o.relay.socket = "/r";
         o.workers.isolate = true;
         o.workers.command = {"w"};
       },
       "relay.socket answers no call itself: it does not go with workers.isolate"},
      {"relay with zmq",
       [](auto& o) {
         o.relay.socket = "/r";
         o.zmq.endpoints = {"tcp://127.0.0.1:*"};
       },
       "relay.socket answers no call itself: it does not go with zmq.endpoints"},
      {"relay on a front",
       [](auto& o) {
         o.relay.socket = "/r";
         o.worker_hosts.listen = {"tcp://127.0.0.1:*"};
       },
       "relay.socket answers no call itself: it does not go with worker_hosts.listen"},
      {"relay on a host",
       [](auto& o) {
         o.relay.socket = "/r";
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
       },
       "relay.socket answers no call itself: it does not go with worker_hosts.connect"},
      {"relay outside async-pool",
       [](auto& o) {
         o.relay.socket = "/r";
         o.serving.mode = serving_mode::sequential;
       },
       "relay.socket needs serving.mode async-pool, not sequential"},
      {"keep pid without relay", [](auto& o) { o.relay.keep_pid = 1; },
       "relay.keep_pid is used with relay.socket only"},
      {"relay keeping a pid",
       [](auto& o) {
         o.relay.socket = "/r";
         o.relay.keep_pid = 1;
       },
       ""},
      // worker hosts
      {"a front outside async-pool",
       [](auto& o) {
         o.worker_hosts.listen = {"tcp://127.0.0.1:*"};
         o.serving.mode = serving_mode::async;
       },
       "worker hosts (worker_hosts.listen, worker_hosts.connect) need serving.mode async-pool, not "
       "async"},
      {"a front and a host",
       [](auto& o) {
         o.worker_hosts.listen = {"tcp://127.0.0.1:*"};
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
       },
       "worker_hosts.listen and worker_hosts.connect do not go together"},
      {"public keys without a secret key",
       [](auto& o) {
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
         o.worker_hosts.curve.front_public_key = key_b;
       },
       "worker_hosts.curve.front_public_key and worker_hosts.curve.host_public_keys need "
       "worker_hosts.curve.secret_key"},
      {"a secret key without worker hosts",
       [](auto& o) { o.worker_hosts.curve.secret_key = key_a; },
       "worker_hosts.curve.secret_key is used with worker_hosts.listen or worker_hosts.connect "
       "only"},
      {"a front without its hosts' keys",
       [](auto& o) {
         o.worker_hosts.listen = {"tcp://127.0.0.1:*"};
         o.worker_hosts.curve.secret_key = key_a;
       },
       "worker_hosts.curve.secret_key on a front needs worker_hosts.curve.host_public_keys"},
      {"a front given a front's key",
       [](auto& o) {
         o.worker_hosts.listen = {"tcp://127.0.0.1:*"};
         o.worker_hosts.curve = {key_a, key_b, {key_b}};
       },
       "worker_hosts.curve.front_public_key is used on a worker host (worker_hosts.connect) only"},
      {"a host without the front's key",
       [](auto& o) {
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
         o.worker_hosts.curve.secret_key = key_a;
       },
       "worker_hosts.curve.secret_key on a worker host needs worker_hosts.curve.front_public_key"},
      {"a host given hosts' keys",
       [](auto& o) {
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
         o.worker_hosts.curve = {key_a, key_b, {key_b}};
       },
       "worker_hosts.curve.host_public_keys is used on a front (worker_hosts.listen) only"},
      {"a secret key that is no key",
       [](auto& o) {
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
         o.worker_hosts.curve = {"short", key_b, {}};
       },
       "worker_hosts.curve.secret_key is not a CurveZMQ key"},
      {"a front's key that is no key",
       [](auto& o) {
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
         o.worker_hosts.curve = {key_a, std::string(40, ' '), {}};
       },
       "worker_hosts.curve.front_public_key is not a CurveZMQ key"},
      {"a host's key that is no key",
       [](auto& o) {
         o.worker_hosts.listen = {"tcp://127.0.0.1:*"};
         o.worker_hosts.curve = {key_a, "", {key_b, "x"}};
       },
       "worker_hosts.curve.host_public_keys: \"x\" is not a CurveZMQ key"},
      {"a front with keys",
       [](auto& o) {
         o.worker_hosts.listen = {"tcp://127.0.0.1:*"};
         o.worker_hosts.curve = {key_a, "", {key_b}};
       },
       ""},
      {"a host with keys",
       [](auto& o) {
         o.worker_hosts.connect = "tcp://127.0.0.1:1";
         o.worker_hosts.curve = {key_a, key_b, {}};
       },
       ""},
      // zmq
      {"zmq in a process mode",
       [](auto& o) {
         o.zmq.endpoints = {"tcp://127.0.0.1:*"};
         o.serving.mode = serving_mode::prefork;
       },
       "ZeroMQ endpoints (zmq.endpoints) need serving.mode async-pool or async, not prefork"},
      {"zmq with passwords",
       [](auto& o) {
         o.zmq.endpoints = {"tcp://127.0.0.1:*"};
         o.access.users = parse_users("alice:" + hash_password("secret", 1000));
       },
       "ZeroMQ endpoints (zmq.endpoints) carry no credentials"},
      {"zmq in async",
       [](auto& o) {
         o.zmq.endpoints = {"tcp://127.0.0.1:*"};
         o.serving.mode = serving_mode::async;
       },
       ""},
      // admin
      {"an admin address without a port", [](auto& o) { o.admin.address = "127.0.0.1"; },
       "admin.address: \"127.0.0.1\" is not HOST:PORT"},
      {"an admin port that is no number", [](auto& o) { o.admin.address = "[::1]:9x"; },
       "admin.address: \"[::1]:9x\" is not HOST:PORT"},
      {"an IPv6 admin address", [](auto& o) { o.admin.address = "[::1]:9100"; }, ""},
  };
  return rows;
}

TEST(OptionsRefusal, TheDefaultsPass) {
  EXPECT_EQ(options_refusal(server_options{}), std::nullopt);
}

TEST(OptionsRefusal, EachRowIsRefusedWithItsSentenceOrPasses) {
  for (const auto& r : table()) {
    server_options o;
    r.set(o);
    const auto why = options_refusal(o);
    if (*r.says == '\0') {
      EXPECT_EQ(why, std::nullopt) << r.what;
    } else {
      ASSERT_TRUE(why.has_value()) << r.what;
      EXPECT_NE(why->find(r.says), std::string::npos) << r.what << ": " << *why;
    }
  }
}

TEST(OptionsRefusal, TheNamerNamesEveryOptionItMentions) {
  // rapidrpcd's flags stand where the fields' names stood: no field's name
  // is left in a sentence.
  const option_namer upper = [](std::string_view field) {
    std::string out = "<";
    for (char c : field) out += c == '.' ? '/' : static_cast<char>(c - 32 * (c >= 'a' && c <= 'z'));
    return out + ">";
  };
  for (const auto& r : table()) {
    if (*r.says == '\0') continue;
    server_options o;
    r.set(o);
    const auto why = options_refusal(o, upper);
    ASSERT_TRUE(why.has_value()) << r.what;
    for (const char* group :
         {"serving.", "workers.", "relay.", "zmq.", "worker_hosts.", "access.", "admin."})
      EXPECT_EQ(why->find(group), std::string::npos) << r.what << ": " << *why;
  }
}

}  // namespace
}  // namespace rapidrpc

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
         o.isolate = true;
         o.worker_command = {"w"};
         o.mode = serving_mode::fork;
       },
       "isolate (worker processes) needs mode async-pool, not fork"},
      {"isolate without a command", [](auto& o) { o.isolate = true; },
       "isolate needs a worker_command, the command that starts one worker"},
      {"a command without isolate", [](auto& o) { o.worker_command = {"w"}; },
       "worker_command is used with isolate only"},
      {"max requests without isolate", [](auto& o) { o.worker_max_requests = 5; },
       "worker_max_requests is used with isolate only"},
      {"back-off outside prefork",
       [](auto& o) { o.respawn_backoff = std::chrono::milliseconds(25); },
       "respawn_backoff and respawn_backoff_max are used with mode prefork only, not async-pool"},
      {"back-off maximum outside prefork",
       [](auto& o) {
         o.mode = serving_mode::fork;
         o.respawn_backoff_max = std::chrono::seconds(1);
       },
       "respawn_backoff and respawn_backoff_max are used with mode prefork only, not fork"},
      {"back-off in prefork",
       [](auto& o) {
         o.mode = serving_mode::prefork;
         o.respawn_backoff = std::chrono::milliseconds(25);
       },
       ""},
      {"isolate with a command and max requests",
       [](auto& o) {
         o.isolate = true;
         o.worker_command = {"w"};
         o.worker_max_requests = 5;
       },
       ""},
      // relay
      {"relay with isolate",
       [](auto& o) {
         o.relay = "/r";
         o.isolate = true;
         o.worker_command = {"w"};
       },
       "relay answers no call itself: it does not go with isolate"},
      {"relay with zmq",
       [](auto& o) {
         o.relay = "/r";
         o.zmq = {"tcp://127.0.0.1:*"};
       },
       "relay answers no call itself: it does not go with zmq"},
      {"relay on a front",
       [](auto& o) {
         o.relay = "/r";
         o.worker_listen = {"tcp://127.0.0.1:*"};
       },
       "relay answers no call itself: it does not go with worker_listen"},
      {"relay on a host",
       [](auto& o) {
         o.relay = "/r";
         o.worker_connect = "tcp://127.0.0.1:1";
       },
       "relay answers no call itself: it does not go with worker_connect"},
      {"relay outside async-pool",
       [](auto& o) {
         o.relay = "/r";
         o.mode = serving_mode::sequential;
       },
       "relay needs mode async-pool, not sequential"},
      {"keep pid without relay", [](auto& o) { o.relay_keep_pid = 1; },
       "relay_keep_pid is used with relay only"},
      {"relay keeping a pid",
       [](auto& o) {
         o.relay = "/r";
         o.relay_keep_pid = 1;
       },
       ""},
      // worker hosts
      {"a front outside async-pool",
       [](auto& o) {
         o.worker_listen = {"tcp://127.0.0.1:*"};
         o.mode = serving_mode::async;
       },
       "worker hosts (worker_listen, worker_connect) need mode async-pool, not async"},
      {"a front and a host",
       [](auto& o) {
         o.worker_listen = {"tcp://127.0.0.1:*"};
         o.worker_connect = "tcp://127.0.0.1:1";
       },
       "worker_listen and worker_connect do not go together"},
      {"public keys without a secret key",
       [](auto& o) {
         o.worker_connect = "tcp://127.0.0.1:1";
         o.worker_curve.front_public_key = key_b;
       },
       "worker_curve.front_public_key and worker_curve.host_public_keys need "
       "worker_curve.secret_key"},
      {"a secret key without worker hosts", [](auto& o) { o.worker_curve.secret_key = key_a; },
       "worker_curve.secret_key is used with worker_listen or worker_connect only"},
      {"a front without its hosts' keys",
       [](auto& o) {
         o.worker_listen = {"tcp://127.0.0.1:*"};
         o.worker_curve.secret_key = key_a;
       },
       "worker_curve.secret_key on a front needs worker_curve.host_public_keys"},
      {"a front given a front's key",
       [](auto& o) {
         o.worker_listen = {"tcp://127.0.0.1:*"};
         o.worker_curve = {key_a, key_b, {key_b}};
       },
       "worker_curve.front_public_key is used on a worker host (worker_connect) only"},
      {"a host without the front's key",
       [](auto& o) {
         o.worker_connect = "tcp://127.0.0.1:1";
         o.worker_curve.secret_key = key_a;
       },
       "worker_curve.secret_key on a worker host needs worker_curve.front_public_key"},
      {"a host given hosts' keys",
       [](auto& o) {
         o.worker_connect = "tcp://127.0.0.1:1";
         o.worker_curve = {key_a, key_b, {key_b}};
       },
       "worker_curve.host_public_keys is used on a front (worker_listen) only"},
      {"a secret key that is no key",
       [](auto& o) {
         o.worker_connect = "tcp://127.0.0.1:1";
         o.worker_curve = {"short", key_b, {}};
       },
       "worker_curve.secret_key is not a CurveZMQ key"},
      {"a front's key that is no key",
       [](auto& o) {
         o.worker_connect = "tcp://127.0.0.1:1";
         o.worker_curve = {key_a, std::string(40, ' '), {}};
       },
       "worker_curve.front_public_key is not a CurveZMQ key"},
      {"a host's key that is no key",
       [](auto& o) {
         o.worker_listen = {"tcp://127.0.0.1:*"};
         o.worker_curve = {key_a, "", {key_b, "x"}};
       },
       "worker_curve.host_public_keys: \"x\" is not a CurveZMQ key"},
      {"a front with keys",
       [](auto& o) {
         o.worker_listen = {"tcp://127.0.0.1:*"};
         o.worker_curve = {key_a, "", {key_b}};
       },
       ""},
      {"a host with keys",
       [](auto& o) {
         o.worker_connect = "tcp://127.0.0.1:1";
         o.worker_curve = {key_a, key_b, {}};
       },
       ""},
      // zmq
      {"zmq in a process mode",
       [](auto& o) {
         o.zmq = {"tcp://127.0.0.1:*"};
         o.mode = serving_mode::prefork;
       },
       "ZeroMQ endpoints (zmq) need mode async-pool or async, not prefork"},
      {"zmq with passwords",
       [](auto& o) {
         o.zmq = {"tcp://127.0.0.1:*"};
         o.users = parse_users("alice:" + hash_password("secret", 1000));
       },
       "ZeroMQ endpoints (zmq) carry no credentials"},
      {"zmq in async",
       [](auto& o) {
         o.zmq = {"tcp://127.0.0.1:*"};
         o.mode = serving_mode::async;
       },
       ""},
      // admin
      {"an admin address without a port", [](auto& o) { o.admin = "127.0.0.1"; },
       "admin: \"127.0.0.1\" is not HOST:PORT"},
      {"an admin port that is no number", [](auto& o) { o.admin = "[::1]:9x"; },
       "admin: \"[::1]:9x\" is not HOST:PORT"},
      {"an IPv6 admin address", [](auto& o) { o.admin = "[::1]:9100"; }, ""},
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
    for (const char* field : {"isolate", "worker_command", "worker_max_requests", "respawn_backoff",
                              "relay", "relay_keep_pid", "worker_listen", "worker_connect",
                              "worker_curve", "zmq", "users", "admin", "mode "})
      EXPECT_EQ(why->find(field), std::string::npos) << r.what << ": " << *why;
  }
}

}  // namespace
}  // namespace rapidrpc

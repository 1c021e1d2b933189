// server_options: the modes' names and the one check of the options'
// combinations (options_refusal), group by group.
#include <rapidrpc/server_options.hpp>

#include "server/listen.hpp"

#include <zmq.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace rapidrpc {

std::string_view mode_name(serving_mode m) noexcept {
  switch (m) {
    case serving_mode::async_pool:
      return "async-pool";
    case serving_mode::async:
      return "async";
    case serving_mode::sequential:
      return "sequential";
    case serving_mode::fork:
      return "fork";
    case serving_mode::prefork:
      return "prefork";
  }
  return "unknown";
}

std::optional<serving_mode> parse_mode(std::string_view name) noexcept {
  for (auto m : {serving_mode::async_pool, serving_mode::async, serving_mode::sequential,
                 serving_mode::fork, serving_mode::prefork})
    if (mode_name(m) == name) return m;
  return std::nullopt;
}

unsigned count_or_cores(unsigned n) noexcept {
  return n != 0 ? n : std::max(1u, std::thread::hardware_concurrency());
}

namespace {

using refusal = std::optional<std::string>;

// One group's check: the options, and how to name a field.
struct check_context {
  const server_options& o;
  const option_namer& namer;

  std::string operator()(std::string_view field) const {
    return namer ? namer(field) : std::string(field);
  }
  // "MODE_FIELD async-pool, not fork".
  std::string mode_is(std::string_view wanted) const {
    return (*this)("mode") + " " + std::string(wanted) + ", not " + std::string(mode_name(o.mode));
  }
};

// isolate, worker_command, worker_max_requests; the respawn back-off.
refusal check_workers(const check_context& n) {
  const auto& o = n.o;
  if (o.isolate && o.mode != serving_mode::async_pool)
    return n("isolate") + " (worker processes) needs " + n.mode_is("async-pool");
  if (o.isolate && o.worker_command.empty())
    return n("isolate") + " needs a " + n("worker_command") +
           ", the command that starts one worker";
  if (!o.isolate && !o.worker_command.empty())
    return n("worker_command") + " is used with " + n("isolate") + " only";
  if (!o.isolate && o.worker_max_requests != 0)
    return n("worker_max_requests") + " is used with " + n("isolate") + " only";
  if (o.mode != serving_mode::prefork &&
      (o.respawn_backoff != server_options{}.respawn_backoff ||
       o.respawn_backoff_max != server_options{}.respawn_backoff_max))
    return n("respawn_backoff") + " and " + n("respawn_backoff_max") + " are used with " +
           n.mode_is("prefork only");
  return std::nullopt;
}

// relay, relay_keep_pid.
refusal check_relay(const check_context& n) {
  const auto& o = n.o;
  if (o.relay.empty()) {
    if (o.relay_keep_pid != 0) return n("relay_keep_pid") + " is used with " + n("relay") + " only";
    return std::nullopt;
  }
  std::string other;
  if (o.isolate)
    other = n("isolate");
  else if (!o.zmq.empty())
    other = n("zmq");
  else if (!o.worker_listen.empty())
    other = n("worker_listen");
  else if (!o.worker_connect.empty())
    other = n("worker_connect");
  if (!other.empty()) return n("relay") + " answers no call itself: it does not go with " + other;
  if (o.mode != serving_mode::async_pool) return n("relay") + " needs " + n.mode_is("async-pool");
  return std::nullopt;
}

// A CurveZMQ key as zmq_curve_keypair() writes it: 40 characters of Z85.
bool is_curve_key(const std::string& key) {
  std::array<std::uint8_t, 32> binary{};
  return key.size() == 40 && zmq_z85_decode(binary.data(), key.c_str()) != nullptr;
}

// worker_listen, worker_connect, worker_curve.
refusal check_worker_hosts(const check_context& n) {
  const auto& o = n.o;
  const bool front = !o.worker_listen.empty();
  const bool host = !o.worker_connect.empty();
  if ((front || host) && o.mode != serving_mode::async_pool)
    return "worker hosts (" + n("worker_listen") + ", " + n("worker_connect") + ") need " +
           n.mode_is("async-pool");
  if (front && host)
    return n("worker_listen") + " and " + n("worker_connect") +
           " do not go together: a server is a front of worker hosts or a worker host, not both";
  const auto& curve = o.worker_curve;
  const std::string secret = n("worker_curve.secret_key");
  const std::string front_key = n("worker_curve.front_public_key");
  const std::string host_keys = n("worker_curve.host_public_keys");
  if (curve.secret_key.empty()) {
    if (!curve.front_public_key.empty() || !curve.host_public_keys.empty())
      return front_key + " and " + host_keys + " need " + secret;
    return std::nullopt;
  }
  if (!front && !host)
    return secret + " is used with " + n("worker_listen") + " or " + n("worker_connect") + " only";
  if (front && curve.host_public_keys.empty())
    return secret + " on a front needs " + host_keys + ": the public keys of its hosts";
  if (front && !curve.front_public_key.empty())
    return front_key + " is used on a worker host (" + n("worker_connect") + ") only";
  if (host && curve.front_public_key.empty())
    return secret + " on a worker host needs " + front_key;
  if (host && !curve.host_public_keys.empty())
    return host_keys + " is used on a front (" + n("worker_listen") + ") only";
  const auto not_a_key = [](std::string what) {
    return what.append(" is not a CurveZMQ key (40 characters of Z85)");
  };
  if (!is_curve_key(curve.secret_key)) return not_a_key(secret);
  if (host && !is_curve_key(curve.front_public_key)) return not_a_key(front_key);
  for (const auto& key : curve.host_public_keys)
    if (!is_curve_key(key))
      return not_a_key(std::string(host_keys).append(": \"").append(key) + '"');
  return std::nullopt;
}

// zmq.
refusal check_zmq(const check_context& n) {
  const auto& o = n.o;
  if (o.zmq.empty()) return std::nullopt;
  if (o.mode != serving_mode::async_pool && o.mode != serving_mode::async)
    return "ZeroMQ endpoints (" + n("zmq") + ") need " + n.mode_is("async-pool or async");
  if (!o.users.empty())
    return "ZeroMQ endpoints (" + n("zmq") +
           ") carry no credentials: they cannot be combined with password authentication (" +
           n("users") + ")";
  return std::nullopt;
}

// admin.
refusal check_admin(const check_context& n) {
  if (n.o.admin.empty()) return std::nullopt;
  try {
    detail::split_host_port(n.o.admin);
  } catch (const std::invalid_argument&) {
    return n("admin") + ": \"" + n.o.admin +
           "\" is not HOST:PORT (say 127.0.0.1:9100 or [::1]:9100)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> options_refusal(const server_options& options,
                                           const option_namer& name) {
  const check_context context{options, name};
  for (auto check : {check_workers, check_relay, check_worker_hosts, check_zmq, check_admin})
    if (auto why = check(context)) return why;
  return std::nullopt;
}

}  // namespace rapidrpc

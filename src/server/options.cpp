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
    return (*this)("serving.mode") + " " + std::string(wanted) + ", not " +
           std::string(mode_name(o.serving.mode));
  }
};

// serving: the respawn back-off.
refusal check_serving(const check_context& n) {
  const auto& s = n.o.serving;
  if (s.mode != serving_mode::prefork &&
      (s.respawn_backoff != serving_options{}.respawn_backoff ||
       s.respawn_backoff_max != serving_options{}.respawn_backoff_max))
    return n("serving.respawn_backoff") + " and " + n("serving.respawn_backoff_max") +
           " are used with " + n.mode_is("prefork only");
  return std::nullopt;
}

// workers: isolate, command, recycling.
refusal check_workers(const check_context& n) {
  const auto& w = n.o.workers;
  if (w.isolate && n.o.serving.mode != serving_mode::async_pool)
    return n("workers.isolate") + " (worker processes) needs " + n.mode_is("async-pool");
  if (w.isolate && w.command.empty())
    return n("workers.isolate") + " needs a " + n("workers.command") +
           ", the command that starts one worker";
  if (!w.isolate && !w.command.empty())
    return n("workers.command") + " is used with " + n("workers.isolate") + " only";
  if (!w.isolate && w.warm_parent)
    return n("workers.warm_parent") + " is used with " + n("workers.isolate") + " only";
  if (!w.isolate && w.max_requests != 0)
    return n("workers.max_requests") + " is used with " + n("workers.isolate") + " only";
  if (!w.isolate && w.max_lifetime.count() != 0)
    return n("workers.max_lifetime") + " is used with " + n("workers.isolate") + " only";
  if (!w.isolate && w.max_memory_bytes != 0)
    return n("workers.max_memory_bytes") + " is used with " + n("workers.isolate") + " only";
  if (w.max_requests_jitter != 0 && w.max_requests == 0)
    return n("workers.max_requests_jitter") + " is used with " + n("workers.max_requests") +
           " only";
  if (w.max_lifetime.count() < 0) return n("workers.max_lifetime") + " is negative";
  return std::nullopt;
}

// relay: socket, keep_pid.
refusal check_relay(const check_context& n) {
  const auto& o = n.o;
  if (o.relay.socket.empty()) {
    if (o.relay.keep_pid != 0)
      return n("relay.keep_pid") + " is used with " + n("relay.socket") + " only";
    return std::nullopt;
  }
  std::string other;
  if (o.workers.isolate)
    other = n("workers.isolate");
  else if (!o.zmq.endpoints.empty())
    other = n("zmq.endpoints");
  else if (!o.worker_hosts.listen.empty())
    other = n("worker_hosts.listen");
  else if (!o.worker_hosts.connect.empty())
    other = n("worker_hosts.connect");
  if (!other.empty())
    return n("relay.socket") + " answers no call itself: it does not go with " + other;
  if (o.serving.mode != serving_mode::async_pool)
    return n("relay.socket") + " needs " + n.mode_is("async-pool");
  return std::nullopt;
}

// A CurveZMQ key as zmq_curve_keypair() writes it: 40 characters of Z85.
bool is_curve_key(const std::string& key) {
  std::array<std::uint8_t, 32> binary{};
  return key.size() == 40 && zmq_z85_decode(binary.data(), key.c_str()) != nullptr;
}

// worker_hosts: listen, connect, curve.
refusal check_worker_hosts(const check_context& n) {
  const auto& h = n.o.worker_hosts;
  const bool front = !h.listen.empty();
  const bool host = !h.connect.empty();
  const std::string listen = n("worker_hosts.listen");
  const std::string connect = n("worker_hosts.connect");
  if ((front || host) && n.o.serving.mode != serving_mode::async_pool)
    return "worker hosts (" + listen + ", " + connect + ") need " + n.mode_is("async-pool");
  if (front && host)
    return listen + " and " + connect +
           " do not go together: a server is a front of worker hosts or a worker host, not both";
  const auto& curve = h.curve;
  const std::string secret = n("worker_hosts.curve.secret_key");
  const std::string front_key = n("worker_hosts.curve.front_public_key");
  const std::string host_keys = n("worker_hosts.curve.host_public_keys");
  if (curve.secret_key.empty()) {
    if (!curve.front_public_key.empty() || !curve.host_public_keys.empty())
      return front_key + " and " + host_keys + " need " + secret;
    return std::nullopt;
  }
  if (!front && !host) return secret + " is used with " + listen + " or " + connect + " only";
  if (front && curve.host_public_keys.empty())
    return secret + " on a front needs " + host_keys + ": the public keys of its hosts";
  if (front && !curve.front_public_key.empty())
    return front_key + " is used on a worker host (" + connect + ") only";
  if (host && curve.front_public_key.empty())
    return secret + " on a worker host needs " + front_key;
  if (host && !curve.host_public_keys.empty())
    return host_keys + " is used on a front (" + listen + ") only";
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

// zmq: endpoints.
refusal check_zmq(const check_context& n) {
  const auto& o = n.o;
  if (o.zmq.endpoints.empty()) return std::nullopt;
  const std::string endpoints = n("zmq.endpoints");
  if (o.serving.mode != serving_mode::async_pool && o.serving.mode != serving_mode::async)
    return "ZeroMQ endpoints (" + endpoints + ") need " + n.mode_is("async-pool or async");
  if (!o.access.users.empty())
    return "ZeroMQ endpoints (" + endpoints +
           ") carry no credentials: they cannot be combined with password authentication (" +
           n("access.users") + ")";
  return std::nullopt;
}

// admin: address.
refusal check_admin(const check_context& n) {
  const auto& address = n.o.admin.address;
  if (address.empty()) return std::nullopt;
  try {
    detail::split_host_port(address);
  } catch (const std::invalid_argument&) {
    return n("admin.address") + ": \"" + address +
           "\" is not HOST:PORT (say 127.0.0.1:9100 or [::1]:9100)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> options_refusal(const server_options& options,
                                           const option_namer& name) {
  const check_context context{options, name};
  for (auto check :
       {check_workers, check_serving, check_relay, check_worker_hosts, check_zmq, check_admin})
    if (auto why = check(context)) return why;
  return std::nullopt;
}

}  // namespace rapidrpc

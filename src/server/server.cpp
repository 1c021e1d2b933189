#include <rapidrpc/server.hpp>

#include <rapidrpc/localhost.hpp>

#include "access/access.hpp"
#include "http/response.hpp"
#include "metrics/metrics.hpp"
#include "server/admin.hpp"
#include "server/connection.hpp"
#include "server/loop.hpp"
#include "server/process_modes.hpp"
#include "server/tls.hpp"
#include "server/watchdog.hpp"
#include "service/service.hpp"
#include "worker/remote_pool.hpp"
#include "worker/worker_link.hpp"
#include "worker/worker_pool.hpp"
#include "zmq/router.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>

#include <zmq.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <system_error>

namespace rapidrpc {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace detail {
namespace {

// The threads that run pool methods (async-pool without --isolate), as a
// service: they run the calls of the loops and endpoints started after
// them, so stopping changes nothing, and join() lets the calls running end.
class thread_pool_service final : public service {
 public:
  explicit thread_pool_service(net::thread_pool& pool) : pool_(pool) {}
  void start() override {}  // its threads run from its construction
  void stop(std::chrono::milliseconds /*drain*/) override {}
  void join() override {
    pool_.stop();
    pool_.join();
  }

 private:
  net::thread_pool& pool_;
};

}  // namespace
}  // namespace detail

struct server::impl {
  server_options options;
  rapidrpc::registry methods;
  detail::shared_state shared;
  // Before the loops: they refer to these.
  std::unique_ptr<detail::tls::context> tls;  // HTTPS; outlives the loops' connections
  std::unique_ptr<detail::access_policy> access;
  std::unique_ptr<detail::access_log> log;
  std::unique_ptr<net::thread_pool> pool;
  std::unique_ptr<detail::thread_pool_service> pool_service;
  std::vector<std::unique_ptr<detail::loop>> loops;
  std::unique_ptr<detail::process_supervisor> supervisor;  // fork and prefork
  std::unique_ptr<detail::pool_runner> runner;             // watchdog or worker processes
  std::unique_ptr<detail::zmq_router> zmq;                 // after runner and pool: they post to it
  std::unique_ptr<detail::worker_link> link;               // likewise (worker_connect)
  detail::remote_pool* remote = nullptr;                   // the runner, with worker_listen
  std::vector<std::string> worker_bound;
  std::vector<tcp::endpoint> bound;
  std::vector<std::string> zmq_bound;
  // Metrics and the admin listener (server_options::metrics, admin). The
  // store is made before the loops (they take their shards from it) and
  // outlives everything that counts; the admin listener stops last.
  std::unique_ptr<detail::metrics::store> metrics;
  std::unique_ptr<detail::admin_listener> admin;
  std::vector<tcp::endpoint> admin_bound;
  std::vector<int> listening;        // listening_descriptors()
  std::vector<int> admin_listening;  // admin_descriptors()
  // What runs on a thread or process of its own, in start order
  // (docs/design.md, "Start and stop"); joined in the reverse order.
  detail::service_list services;
  std::mutex mutex;
  bool started = false;
  bool stopping = false;
  bool joined = false;
  // For ready(), read from any thread.
  std::atomic<bool> serving{false};

  std::string not_ready() const {
    if (stopping_seen()) return "draining";
    if (!serving.load(std::memory_order_acquire)) return "starting";
    if (metrics && metrics->pool().processes_up.load(std::memory_order_relaxed) == 0)
      return "no worker process is up";
    if (metrics && options.workers == 0 &&
        metrics->pool().hosts_up.load(std::memory_order_relaxed) == 0)
      return "no worker host is connected";
    return {};
  }
  bool stopping_seen() const { return draining.load(std::memory_order_acquire); }
  std::atomic<bool> draining{false};

  // start() failed after building the loops: undo it, nothing runs yet.
  void abandon_start() {
    services = detail::service_list{};
    admin.reset();
    admin_bound.clear();
    listening.clear();
    admin_listening.clear();
    zmq.reset();
    zmq_bound.clear();
    link.reset();
    remote = nullptr;
    worker_bound.clear();
    loops.clear();
    pool_service.reset();
    pool.reset();
    supervisor.reset();
    runner.reset();
    shared.log = nullptr;
    log.reset();
    shared.metrics = nullptr;
    shared.pool.stats = nullptr;
    metrics.reset();
    bound.clear();
  }

  // Once the services are joined: each part is destroyed before what it
  // refers to.
  void destroy_all() {
    runner.reset();  // before the loops: its completions post to their io_contexts
    loops.clear();   // destroys connections whose last handlers were never run
    zmq.reset();
    link.reset();
    pool_service.reset();
    pool.reset();
    supervisor.reset();
    admin.reset();
  }

  // The order of docs/design.md, "Start and stop": the admin listener first
  // (it answers, "starting" and then "draining", while the rest starts and
  // drains), then what runs pool calls, then what takes requests.
  void list_services() {
    if (admin) services.add(*admin);
    if (pool) {
      pool_service = std::make_unique<detail::thread_pool_service>(*pool);
      services.add(*pool_service);
    }
    if (remote) services.add(*remote);
    if (supervisor) services.add(*supervisor);
    for (auto& l : loops) services.add(*l);
    if (zmq) services.add(*zmq);
    if (link) services.add(*link);
  }
};

server::server(server_options options) : impl_(std::make_unique<impl>()) {
  impl_->options = std::move(options);
}

server::~server() {
  if (impl_->started && !impl_->joined) {
    stop(std::chrono::milliseconds(0));
    wait();
  }
}

registry& server::methods() noexcept { return impl_->methods; }

namespace {

unsigned or_cores(unsigned n) {
  if (n != 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<tcp::endpoint> resolve(const std::string& host, std::uint16_t port) {
  std::vector<tcp::endpoint> out;
  if (is_localhost(host)) {
    // Always the loopback addresses, whatever /etc/hosts says (or whether
    // there is one): "localhost" must not depend on the resolver.
    out.emplace_back(net::ip::address_v4::loopback(), port);
    out.emplace_back(net::ip::address_v6::loopback(), port);
    return out;
  }
  boost::system::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (!ec) {
    out.emplace_back(address, port);
    return out;
  }
  net::io_context io;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec) throw std::system_error(ec, "cannot resolve host \"" + host + "\"");
  for (const auto& r : results) {
    if (std::find(out.begin(), out.end(), r.endpoint()) == out.end()) out.push_back(r.endpoint());
  }
  // IPv4 first: with port 0 the first address picks the port.
  std::stable_partition(out.begin(), out.end(), [](const auto& e) { return e.address().is_v4(); });
  return out;
}

// Binding with SO_REUSEPORT would silently share a port with another
// server that also set it; a plain bind first makes that an error.
void check_port_free(const tcp::endpoint& ep) {
  net::io_context io;
  tcp::acceptor probe(io);
  detail::bind_acceptor(probe, ep, false);
}

// One descriptor per socket: duplicates (several loops serving one socket
// handed over) share their inode.
std::vector<int> distinct_sockets(const std::vector<int>& fds) {
  std::vector<int> out;
  std::vector<std::pair<dev_t, ino_t>> seen;
  for (int fd : fds) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) continue;
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    seen.push_back(id);
    out.push_back(fd);
  }
  return out;
}

// The admin listener's "HOST:PORT" ("[::1]:9100" for an IPv6 literal).
// Throws std::invalid_argument.
std::pair<std::string, std::uint16_t> split_admin(const std::string& address) {
  const auto colon = address.rfind(':');
  const auto bad = [&address] {
    return std::invalid_argument("admin: \"" + address +
                                 "\" is not HOST:PORT (say 127.0.0.1:9100 or [::1]:9100)");
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) throw bad();
  std::string host = address.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') throw bad();
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  for (char c : address.substr(colon + 1)) {
    if (c < '0' || c > '9') throw bad();
    port = port * 10 + static_cast<unsigned>(c - '0');
    if (port > 65535) throw bad();
  }
  return {host, static_cast<std::uint16_t>(port)};
}

// Throws std::invalid_argument for the combinations of options that start()
// would not honour, before anything is set up.
void refuse_unhonoured(const server_options& o) {
  const auto mode = o.mode;
  if (o.isolate && mode != serving_mode::async_pool)
    throw std::invalid_argument("isolate (worker processes) needs mode async-pool, not " +
                                std::string(mode_name(mode)));
  if (o.isolate && o.worker_command.empty())
    throw std::invalid_argument(
        "isolate needs a worker_command, the command that starts one worker");
  if (!o.isolate && !o.worker_command.empty())
    throw std::invalid_argument("worker_command is used with isolate only");
  if (!o.isolate && o.worker_max_requests != 0)
    throw std::invalid_argument("worker_max_requests is used with isolate only");
  if (mode != serving_mode::prefork &&
      (o.respawn_backoff != server_options{}.respawn_backoff ||
       o.respawn_backoff_max != server_options{}.respawn_backoff_max))
    throw std::invalid_argument(
        "respawn_backoff and respawn_backoff_max are used with mode "
        "prefork only, not " +
        std::string(mode_name(mode)));
  std::vector<int> handed = o.listen_fds;
  handed.insert(handed.end(), o.admin_listen_fds.begin(), o.admin_listen_fds.end());
  for (int fd : handed) {
    const auto option = [fd](int name) {
      int v = -1;
      socklen_t len = sizeof v;
      return ::getsockopt(fd, SOL_SOCKET, name, &v, &len) == 0 ? v : -1;
    };
    const int domain = option(SO_DOMAIN);
    if (option(SO_ACCEPTCONN) != 1 || option(SO_TYPE) != SOCK_STREAM ||
        (domain != AF_INET && domain != AF_INET6))
      throw std::invalid_argument("listen_fds, admin_listen_fds: descriptor " + std::to_string(fd) +
                                  " is not a listening TCP socket");
  }
  if (!o.admin.empty()) split_admin(o.admin);
  if ((!o.worker_listen.empty() || !o.worker_connect.empty()) && mode != serving_mode::async_pool)
    throw std::invalid_argument("worker hosts need mode async-pool, not " +
                                std::string(mode_name(mode)));
  if (!o.worker_listen.empty() && !o.worker_connect.empty())
    throw std::invalid_argument("a server is a front of worker hosts or a worker host, not both");
  if (const auto& curve = o.worker_curve; !curve.secret_key.empty()) {
    const auto check = [](const std::string& key, const char* what) {
      std::array<std::uint8_t, 32> binary{};
      if (key.size() != 40 || zmq_z85_decode(binary.data(), key.c_str()) == nullptr)
        throw std::invalid_argument(std::string("worker_curve: ") + what +
                                    " is not a CurveZMQ key (40 characters of Z85)");
    };
    check(curve.secret_key, "the secret key");
    if (o.worker_listen.empty() && o.worker_connect.empty())
      throw std::invalid_argument("worker_curve needs worker_listen or worker_connect");
    if (!o.worker_listen.empty() && curve.host_public_keys.empty())
      throw std::invalid_argument("worker_curve: a front needs the public keys of its hosts");
    if (!o.worker_connect.empty()) check(curve.front_public_key, "the front's public key");
    for (const auto& key : curve.host_public_keys) check(key, "a host's public key");
  }
  if (!o.relay.empty()) {
    if (mode != serving_mode::async_pool)
      throw std::invalid_argument("relay needs mode async-pool, not " +
                                  std::string(mode_name(mode)));
    if (o.isolate || !o.zmq.empty() || !o.worker_listen.empty() || !o.worker_connect.empty())
      throw std::invalid_argument(
          "relay answers no call itself: not with isolate, zmq, worker_listen or worker_connect");
  }
  if (o.relay.empty() && o.relay_keep_pid != 0)
    throw std::invalid_argument("relay_keep_pid is used with relay only");
  if (!o.zmq.empty()) {
    if (mode != serving_mode::async_pool && mode != serving_mode::async)
      throw std::invalid_argument("ZeroMQ endpoints need mode async-pool or async, not " +
                                  std::string(mode_name(mode)));
    if (!o.users.empty())
      throw std::invalid_argument(
          "ZeroMQ endpoints carry no credentials: they cannot be combined with "
          "password authentication");
  }
}

}  // namespace

void server::start() {
  auto& s = *impl_;
  if (s.started) throw std::logic_error("rapidrpc::server already started");
  refuse_unhonoured(s.options);
  // TLS files first: a bad one fails start() before anything is bound.
  if (s.options.tls.enabled()) {
    s.tls = std::make_unique<detail::tls::context>(s.options.tls);
    s.shared.tls = s.tls.get();
  }
  s.shared.methods = &s.methods;
  s.shared.limits = s.options.limits;
  s.shared.paths = s.options.paths;
  s.shared.jsonrpc = s.options.jsonrpc;
  if (s.options.jsonrpc) s.shared.json_paths = s.options.jsonrpc_paths;
  s.shared.server_name = s.options.server_name;
  s.shared.gzip_min_bytes = s.options.gzip_min_bytes;
  s.shared.relay = {s.options.relay, static_cast<pid_t>(s.options.relay_keep_pid),
                    s.options.method_timeout};
  if (s.options.api_page && s.options.relay.empty())
    s.shared.page = detail::make_api_page(
        s.methods, {s.options.server_name, s.options.jsonrpc, s.options.gzip_min_bytes});
  s.methods.set_multicall_limit(s.options.limits.max_multicall);

  s.methods.set_default_timeout(s.options.method_timeout);
  if (s.options.authorize) s.methods.set_authorizer(s.options.authorize);
  if (!s.options.users.empty() || !s.options.allow.empty()) {
    s.access = std::make_unique<detail::access_policy>(s.options.users, s.options.allow);
    s.shared.access = s.access.get();
  }
  if (!s.options.access_log.empty()) {
    // In the process modes the children write their own lines and the
    // parent writes none: it gets no writer thread, so the children are
    // forked from a process with as few threads as can be.
    const bool children_write =
        s.options.mode == serving_mode::fork || s.options.mode == serving_mode::prefork;
    s.log = std::make_unique<detail::access_log>(s.options.access_log, !children_write,
                                                 s.options.log_format);
    s.shared.log = s.log.get();
  }

  const auto mode = s.options.mode;

  // The mode decides who accepts and where methods run (docs/design.md).
  unsigned threads = or_cores(s.options.threads);
  const bool process_mode = mode == serving_mode::fork || mode == serving_mode::prefork;
  if (mode != serving_mode::async_pool) threads = 1;  // and pool methods run on the loop
  if (mode == serving_mode::sequential) {
    s.shared.max_open_per_loop = 1;
    s.shared.close_after_response = true;
  }
  const bool admin_on = !s.options.admin.empty() || !s.options.admin_listen_fds.empty();
  if (s.options.metrics || admin_on) {
    // Shard 0 is the ZeroMQ endpoint's; then one per loop, or one per
    // process slot of fork and prefork. The registry is read-only from here.
    const std::size_t writers = process_mode ? or_cores(s.options.processes) : threads;
    s.metrics = std::make_unique<detail::metrics::store>(s.methods.names(), 1 + writers);
    s.shared.metrics = s.metrics.get();
    s.shared.pool.stats = &s.metrics->pool();
  }
  if (process_mode) {
    s.shared.process_mode = true;
    // An idle keep-alive client must not hold a whole process for long.
    s.shared.limits.idle_timeout = std::min(s.shared.limits.idle_timeout, std::chrono::seconds(2));
    s.runner = std::make_unique<detail::watchdog::runner>();
    s.shared.pool.runner = s.runner.get();
    s.supervisor = std::make_unique<detail::process_supervisor>(
        s.shared, mode, or_cores(s.options.processes), s.options.respawn_backoff,
        s.options.respawn_backoff_max);
  } else {
    if (mode == serving_mode::async_pool && !s.options.worker_listen.empty()) {
      // The front of worker hosts; its own workers, if any, are one more
      // place for calls to go.
      detail::remote_pool::settings r;
      r.local_capacity = s.options.workers;
      r.stats = s.shared.pool.stats;
      r.curve_secret_key = s.options.worker_curve.secret_key;
      r.curve_host_keys = s.options.worker_curve.host_public_keys;
      if (s.options.workers != 0 && s.options.isolate) {
        r.local_runner = [&o = s.options](detail::metrics::pool_stats* stats) {
          return make_worker_pool(o.worker_command, o.workers, o.worker_max_requests, stats);
        };
      } else if (s.options.workers != 0) {
        s.pool = std::make_unique<net::thread_pool>(s.options.workers);
        r.local_threads = s.pool->get_executor();
      }
      try {
        auto remote = detail::make_remote_pool(std::move(r));
        for (const auto& address : s.options.worker_listen)
          s.worker_bound.push_back(remote->bind(address));
        s.remote = remote.get();
        s.runner = std::move(remote);
      } catch (...) {
        s.abandon_start();
        throw;
      }
      s.shared.pool.runner = s.runner.get();
    } else if (mode == serving_mode::async_pool) {
      if (s.options.isolate) {
        s.runner = make_worker_pool(s.options.worker_command, s.options.workers,
                                    s.options.worker_max_requests, s.shared.pool.stats);
        s.shared.pool.runner = s.runner.get();
      } else {
        s.pool = std::make_unique<net::thread_pool>(or_cores(s.options.workers));
        s.shared.pool.executor = s.pool->get_executor();
      }
    }
    for (unsigned i = 0; i < threads; ++i)
      s.loops.push_back(std::make_unique<detail::loop>(s.shared, 1 + i));
  }

  for (int fd : s.options.listen_fds) {
    try {
      tcp::endpoint ep = s.supervisor ? s.supervisor->adopt(fd) : s.loops.front()->adopt(fd);
      for (std::size_t i = 1; i < s.loops.size(); ++i) s.loops[i]->adopt(fd);
      s.bound.push_back(ep);
    } catch (...) {
      s.abandon_start();
      throw;
    }
  }
  std::vector<tcp::endpoint> endpoints;
  if (s.options.listen_fds.empty()) endpoints = resolve(s.options.host, s.options.port);
  std::uint16_t port = s.options.port;
  std::error_code first_error;
  for (auto ep : endpoints) {
    ep.port(port);
    try {
      if (port != 0) check_port_free(ep);
      // With port 0 the first loop's socket picks the port, the others join it.
      ep = s.supervisor ? s.supervisor->listen(ep) : s.loops.front()->listen(ep);
    } catch (const boost::system::system_error& e) {
      // An address the machine lacks (say ::1 with IPv6 off) is skipped as
      // long as another one works.
      if (!first_error) first_error = e.code();
      continue;
    }
    for (std::size_t i = 1; i < s.loops.size(); ++i) s.loops[i]->listen(ep);
    s.bound.push_back(ep);
    port = ep.port();
  }
  if (s.bound.empty()) {
    s.abandon_start();
    throw std::system_error(
        first_error ? first_error : std::make_error_code(std::errc::address_not_available),
        "cannot listen on " + s.options.host + ":" + std::to_string(s.options.port));
  }
  if (s.supervisor) {
    // Forked now, while this process has no other thread and nothing else
    // open: what the supervisor holds, every child holds (process_modes.hpp).
    try {
      s.supervisor->spawn();
    } catch (...) {
      s.abandon_start();
      throw;
    }
  }
  if (!s.options.zmq.empty()) {
    detail::zmq_router::settings z;
    z.methods = &s.methods;
    z.limits = s.shared.limits;
    z.max_message_bytes = s.options.limits.max_body_bytes;
    z.pool = &s.shared.pool;
    z.access = s.access.get();
    z.log = s.log.get();
    z.metrics = s.metrics.get();
    z.metrics_shard = 0;
    try {
      s.zmq = std::make_unique<detail::zmq_router>(z);
      for (const auto& address : s.options.zmq) s.zmq_bound.push_back(s.zmq->bind(address));
    } catch (...) {
      s.abandon_start();
      throw;
    }
  }
  if (!s.options.worker_connect.empty()) {
    detail::worker_link::settings w;
    w.methods = &s.methods;
    w.limits = s.shared.limits;
    w.pool = &s.shared.pool;
    w.capacity = or_cores(s.options.workers);
    w.front = s.options.worker_connect;
    w.curve_secret_key = s.options.worker_curve.secret_key;
    w.curve_front_key = s.options.worker_curve.front_public_key;
    try {
      s.link = std::make_unique<detail::worker_link>(w);
    } catch (...) {
      s.abandon_start();
      throw;
    }
  }
  if (admin_on) {
    try {
      detail::admin_listener::handlers h;
      h.metrics = [this](std::string& out) { write_metrics(out); };
      h.not_ready = [&s] { return s.not_ready(); };
      s.admin = std::make_unique<detail::admin_listener>(s.options.server_name, std::move(h));
      for (int fd : s.options.admin_listen_fds) s.admin_bound.push_back(s.admin->adopt(fd));
      auto [admin_host, admin_port] = s.options.admin_listen_fds.empty()
                                          ? split_admin(s.options.admin)
                                          : std::pair<std::string, std::uint16_t>{};
      std::error_code admin_error;
      std::vector<tcp::endpoint> admin_endpoints;
      if (s.options.admin_listen_fds.empty()) admin_endpoints = resolve(admin_host, admin_port);
      for (auto ep : admin_endpoints) {
        ep.port(admin_port);
        try {
          ep = s.admin->listen(ep);
        } catch (const boost::system::system_error& e) {
          if (!admin_error) admin_error = e.code();
          continue;
        }
        s.admin_bound.push_back(ep);
        admin_port = ep.port();  // with port 0, the other addresses take the same one
      }
      if (s.admin_bound.empty())
        throw std::system_error(
            admin_error ? admin_error : std::make_error_code(std::errc::address_not_available),
            "cannot listen on the admin address " + s.options.admin);
    } catch (...) {
      s.abandon_start();
      throw;
    }
    s.admin_listening = distinct_sockets(s.admin->listening_fds());
  }
  // Recorded before the threads start: read by listening_descriptors()
  // from any thread, they do not change until stop().
  std::vector<int> rpc_fds;
  if (s.supervisor) rpc_fds = s.supervisor->listening_fds();
  for (const auto& l : s.loops) {
    auto fds = l->listening_fds();
    rpc_fds.insert(rpc_fds.end(), fds.begin(), fds.end());
  }
  s.listening = distinct_sockets(rpc_fds);
  s.list_services();
  try {
    s.services.start();  // /readyz says "starting" until the end of start()
  } catch (...) {
    s.abandon_start();
    throw;
  }
  s.started = true;
  s.serving.store(true, std::memory_order_release);
}

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

std::uint16_t server::port() const {
  return impl_->bound.empty() ? 0 : impl_->bound.front().port();
}

std::vector<std::string> server::zmq_endpoints() const { return impl_->zmq_bound; }

std::vector<std::string> server::worker_endpoints() const { return impl_->worker_bound; }

namespace {
std::vector<std::string> host_ports(const std::vector<tcp::endpoint>& endpoints) {
  std::vector<std::string> out;
  for (const auto& ep : endpoints) {
    auto a = ep.address();
    out.push_back(a.is_v6() ? "[" + a.to_string() + "]:" + std::to_string(ep.port())
                            : a.to_string() + ":" + std::to_string(ep.port()));
  }
  return out;
}
}  // namespace

std::vector<std::string> server::endpoints() const { return host_ports(impl_->bound); }

std::vector<std::string> server::admin_endpoints() const { return host_ports(impl_->admin_bound); }

std::vector<int> server::listening_descriptors() const { return impl_->listening; }

std::vector<int> server::admin_descriptors() const { return impl_->admin_listening; }

void server::write_metrics(std::string& out) const {
  if (impl_->metrics)
    impl_->metrics->write_exposition(out, detail::metrics::read_process_figures());
}

bool server::ready() const { return impl_->not_ready().empty(); }

void server::announce_stop() { impl_->draining.store(true, std::memory_order_release); }

void server::stop(std::chrono::milliseconds drain) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->started || impl_->stopping) return;
  impl_->stopping = true;
  // /readyz says 503 from here on, while the calls in flight finish.
  impl_->draining.store(true, std::memory_order_release);
  impl_->serving.store(false, std::memory_order_release);
  impl_->services.stop(drain);
}

void server::wait() {
  std::unique_lock lock(impl_->mutex);
  if (!impl_->started || impl_->joined) return;
  lock.unlock();
  impl_->services.join();
  lock.lock();
  if (!impl_->joined) {
    impl_->joined = true;
    impl_->destroy_all();
  }
}

void server::reopen_logs() {
  std::lock_guard lock(impl_->mutex);
  if (impl_->log) impl_->log->reopen();
}

void server::run() {
  start();
  wait();
}

}  // namespace rapidrpc

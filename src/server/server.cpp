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
#include <functional>
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

  // start() failed: destroys what it built. Nothing runs: a service list
  // that failed to start has stopped and joined what it started.
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

  bool process_mode() const {
    return options.mode == serving_mode::fork || options.mode == serving_mode::prefork;
  }
  bool admin_on() const { return !options.admin.empty() || !options.admin_listen_fds.empty(); }
  // The steps of start(), in order (defined below).
  void configure();
  void make_runners();
  void bind_listeners();
  void make_zmq();
  void make_link();
  void make_admin(std::function<void(std::string&)> write_metrics);

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
  if (ep.port() == 0) return;  // a port picked by the system is free
  net::io_context io;
  tcp::acceptor probe(io);
  detail::bind_acceptor(probe, ep, false);
}

// Listens on each address of `host` with `listen`, which returns the
// address bound: with port 0 the first picks the port and the others take
// the same one. An address the machine lacks (say ::1 with IPv6 off) is
// skipped as long as another one works; with none, throws `what`.
std::vector<tcp::endpoint> listen_on_each(
    const std::string& host, std::uint16_t port,
    const std::function<tcp::endpoint(const tcp::endpoint&)>& listen, const std::string& what) {
  std::vector<tcp::endpoint> bound;
  std::error_code first_error;
  for (auto ep : resolve(host, port)) {
    ep.port(port);
    try {
      ep = listen(ep);
    } catch (const boost::system::system_error& e) {
      if (!first_error) first_error = e.code();
      continue;
    }
    bound.push_back(ep);
    port = ep.port();
  }
  if (bound.empty())
    throw std::system_error(
        first_error ? first_error : std::make_error_code(std::errc::address_not_available), what);
  return bound;
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

// The shared state every loop reads, and what it points to, from the
// options. TLS files first: a bad one fails start() before anything is bound.
void server::impl::configure() {
  if (options.tls.enabled()) {
    tls = std::make_unique<detail::tls::context>(options.tls);
    shared.tls = tls.get();
  }
  shared.methods = &methods;
  shared.limits = options.limits;
  shared.paths = options.paths;
  shared.jsonrpc = options.jsonrpc;
  if (options.jsonrpc) shared.json_paths = options.jsonrpc_paths;
  shared.server_name = options.server_name;
  shared.gzip_min_bytes = options.gzip_min_bytes;
  shared.relay = {options.relay, static_cast<pid_t>(options.relay_keep_pid),
                  options.method_timeout};
  if (options.api_page && options.relay.empty())
    shared.page = detail::make_api_page(
        methods, {options.server_name, options.jsonrpc, options.gzip_min_bytes});
  methods.set_multicall_limit(options.limits.max_multicall);
  methods.set_default_timeout(options.method_timeout);
  if (options.authorize) methods.set_authorizer(options.authorize);
  if (!options.users.empty() || !options.allow.empty()) {
    access = std::make_unique<detail::access_policy>(options.users, options.allow);
    shared.access = access.get();
  }
  if (!options.access_log.empty()) {
    // In the process modes the children write their own lines and the
    // parent writes none: it gets no writer thread, so the children are
    // forked from a process with as few threads as can be.
    log = std::make_unique<detail::access_log>(options.access_log, !process_mode(),
                                               options.log_format);
    shared.log = log.get();
  }
}

// The mode decides who accepts and where methods run (docs/design.md):
// the loops (one unless async-pool), the metrics store with a shard for
// each writer, and the supervisor or the runner of pool calls.
void server::impl::make_runners() {
  const auto mode = options.mode;
  const unsigned threads = mode == serving_mode::async_pool ? or_cores(options.threads) : 1;
  if (mode == serving_mode::sequential) {
    shared.max_open_per_loop = 1;
    shared.close_after_response = true;
  }
  if (options.metrics || admin_on()) {
    // Shard 0 is the ZeroMQ endpoint's; then one per loop, or one per
    // process slot of fork and prefork. The registry is read-only from here.
    const std::size_t writers = process_mode() ? or_cores(options.processes) : threads;
    metrics = std::make_unique<detail::metrics::store>(methods.names(), 1 + writers);
    shared.metrics = metrics.get();
    shared.pool.stats = &metrics->pool();
  }
  if (process_mode()) {
    shared.process_mode = true;
    // An idle keep-alive client must not hold a whole process for long.
    shared.limits.idle_timeout = std::min(shared.limits.idle_timeout, std::chrono::seconds(2));
    runner = std::make_unique<detail::watchdog::runner>();
    shared.pool.runner = runner.get();
    supervisor = std::make_unique<detail::process_supervisor>(
        shared, mode, or_cores(options.processes), options.respawn_backoff,
        options.respawn_backoff_max);
    return;
  }
  if (mode == serving_mode::async_pool && !options.worker_listen.empty()) {
    // The front of worker hosts; its own workers, if any, are one more
    // place for calls to go.
    detail::remote_pool::settings r;
    r.local_capacity = options.workers;
    r.stats = shared.pool.stats;
    r.curve_secret_key = options.worker_curve.secret_key;
    r.curve_host_keys = options.worker_curve.host_public_keys;
    if (options.workers != 0 && options.isolate) {
      r.local_runner = [&o = options](detail::metrics::pool_stats* stats) {
        return make_worker_pool(o.worker_command, o.workers, o.worker_max_requests, stats);
      };
    } else if (options.workers != 0) {
      pool = std::make_unique<net::thread_pool>(options.workers);
      r.local_threads = pool->get_executor();
    }
    auto front = detail::make_remote_pool(std::move(r));
    for (const auto& address : options.worker_listen) worker_bound.push_back(front->bind(address));
    remote = front.get();
    runner = std::move(front);
    shared.pool.runner = runner.get();
  } else if (mode == serving_mode::async_pool && options.isolate) {
    runner = make_worker_pool(options.worker_command, options.workers, options.worker_max_requests,
                              shared.pool.stats);
    shared.pool.runner = runner.get();
  } else if (mode == serving_mode::async_pool) {
    pool = std::make_unique<net::thread_pool>(or_cores(options.workers));
    shared.pool.executor = pool->get_executor();
  }
  for (unsigned i = 0; i < threads; ++i)
    loops.push_back(std::make_unique<detail::loop>(shared, 1 + i));
}

// The RPC listening sockets: the ones handed over, or one per address of
// the host, in the supervisor (process modes) or in every loop.
void server::impl::bind_listeners() {
  for (int fd : options.listen_fds) {
    tcp::endpoint ep = supervisor ? supervisor->adopt(fd) : loops.front()->adopt(fd);
    for (std::size_t i = 1; i < loops.size(); ++i) loops[i]->adopt(fd);
    bound.push_back(ep);
  }
  if (options.listen_fds.empty()) {
    const auto first = [this](const tcp::endpoint& ep) {
      check_port_free(ep);
      return supervisor ? supervisor->listen(ep) : loops.front()->listen(ep);
    };
    bound = listen_on_each(options.host, options.port, first,
                           "cannot listen on " + options.host + ":" + std::to_string(options.port));
    // The other loops join the first one's sockets (SO_REUSEPORT).
    for (const auto& ep : bound)
      for (std::size_t i = 1; i < loops.size(); ++i) loops[i]->listen(ep);
  }
  std::vector<int> fds;
  if (supervisor) fds = supervisor->listening_fds();
  for (const auto& l : loops) {
    auto more = l->listening_fds();
    fds.insert(fds.end(), more.begin(), more.end());
  }
  listening = distinct_sockets(fds);
}

void server::impl::make_zmq() {
  if (options.zmq.empty()) return;
  detail::zmq_router::settings z;
  z.methods = &methods;
  z.limits = shared.limits;
  z.max_message_bytes = options.limits.max_body_bytes;
  z.pool = &shared.pool;
  z.access = access.get();
  z.log = log.get();
  z.metrics = metrics.get();
  z.metrics_shard = 0;
  zmq = std::make_unique<detail::zmq_router>(z);
  for (const auto& address : options.zmq) zmq_bound.push_back(zmq->bind(address));
}

void server::impl::make_link() {
  if (options.worker_connect.empty()) return;
  detail::worker_link::settings w;
  w.methods = &methods;
  w.limits = shared.limits;
  w.pool = &shared.pool;
  w.capacity = or_cores(options.workers);
  w.front = options.worker_connect;
  w.curve_secret_key = options.worker_curve.secret_key;
  w.curve_front_key = options.worker_curve.front_public_key;
  link = std::make_unique<detail::worker_link>(w);
}

void server::impl::make_admin(std::function<void(std::string&)> write_metrics) {
  if (!admin_on()) return;
  detail::admin_listener::handlers h;
  h.metrics = std::move(write_metrics);
  h.not_ready = [this] { return not_ready(); };
  admin = std::make_unique<detail::admin_listener>(options.server_name, std::move(h));
  for (int fd : options.admin_listen_fds) admin_bound.push_back(admin->adopt(fd));
  if (options.admin_listen_fds.empty()) {
    const auto [host, port] = split_admin(options.admin);
    admin_bound = listen_on_each(
        host, port, [this](const tcp::endpoint& ep) { return admin->listen(ep); },
        "cannot listen on the admin address " + options.admin);
  }
  admin_listening = distinct_sockets(admin->listening_fds());
}

void server::start() {
  auto& s = *impl_;
  if (s.started) throw std::logic_error("rapidrpc::server already started");
  refuse_unhonoured(s.options);
  s.configure();
  try {
    // Built and bound first; nothing runs until the services start.
    s.make_runners();
    s.bind_listeners();
    // Forked now, while this process has no other thread and nothing else
    // open: what the supervisor holds, every child holds (process_modes.hpp).
    if (s.supervisor) s.supervisor->spawn();
    s.make_zmq();
    s.make_link();
    s.make_admin([this](std::string& out) { write_metrics(out); });
    s.list_services();
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

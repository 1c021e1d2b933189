#include <rapidrpc/server.hpp>

#include "access/access.hpp"
#include "metrics/metrics.hpp"
#include "registry/pool.hpp"
#include "server/admin.hpp"
#include "server/listen.hpp"
#include "server/loop.hpp"
#include "server/process_modes.hpp"
#include "server/runners.hpp"
#include "server/tls.hpp"
#include "server/zmq_services.hpp"
#include "service/service.hpp"
#include "worker/remote_pool.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace rapidrpc {

namespace net = boost::asio;
using tcp = net::ip::tcp;

struct server::impl {
  server_options options;
  rapidrpc::registry methods;
  detail::serving_state shared;
  // Before the loops: they refer to these.
  std::unique_ptr<detail::tls::context> tls;  // HTTPS; outlives the loops' connections
  std::unique_ptr<detail::access_policy> access;
  std::unique_ptr<detail::access_log> log;
  detail::pool_runners runners;  // where pool calls run (runners.hpp)
  std::vector<std::unique_ptr<detail::loop>> loops;
  std::unique_ptr<detail::process_supervisor> supervisor;  // fork and prefork
  std::unique_ptr<detail::service> zmq;                    // after the runners: they post to it
  std::unique_ptr<detail::service> link;                   // likewise (worker_hosts.connect)
  // Metrics and the admin listener (server_options::admin). The
  // store is made before the loops (they take their shards from it) and
  // outlives everything that counts; the admin listener stops last.
  std::unique_ptr<detail::metrics::store> metrics;
  std::unique_ptr<detail::service> admin;
  // What runs on a thread or process of its own, in start order
  // (docs/design.md, "Start and stop"); joined in the reverse order.
  detail::service_list services;
  // The caller's io_context the connections are served on, if any.
  net::io_context* external = nullptr;
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
    if (metrics && options.workers.count == 0 &&
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
    zmq.reset();
    link.reset();
    loops.clear();
    supervisor.reset();
    runners.reset();
    shared.log = nullptr;
    log.reset();
    shared.metrics = nullptr;
    metrics.reset();
  }

  // Once the services are joined: each part is destroyed before what it
  // refers to.
  void destroy_all() {
    runners.reset();  // first: the runner's completions post to the loops' io_contexts
    loops.clear();    // destroys connections whose last handlers were never run
    zmq.reset();
    link.reset();
    supervisor.reset();
    admin.reset();
  }

  // The addresses of what takes the HTTP requests: the supervisor's
  // processes, or the loops, which all listen on the first one's; none
  // before start() and after wait().
  std::vector<tcp::endpoint> http_bound() const {
    if (supervisor) return supervisor->bound();
    return loops.empty() ? std::vector<tcp::endpoint>{} : loops.front()->bound();
  }

  bool process_mode() const {
    return options.serving.mode == serving_mode::fork ||
           options.serving.mode == serving_mode::prefork;
  }
  // The API page, of the methods registered now (none: off).
  void make_page() {
    if (options.http.api_page && options.relay.socket.empty())
      shared.page.set(std::make_shared<const detail::api_page>(detail::make_api_page(
          methods, {options.http.server_name, options.http.jsonrpc, options.http.gzip_min_bytes})));
  }

  // The steps of start(), in order (defined below).
  void configure();
  std::optional<std::string> external_refusal() const;
  void make_runners();
  void bind_listeners();

  // The order of docs/design.md, "Start and stop": the admin listener first
  // (it answers, "starting" and then "draining", while the rest starts and
  // drains), then what runs pool calls, then what takes requests.
  //
  // On a caller's io_context the loop comes last: nothing started after it
  // can fail, since a loop started there (its accepts queued) could only be
  // joined, after a failed start, by the caller running the io_context.
  void list_services() {
    if (admin) services.add(*admin);
    runners.add_services(services);
    if (supervisor) services.add(*supervisor);
    if (external == nullptr)
      for (auto& l : loops) services.add(*l);
    if (zmq) services.add(*zmq);
    if (link) services.add(*link);
    if (external != nullptr)
      for (auto& l : loops) services.add(*l);
  }
};

server::server(server_options options) : impl_(std::make_unique<impl>()) {
  impl_->options = std::move(options);
}

server::server(net::io_context& io, server_options options) : server(std::move(options)) {
  impl_->external = &io;
}

server::~server() {
  if (impl_->started && !impl_->joined) {
    stop(std::chrono::milliseconds(0));
    wait();
  }
}

registry& server::methods() noexcept { return impl_->methods; }

// The shared state every loop reads, and what it points to, from the
// options. TLS files first: a bad one fails start() before anything is bound.
void server::impl::configure() {
  shared.lines = detail::logger(options.log.lines);
  if (options.tls.enabled()) {
    tls = std::make_unique<detail::tls::context>(options.tls);
    shared.tls = tls.get();
  }
  shared.methods = &methods;
  shared.limits = options.limits;
  shared.paths = options.http.paths;
  shared.jsonrpc = options.http.jsonrpc;
  if (options.http.jsonrpc) shared.json_paths = options.http.jsonrpc_paths;
  shared.server_name = options.http.server_name;
  shared.gzip_min_bytes = options.http.gzip_min_bytes;
  shared.relay = {options.relay.socket, static_cast<pid_t>(options.relay.keep_pid),
                  options.workers.method_timeout, shared.lines};
  make_page();
  methods.set_multicall_limit(options.limits.max_multicall);
  methods.set_default_timeout(options.workers.method_timeout);
  if (options.access.authorize) methods.set_authorizer(options.access.authorize);
  if (!options.access.users.empty() || !options.access.allow.empty()) {
    access = std::make_unique<detail::access_policy>(options.access.users, options.access.allow);
    shared.access = access.get();
  }
  if (!options.log.access_log.empty()) {
    // In the process modes the children write their own lines and the
    // parent writes none: it gets no writer thread, so the children are
    // forked from a process with as few threads as can be.
    log = std::make_unique<detail::access_log>(options.log.access_log, !process_mode(),
                                               options.log.format, shared.lines);
    shared.log = log.get();
  }
}

// The mode decides who accepts and where methods run (docs/design.md):
// the loops (one unless async-pool), the metrics store with a shard for
// each writer, the supervisor of the process modes, and where pool calls
// run (runners.hpp).
void server::impl::make_runners() {
  const auto mode = options.serving.mode;
  const unsigned threads = mode == serving_mode::async_pool && external == nullptr
                               ? count_or_cores(options.serving.threads)
                               : 1;
  if (mode == serving_mode::sequential) {
    shared.max_open_per_loop = 1;
    shared.close_after_response = true;
  }
  if (options.admin.metrics || detail::admin_wanted(options.admin)) {
    // Shard 0 is the ZeroMQ endpoint's; then one per loop, or one per
    // process slot of fork and prefork. The registry is read-only from here.
    const std::size_t writers =
        process_mode() ? count_or_cores(options.serving.processes) : threads;
    metrics = std::make_unique<detail::metrics::store>(methods.names(), 1 + writers);
    shared.metrics = metrics.get();
  }
  runners = detail::make_pool_runners(options, shared);
  if (process_mode()) {
    shared.process_mode = true;
    // An idle keep-alive client must not hold a whole process for long.
    shared.limits.idle_timeout = std::min(shared.limits.idle_timeout, std::chrono::seconds(2));
    supervisor = std::make_unique<detail::process_supervisor>(
        shared, mode, count_or_cores(options.serving.processes),
        detail::respawn_rule{1, options.serving.respawn_backoff,
                             options.serving.respawn_backoff_max});
    return;
  }
  for (unsigned i = 0; i < threads; ++i)
    loops.push_back(std::make_unique<detail::loop>(shared, 1 + i, external));
}

// A server on a caller's io_context serves there alone, from one thread.
std::optional<std::string> server::impl::external_refusal() const {
  if (external == nullptr) return std::nullopt;
  if (options.serving.mode != serving_mode::async_pool)
    return "a server on a caller's io_context serves in async_pool mode only";
  if (options.serving.threads > 1)
    return "a server on a caller's io_context serves on it alone: serving.threads must be 0 or 1";
  // (The scheduler's hint, as the io_context was made with it: Asio has no
  // public reader of it.)
  const int hint = net::use_service<net::detail::scheduler>(*external).concurrency_hint();
  if (hint > 1)
    return "a server on a caller's io_context needs it run by one thread at a time; this one was "
           "made for " +
           std::to_string(hint) + " threads";
  return std::nullopt;
}

// The RPC listening sockets: the ones handed over, or one per address of
// the host, in the supervisor (process modes) or in every loop.
void server::impl::bind_listeners() {
  for (int fd : options.listen.fds) {
    if (supervisor) supervisor->adopt(fd);
    for (const auto& l : loops) l->adopt(fd);
  }
  if (options.listen.fds.empty()) {
    const auto first = [this](const tcp::endpoint& ep) {
      detail::check_port_free(ep);
      return supervisor ? supervisor->listen(ep) : loops.front()->listen(ep);
    };
    const auto bound = detail::listen_on_each(
        options.listen.host, options.listen.port, first,
        "cannot listen on " + options.listen.host + ":" + std::to_string(options.listen.port));
    // The other loops join the first one's sockets (SO_REUSEPORT).
    for (const auto& ep : bound)
      for (std::size_t i = 1; i < loops.size(); ++i) loops[i]->listen(ep);
  }
}

void server::start() {
  auto& s = *impl_;
  if (s.started) throw std::logic_error("rapidrpc::server already started");
  if (auto why = options_refusal(s.options)) throw std::invalid_argument(*why);
  if (auto why = s.external_refusal()) throw std::invalid_argument(*why);
  for (int fd : s.options.listen.fds) detail::check_listening_tcp(fd);
  for (int fd : s.options.admin.listen_fds) detail::check_listening_tcp(fd);
  s.configure();
  try {
    // Built and bound first; nothing runs until the services start.
    s.make_runners();
    s.bind_listeners();
    // Forked now, while this process has no other thread and nothing else
    // open: what the supervisor holds, every child holds (process_modes.hpp).
    if (s.supervisor) s.supervisor->spawn();
    const auto& o = s.options;
    s.zmq = detail::make_zmq_endpoint(o.zmq, s.methods, s.shared);
    s.link = detail::make_worker_link(o.worker_hosts, o.workers.count, s.methods, s.shared);
    s.admin = detail::make_admin_listener(
        o.admin, o.http.server_name,
        {[this](std::string& out) { write_metrics(out); }, [&s] { return s.not_ready(); }});
    s.list_services();
    s.services.start();  // /readyz says "starting" until the end of start()
  } catch (...) {
    s.abandon_start();
    throw;
  }
  s.started = true;
  s.serving.store(true, std::memory_order_release);
}

std::uint16_t server::port() const {
  const auto bound = impl_->http_bound();
  return bound.empty() ? 0 : bound.front().port();
}

std::vector<std::string> server::zmq_endpoints() const {
  return impl_->zmq ? impl_->zmq->endpoints() : std::vector<std::string>{};
}

std::vector<std::string> server::worker_endpoints() const {
  return impl_->runners.front != nullptr ? impl_->runners.front->endpoints()
                                         : std::vector<std::string>{};
}

std::vector<std::string> server::endpoints() const {
  return detail::host_ports(impl_->http_bound());
}

std::vector<std::string> server::admin_endpoints() const {
  return impl_->admin ? impl_->admin->endpoints() : std::vector<std::string>{};
}

std::vector<int> server::listening_descriptors() const {
  std::vector<int> fds;
  if (impl_->supervisor) fds = impl_->supervisor->listening_descriptors();
  for (const auto& l : impl_->loops) {
    auto more = l->listening_descriptors();
    fds.insert(fds.end(), more.begin(), more.end());
  }
  return detail::distinct_sockets(fds);
}

std::vector<int> server::admin_descriptors() const {
  return impl_->admin ? impl_->admin->listening_descriptors() : std::vector<int>{};
}

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
  if (impl_->external != nullptr && impl_->external->get_executor().running_in_this_thread())
    throw std::logic_error(
        "rapidrpc::server::wait() on the thread that runs its io_context would never return");
  lock.unlock();
  impl_->services.join();
  lock.lock();
  if (!impl_->joined) {
    impl_->joined = true;
    impl_->destroy_all();
  }
}

bool server::reload_workers(method_table methods, std::function<void(bool)> done) {
  std::lock_guard lock(impl_->mutex);
  auto* runner = impl_->runners.runner.get();
  if (!impl_->started || impl_->stopping || runner == nullptr || impl_->runners.front != nullptr)
    return false;
  auto table = std::make_shared<method_table>(std::move(methods));
  return runner->renew([s = impl_.get(), table, done = std::move(done)](bool renewed) {
    if (renewed) {
      s->methods.reload(std::move(*table));
      s->make_page();
    }
    if (done) done(renewed);
  });
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

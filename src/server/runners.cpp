#include "server/runners.hpp"

#include "registry/pool.hpp"
#include "server/watchdog.hpp"
#include "worker/remote_pool.hpp"
#include "worker/worker_pool.hpp"

namespace rapidrpc::detail {

namespace net = boost::asio;

namespace {

std::unique_ptr<pool_runner> worker_processes(const server_options& o, unsigned count,
                                              metrics::pool_stats* stats, const logger& lines) {
  return make_worker_pool(o.workers, count, stats, worker_start_timeout, lines);
}

}  // namespace

pool_threads::pool_threads(unsigned count)
    : count_(count), io_(static_cast<int>(count)), work_(io_.get_executor()) {}

pool_threads::~pool_threads() { join(); }

void pool_threads::start() {
  try {
    while (threads_.size() < count_) threads_.emplace_back([this] { io_.run(); });
  } catch (...) {
    join();
    throw;
  }
}

void pool_threads::join() {
  work_.reset();
  io_.stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

pool_runners::pool_runners() = default;
pool_runners::~pool_runners() { reset(); }
pool_runners::pool_runners(pool_runners&&) noexcept = default;
pool_runners& pool_runners::operator=(pool_runners&&) noexcept = default;

void pool_runners::add_services(service_list& services) {
  if (threads) services.add(*threads);
  if (front != nullptr) services.add(*front);
}

void pool_runners::reset() {
  runner.reset();
  front = nullptr;
  threads.reset();
}

pool_runners make_pool_runners(const server_options& o, serving_state& shared) {
  pool_runners out;
  auto& pool = shared.pool;
  // The pool's figures, which a scrape reads; none without metrics.
  metrics::pool_stats* figures = shared.metrics != nullptr ? &shared.metrics->pool() : nullptr;
  if (o.serving.mode == serving_mode::fork || o.serving.mode == serving_mode::prefork) {
    // Every method inline in the child, bounded by the watchdog.
    out.runner = std::make_unique<watchdog::runner>();
  } else if (o.serving.mode == serving_mode::async_pool && !o.worker_hosts.listen.empty()) {
    // The front of worker hosts; its own workers, if any, are one more
    // place for calls to go.
    remote_pool::settings r;
    r.local_capacity = o.workers.count;
    r.stats = figures;
    r.curve_secret_key = o.worker_hosts.curve.secret_key;
    r.curve_host_keys = o.worker_hosts.curve.host_public_keys;
    r.lines = shared.lines;
    if (o.workers.count != 0 && o.workers.isolate) {
      r.local_runner = [&o, lines = shared.lines](metrics::pool_stats* stats) {
        return worker_processes(o, o.workers.count, stats, lines);
      };
      r.local_timeouts = true;
    } else if (o.workers.count != 0) {
      out.threads = std::make_unique<pool_threads>(o.workers.count);
      r.local_runner = [threads = out.threads->executor()](metrics::pool_stats*) {
        return std::make_unique<thread_runner>(threads);
      };
    }
    auto front = make_remote_pool(std::move(r));
    for (const auto& address : o.worker_hosts.listen) front->bind(address);
    out.front = front.get();
    out.runner = std::move(front);
  } else if (o.serving.mode == serving_mode::async_pool && o.workers.isolate) {
    out.runner = worker_processes(o, count_or_cores(o.workers.count), figures, shared.lines);
  } else if (o.serving.mode == serving_mode::async_pool) {
    out.threads = std::make_unique<pool_threads>(count_or_cores(o.workers.count));
    out.runner = std::make_unique<thread_runner>(out.threads->executor(), figures);
  }
  pool.runner = out.runner.get();
  return out;
}

}  // namespace rapidrpc::detail

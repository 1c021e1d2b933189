// The XML-RPC server: HTTP/1.1 on event-loop threads, methods from a registry,
// CPU-heavy methods on a worker pool.
//
// Threading: construct, configure and add methods on one thread, then start().
// After start() the registry is read-only. stop() and wait() may be called
// from any thread (stop() is also safe from a signal-handling thread, not
// from a signal handler). Each connection lives on one loop thread for its
// whole life.
#pragma once

#include <rapidrpc/registry.hpp>
#include <rapidrpc/server_options.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace rapidrpc {

/// An XML-RPC and JSON-RPC server.
class server {
 public:
  explicit server(server_options options = {});
  /// A server whose connections are served on `io`, an io_context of the
  /// caller's that the caller runs (the way a Beast program runs its own),
  /// rather than on loop threads of the server's: its listeners, its
  /// connections and their calls (inline and coroutine methods, the
  /// completions of pool calls) run there, beside the program's own work.
  /// What else the server has keeps its own threads: the pool
  /// (workers.threads, or worker processes), the admin listener, ZeroMQ.
  ///
  /// `io` must outlive the server, and be run by one thread at a time (the
  /// server's handlers take no lock): start() refuses (std::invalid_argument)
  /// an io_context made with a concurrency hint of more than one thread,
  /// and serving.mode other than async_pool or serving.threads above 1.
  /// After stop(), keep running `io` until the server has finished: once
  /// it has, it leaves no work there (`io.run()` returns if nothing else
  /// holds it) and wait() returns. wait() throws std::logic_error when
  /// called on the thread running `io`, or if `io` is stopped before the
  /// server has finished (the destructor, which waits, then terminates).
  server(boost::asio::io_context& io, server_options options = {});
  ~server();  ///< stops (with no drain) and joins if still running
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// The methods this server offers; add to it before start().
  rapidrpc::registry& methods() noexcept;

  /// Shorthand for methods().add(...).
  template <class F>
  void add(std::string name, F f, std::string help = {}, execution where = execution::inline_call) {
    methods().add(std::move(name), std::move(f), std::move(help), where);
  }

  /// Binds the listening sockets and starts the loop and worker threads.
  /// Throws std::invalid_argument, before anything is set up, for options
  /// it would not honour (see server_options: isolate, worker_command, zmq),
  /// std::system_error if an address cannot be bound, and
  /// std::runtime_error if the TLS files cannot be loaded (tls_options).
  void start();

  /// The port listened on (from start() until wait() returns; useful with
  /// port 0); 0 outside that time.
  std::uint16_t port() const;

  /// The addresses listened on, as "host:port" strings (from start() until
  /// wait() returns).
  std::vector<std::string> endpoints() const;

  /// The admin listener's addresses, as "host:port" strings (from start()
  /// until wait() returns; empty without `admin`).
  std::vector<std::string> admin_endpoints() const;

  /// The listening sockets serving calls, one descriptor per socket (a
  /// socket several loops share is listed once), for handing them to
  /// another process (rapidrpcd's binary upgrade): valid from start() until
  /// stop(), owned by the server.
  std::vector<int> listening_descriptors() const;

  /// The admin listener's listening sockets, as listening_descriptors().
  std::vector<int> admin_descriptors() const;

  /// Appends the metrics in the Prometheus text format (what the admin
  /// listener's /metrics answers); nothing unless `metrics` or `admin` is
  /// set. Any thread, after start().
  void write_metrics(std::string& out) const;

  /// Whether the server takes calls now (what /readyz answers): started,
  /// not stopping, and with a worker process up if it has worker processes.
  /// Any thread.
  bool ready() const;

  /// The ZeroMQ addresses bound, as libzmq reports them
  /// ("tcp://127.0.0.1:40123"; from start() until wait() returns).
  std::vector<std::string> zmq_endpoints() const;
  /// The worker-host addresses bound (worker_hosts.listen), as libzmq reports
  /// them (from start() until wait() returns).
  std::vector<std::string> worker_endpoints() const;

  /// Says the server is about to stop: from now on ready() is false and
  /// /readyz answers 503 "not ready: draining", while everything else goes
  /// on as before. A load balancer's health check then takes the server out
  /// of rotation before stop() closes its connections, so none of the
  /// balancer's pooled connections is closed as it sends a call on it
  /// (rapidrpcd's --drain-delay). Any thread.
  void announce_stop();

  /// Graceful stop: stops accepting, closes idle connections, lets calls in
  /// flight finish and their replies be written, then ends the threads. After
  /// `drain` the remaining connections are closed. Returns at once; wait()
  /// blocks until the threads have ended.
  void stop(std::chrono::milliseconds drain = std::chrono::seconds(10));

  /// Blocks until the server has stopped.
  void wait();

  /// Loads the worker processes' code anew while the server serves
  /// (rapidrpcd's SIGHUP with --python): every worker process is replaced,
  /// one at a time and between calls, by one that has loaded the code again
  /// (forked by a new warm parent with workers.warm_parent, which starts
  /// first; else started anew), so that no call fails and the pool never
  /// has fewer workers serving. Once none runs the old code, `methods` (the
  /// new code's table: describe_worker_methods()) replaces the registry's
  /// reloadable methods, the API page is made again, and `done(true)` is
  /// called. If the new code does not start (its warm parent ends before it
  /// is ready, or the first new worker does), the workers running serve on
  /// with the methods they had, and `done(false)`. `done` runs on the
  /// pool's thread, not at all if the server stops first. Reloads asked for
  /// while one is under way follow it in order. Returns false, doing
  /// nothing, if the server has no worker processes (workers.isolate) of
  /// its own or is not serving.
  bool reload_workers(method_table methods, std::function<void(bool reloaded)> done);

  /// Re-opens the access log by its path, so that after a rename (log
  /// rotation) new lines go to a new file. Any thread (not a signal
  /// handler); does nothing without an access log.
  void reopen_logs();

  /// start(), then wait().
  void run();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rapidrpc

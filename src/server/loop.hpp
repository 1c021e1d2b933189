// Private: one event loop (an io_context run by one thread), its listening
// sockets and its connections; and the state all loops share.
#pragma once

#include <rapidrpc/jsonrpc.hpp>
#include "access/access_log.hpp"
#include "log/log.hpp"
#include "memory/heap.hpp"
#include "metrics/metrics.hpp"
#include "registry/pool.hpp"
#include "rpc/exchange.hpp"
#include "server/api_page.hpp"
#include "server/byte_buffer.hpp"
#include "server/drained_read.hpp"
#include "server/relay.hpp"
#include "server/slot_pool.hpp"
#include "service/service.hpp"

#include <rapidrpc/limits.hpp>
#include <rapidrpc/registry.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace rapidrpc::detail {

/// A connection's socket: bound to its loop's io_context, whose executor
/// (one pointer) it holds rather than an any_io_executor (48 bytes): a
/// parked connection is kept small.
using loop_socket =
    boost::asio::ip::tcp::socket::rebind_executor<boost::asio::io_context::executor_type>::other;

class connection;
namespace tls {
class context;
}
class access_policy;

/// What every loop reads; written before the loops start, then read-only
/// (except the atomic counter).
struct serving_state {
  const rapidrpc::registry* methods = nullptr;
  rapidrpc::limits limits;
  std::vector<std::string> paths;       // XML-RPC, and JSON-RPC when `jsonrpc`
  std::vector<std::string> json_paths;  // JSON-RPC only (empty unless `jsonrpc`)
  bool jsonrpc = true;
  std::string server_name;
  std::size_t gzip_min_bytes = 1024;
  /// A browser's GET on a path (null: off, 405); made again by a reload.
  rapidrpc::detail::shared_slot<api_page> page;
  std::atomic<std::size_t> connections{0};

  // How the mode shapes the loops (see server.cpp, start()).
  bool close_after_response = false;  ///< one request per connection (sequential)
  std::size_t max_open_per_loop = 0;  ///< accepting pauses at this many (0: no cap)
  bool process_mode = false;          ///< one connection per process (fork, prefork)
  detail::pool_target pool;           ///< where pool methods run (none: on the loop)
  const tls::context* tls = nullptr;  ///< HTTPS when set
  relay_target relay;                 ///< every request relayed when its socket is set

  // Access control and logging (access.hpp, access_log.hpp); null when off.
  const access_policy* access = nullptr;
  access_log* log = nullptr;

  // Metrics (metrics.hpp); null when nothing is counted (no admin
  // listener). A loop counts into shard `metrics_shard` of its own; a
  // child process of fork or prefork is told its slot's shard here.
  metrics::store* metrics = nullptr;
  std::size_t child_shard = 0;

  logger lines;  ///< the server's own lines (server_options::log.lines)
};

/// One event loop. Everything in it is touched only by its own thread, except
/// where a member says otherwise.
///
/// A loop runs an io_context of its own on a thread of its own, or serves
/// on a caller's io_context that the caller runs (server(io_context&)):
/// then it has no thread, and join() waits until it has finished, leaving
/// no handler of its own in that io_context.
class loop final : public service {
 public:
  /// A loop counting into `shared.metrics`'s shard `shard` (if counting),
  /// on an io_context of its own, or on `external` when set.
  loop(serving_state& shared, std::size_t shard, boost::asio::io_context* external = nullptr);

  /// Serves a duplicate of the listening socket `fd` on this loop (before
  /// start()); returns its address.
  boost::asio::ip::tcp::endpoint adopt(int fd);

  /// Opens one more listening socket on this loop (before start()) and
  /// returns its address (with the port picked when `ep` has port 0).
  boost::asio::ip::tcp::endpoint listen(const boost::asio::ip::tcp::endpoint& ep);
  /// The addresses of its listening sockets, as adopt() and listen()
  /// returned them (from bind until destroyed).
  const std::vector<boost::asio::ip::tcp::endpoint>& bound() const noexcept { return bound_; }
  std::vector<std::string> endpoints() const override;
  /// Its listening sockets' descriptors (from bind until stop()).
  std::vector<int> listening_descriptors() const override;
  /// Runs the loop on a new thread (on a caller's io_context: arms its
  /// listeners there).
  void start() override;
  /// Serves an accepted socket on this loop until it closes, on the calling
  /// thread (the process-per-connection modes).
  void serve_here(int fd);
  /// Asks the loop to drain (any thread): stop accepting, close idle
  /// connections once quiet (connection::drain), finish the rest,
  /// force-close after `drain`.
  void stop(std::chrono::milliseconds drain) override;
  /// Joins the thread; on a caller's io_context, waits until the loop has
  /// finished there (throws std::logic_error if it never can: called on
  /// that io_context's thread, or the io_context stopped first).
  void join() override;

  // Used by connections, on the loop thread.
  serving_state& shared() noexcept { return shared_; }
  const call_context& context() const noexcept { return context_; }
  boost::asio::io_context& io() noexcept { return io_; }
  /// How connections read (drained_read.hpp).
  drained_reader& reader() noexcept { return reader_; }
  void attach(connection* c) { connections_.insert(c); }
  void detach(connection* c);
  bool draining() const noexcept { return draining_; }
  /// This loop's access-log buffer, or null when there is no access log.
  access_log_buffer* log() noexcept { return log_.get(); }
  /// This loop's metrics shard (counts nothing when metrics are off).
  metrics::shard& stats() noexcept { return stats_; }
  /// The input blocks of this loop's connections.
  block_pool& blocks() noexcept { return blocks_; }
  /// Where this loop's connections keep what serving a request takes.
  slot_pool& serving_slots() noexcept { return serving_slots_; }
  /// The XML-RPC parsers of this loop's exchanges.
  rpc::parser_pool& parsers() noexcept { return parsers_; }
  /// Storage lent to the connection writing a reply or reading a request
  /// body, always empty here (connection.cpp, borrow() and give_back()).
  std::string& spare_output() noexcept { return spare_output_; }
  std::string& spare_body() noexcept { return spare_body_; }
  /// A connection has freed a buffer of at least large_buffer_bytes (a
  /// body or a reply): once none has been freed for
  /// heap_trimmer::after_large (on any loop), the heap's free memory goes
  /// back to the system. Until then it stays for the next large request,
  /// which so takes no fresh pages.
  void large_buffer_freed() { trimmer_.large_freed(); }
  /// A connection has parked, its buffers freed: what a burst of requests
  /// left in the heap between the connections goes back to the system once
  /// the sweep's parking is done (connections park at a sweep, once a
  /// second at most), unless large requests are still coming.
  void idle_memory_freed() { trimmer_.idle_freed(); }

 private:
  struct listener {
    boost::asio::ip::tcp::acceptor acceptor;
    boost::asio::steady_timer retry;
    bool armed = false;                   // an async_accept is pending
    boost::asio::ip::tcp::endpoint peer;  // the accepted peer's address
  };

  void accept(listener& l);
  void turn_away(loop_socket& s);
  void resume_accepting();
  void sweep();
  void begin_drain(std::chrono::milliseconds drain);
  void drain_sweep();
  void arm_drain_deadline();
  void serve_late(loop_socket s, const boost::asio::ip::tcp::endpoint& peer);
  void finish_if_drained();

  serving_state& shared_;
  // Declared before io_: handlers still queued when io_ is destroyed may own
  // the last reference to a connection, whose destructor detaches itself.
  std::unordered_set<connection*> connections_;
  // Also before io_: the connections destroyed with it give back into these.
  block_pool blocks_;
  slot_pool serving_slots_;
  rpc::parser_pool parsers_;
  std::optional<boost::asio::io_context> own_io_;  // unless on a caller's io_context
  boost::asio::io_context& io_;
  drained_reader reader_{io_};
  std::unique_ptr<access_log_buffer> log_;  // after io_: its timer lives there
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  call_context context_;
  metrics::shard stats_;
  std::vector<std::unique_ptr<listener>> listeners_;
  std::vector<boost::asio::ip::tcp::endpoint> bound_;  // bound()
  boost::asio::steady_timer sweep_timer_{io_};
  boost::asio::steady_timer drain_timer_{io_};
  std::chrono::steady_clock::time_point drain_deadline_{};
  boost::asio::steady_timer quiet_timer_{io_};  // draining: closes idle connections once quiet
  heap_trimmer trimmer_{io_};                   // large_buffer_freed(), idle_memory_freed()
  bool freed_since_sweep_ = false;              // a connection closed: trim at the next sweep
  bool draining_ = false;
  bool accept_paused_ = false;
  bool exit_when_idle_ = false;
  std::string busy_reply_;  // the 503 of turn_away(), rebuilt for its Date
  std::string spare_output_;
  std::string spare_body_;
  std::thread thread_;
  // On a caller's io_context: whether the loop has finished there (its
  // last handler has run), for join().
  bool external_ = false;
  std::mutex finish_lock_;
  std::condition_variable finish_cv_;
  bool finished_ = false;
};

}  // namespace rapidrpc::detail

// Private: the server's ZeroMQ endpoint. One ROUTER socket, bound to every
// address given, serving JSON-RPC 2.0 on the server's registry: each request
// is one frame, each reply one frame routed back to its sender (docs/zmq.md).
//
// Threads: the socket is owned by the endpoint's own thread, which runs an
// io_context: it waits for the socket's notification descriptor (ZMQ_FD) in
// that io_context, reads and parses requests, runs inline methods, and sends
// every reply. Pool methods run on the server's worker pool (or worker
// processes); their outcome is posted back to this io_context, like any
// connection's, and the reply is sent from here. Async methods (sleep) arm
// their timers here. No other thread touches the socket.
#pragma once

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/registry.hpp>

#include "log/log.hpp"
#include "memory/free_list.hpp"
#include "memory/heap.hpp"
#include "metrics/metrics.hpp"
#include "registry/pool.hpp"
#include "rpc/exchange.hpp"
#include "service/service.hpp"
#include "zmq/reader.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <zmq.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc::detail {

class access_log;
class access_log_buffer;
class access_policy;

class zmq_router final : public service {
 public:
  struct settings {
    const registry* methods = nullptr;
    rapidrpc::limits limits;                           ///< the document limits
    std::size_t max_message_bytes = 16 * 1024 * 1024;  ///< past this, libzmq drops the peer
    const pool_target* pool = nullptr;  ///< where pool methods run (null: on the endpoint's thread)
    const access_policy* access = nullptr;  ///< the address allowlist, if any
    access_log* log = nullptr;
    metrics::store* metrics = nullptr;  ///< counts into its shard `metrics_shard` when set
    std::size_t metrics_shard = 0;
    logger lines;  ///< replies that cannot be sent, messages dropped
  };

  explicit zmq_router(settings s);
  ~zmq_router() override;
  zmq_router(const zmq_router&) = delete;
  zmq_router& operator=(const zmq_router&) = delete;

  /// Binds one more address ("tcp://127.0.0.1:5555", "tcp://[::1]:*",
  /// "ipc:///run/app.sock"), before start(); returns the address bound
  /// (with the port picked for "*"). Throws std::runtime_error saying why.
  /// An ipc:// socket's file is removed when the router is destroyed.
  std::string bind(const std::string& address);
  /// The addresses bound, as bind() returned them.
  std::vector<std::string> endpoints() const override { return bound_; }
  /// Starts serving on a thread of its own.
  void start() override;
  /// Any thread: stop taking requests, send the replies of the calls in
  /// flight (for at most `drain`), then close.
  void stop(std::chrono::milliseconds drain) override;
  void join() override;

 private:
  struct call;  // one request in flight

  void handle(std::vector<zmq::message_t>& frames, std::size_t count);
  call& new_call(std::vector<zmq::message_t>& frames, std::size_t count);
  void finish(call& c, const rpc::reply& r);
  void send(std::vector<zmq::message_t>& envelope, std::size_t count, std::string_view body);
  void note_drop(const char* why);
  void begin_drain(std::chrono::milliseconds drain);
  void finish_if_drained();

  settings settings_;
  metrics::shard stats_;  // the endpoint thread's (counts nothing without metrics)
  zmq::context_t context_{1};
  zmq::socket_t socket_{context_, zmq::socket_type::router};
  boost::asio::io_context io_{1};
  // A request from a DEALER arrives as [identity][payload]; through a REQ
  // socket or a proxy, with more routing frames before the payload. Beyond
  // this many frames a message is dropped.
  static constexpr std::size_t max_frames = 32;
  zmq_reader reader_{
      io_, max_frames,
      [this](std::vector<zmq::message_t>& frames, std::size_t count) { handle(frames, count); },
      "ZeroMQ endpoint", &settings_.lines};
  std::unique_ptr<access_log_buffer> log_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  call_context call_context_;
  std::vector<std::string> bound_;      // endpoints()
  std::vector<std::string> ipc_files_;  // removed at destruction
  free_list<call> calls_;               // in flight, and free ones to reuse
  bool draining_ = false;
  bool closed_ = false;
  std::uint64_t dropped_ = 0;  // messages dropped since the last log line
  std::chrono::steady_clock::time_point last_drop_log_{};
  boost::asio::steady_timer drain_timer_{io_};
  heap_trimmer trimmer_{io_};  // after large calls
  std::thread thread_;
};

}  // namespace rapidrpc::detail

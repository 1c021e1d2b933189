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
#include "zmq/service.hpp"

#include <zmq.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rapidrpc::detail {

class access_log;
class access_log_buffer;
class access_policy;

class zmq_router final : public zmq_service {
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
  // As a service (zmq/service.hpp): stop() takes no more requests, sends
  // the replies of the calls in flight (for at most the drain), then closes.

 private:
  struct call;  // one request in flight

  void on_message(std::vector<zmq::message_t>& frames, std::size_t count) override;
  void on_start() override { watch(socket_); }
  void on_drain() override;
  std::size_t in_flight() const override { return calls_.taken(); }
  void on_close() override;
  call& new_call(std::vector<zmq::message_t>& frames, std::size_t count);
  void finish(call& c, const rpc::reply& r);
  void send(std::vector<zmq::message_t>& envelope, std::size_t count, std::string_view body);
  void note_drop(const char* why);

  // A request from a DEALER arrives as [identity][payload]; through a REQ
  // socket or a proxy, with more routing frames before the payload. Beyond
  // this many frames a message is dropped.
  static constexpr std::size_t max_frames = 32;

  settings settings_;
  metrics::shard stats_;  // the endpoint thread's (counts nothing without metrics)
  zmq::socket_t socket_{context_, zmq::socket_type::router};
  std::unique_ptr<access_log_buffer> log_;
  call_context call_context_;
  std::vector<std::string> ipc_files_;  // removed at destruction
  free_list<call> calls_;               // in flight, and free ones to reuse
  std::uint64_t dropped_ = 0;           // messages dropped since the last log line
  std::chrono::steady_clock::time_point last_drop_log_{};
  heap_trimmer trimmer_{io_};  // after large calls
};

}  // namespace rapidrpc::detail

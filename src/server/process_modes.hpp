// Private: the process-per-connection modes. A supervisor process, forked
// from the server's process before that has any other thread, owns the
// child processes and accepts for them:
//
//  - fork: it accepts, and forks a child per connection, at most `processes`
//    alive; at the cap it waits for one to exit before accepting again.
//  - prefork: it forks `processes` workers up front; each accepts from the
//    shared listening sockets and serves one connection at a time. A worker
//    that dies is replaced, with a growing delay if they keep dying young
//    (respawn_rule, src/service/respawn.hpp).
//
// A child serves its connection on a loop of its own, with every method
// inline under the watchdog (watchdog.hpp), and leaves with _exit().
//
// Why a process and not a thread of the server: a child is a copy of the
// process it is forked from, taken at one instant. Forked from the server,
// it would copy whatever the server's other threads held then (the admin
// listener's connections, whose close the client would then not see; a
// lock inside an allocator without fork handlers, as the sanitizers' are,
// which the child would wait on for ever). The supervisor process has one
// thread and only what serving needs: the listening sockets, the metrics
// mapping, the access log.
#pragma once

#include "server/loop.hpp"
#include "service/respawn.hpp"

#include <rapidrpc/serving_mode.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <mutex>
#include <vector>

namespace rapidrpc::detail {

class process_supervisor final : public service {
 public:
  /// `respawn`: the prefork workers' back-off (server_options::serving.respawn_backoff
  /// and respawn_backoff_max, after the first young death replaced at once).
  process_supervisor(serving_state& shared, serving_mode mode, unsigned processes,
                     respawn_rule respawn);
  ~process_supervisor() override;

  /// Listens on `ep` (blocking bind; returns the address with its port).
  boost::asio::ip::tcp::endpoint listen(const boost::asio::ip::tcp::endpoint& ep);
  /// Shares a duplicate of the listening socket `fd` with the processes.
  boost::asio::ip::tcp::endpoint adopt(int fd);
  /// The addresses listened on, as listen() and adopt() returned them.
  const std::vector<boost::asio::ip::tcp::endpoint>& bound() const noexcept { return bound_; }
  std::vector<std::string> endpoints() const override;
  /// The listening sockets' descriptors (before stop()).
  std::vector<int> listening_descriptors() const override;
  /// Forks the supervisor process, which waits for start(). To be called
  /// once the listening sockets are open and before the server's process
  /// has any other thread or descriptor the children must not hold.
  void spawn();
  /// Lets the supervisor process accept; returns once it does (prefork:
  /// once its workers are forked).
  void start() override;
  /// Stops accepting; children finish their connection until `drain`, then
  /// are killed. Any thread.
  void stop(std::chrono::milliseconds drain) override;
  /// Waits for the supervisor process to end.
  void join() override;

 private:
  [[noreturn]] void supervise();
  void started();
  void supervise_fork();
  void supervise_prefork();
  void drain_children();
  int spawn_prefork_worker(std::size_t slot);
  void send(const void* message, std::size_t size);

  serving_state& shared_;
  serving_mode mode_;
  unsigned processes_;
  respawn_rule respawn_;
  std::vector<int> listeners_;
  std::vector<boost::asio::ip::tcp::endpoint> bound_;  // bound()
  // The server's words to the supervisor process: start() sends one byte
  // (and waits for one back), stop() the drain in milliseconds; end of
  // stream (the server gone) is a stop with the default drain.
  int control_pipe_[2] = {-1, -1};
  int workers_pipe_[2] = {-1, -1};  // its write end closes: prefork workers stop
  std::mutex mutex_;                // stop() and join() from any thread
  int pid_ = -1;                    // the supervisor process
  bool started_ = false;
  bool stopped_ = false;
  // In the supervisor process:
  std::chrono::milliseconds::rep drain_ms_ = 10000;
  std::vector<int> children_;  // pids
};

}  // namespace rapidrpc::detail

// Private: the process-per-connection modes. A supervisor thread in the
// server's process owns the listening sockets and the child processes:
//
//  - fork: it accepts, and forks a child per connection, at most `processes`
//    alive; at the cap it waits for one to exit before accepting again.
//  - prefork: it forks `processes` workers up front; each accepts from the
//    shared listening sockets and serves one connection at a time. A worker
//    that dies is replaced, with a growing delay if they keep dying young
//    (prefork_respawn_delay).
//
// A child serves its connection on a loop of its own, with every method
// inline under the watchdog (watchdog.hpp), and leaves with _exit().
#pragma once

#include "server/loop.hpp"

#include <rapidrpc/server.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace rapidrpc::detail {

/// How long the prefork supervisor waits before replacing a worker that has
/// died young (within a second of its start) `quick_deaths` times in a row:
/// at once for the first, then `base` times 2^n for the n-th (4x, 8x, ...),
/// at most `max` (server_options::respawn_backoff and respawn_backoff_max).
std::chrono::milliseconds prefork_respawn_delay(unsigned quick_deaths,
                                                std::chrono::milliseconds base,
                                                std::chrono::milliseconds max) noexcept;

class process_supervisor {
 public:
  process_supervisor(shared_state& shared, serving_mode mode, unsigned processes,
                     std::chrono::milliseconds respawn_backoff,
                     std::chrono::milliseconds respawn_backoff_max);
  ~process_supervisor();

  /// Listens on `ep` (blocking bind; returns the address with its port).
  boost::asio::ip::tcp::endpoint listen(const boost::asio::ip::tcp::endpoint& ep);
  /// Shares a duplicate of the listening socket `fd` with the processes.
  boost::asio::ip::tcp::endpoint adopt(int fd);
  /// The listening sockets' descriptors (before stop()).
  const std::vector<int>& listening_fds() const noexcept { return listeners_; }
  /// Starts the supervisor thread (and, for prefork, the workers).
  void start();
  /// Stops accepting; children finish their connection until `drain`, then
  /// are killed. Any thread.
  void stop(std::chrono::milliseconds drain);
  /// Joins the supervisor thread.
  void join();

 private:
  void supervise_fork();
  void supervise_prefork();
  void drain_children();
  int spawn_prefork_worker(std::size_t slot);

  shared_state& shared_;
  serving_mode mode_;
  unsigned processes_;
  std::chrono::milliseconds respawn_backoff_;
  std::chrono::milliseconds respawn_backoff_max_;
  std::vector<int> listeners_;
  int stop_pipe_[2] = {-1, -1};     // written by stop(): wakes the supervisor
  int workers_pipe_[2] = {-1, -1};  // its write end closes: prefork workers stop
  // Set by stop() on the caller's thread, read by the supervisor thread once
  // the stop pipe wakes it: the pipe orders the two for the kernel, not for
  // the C++ memory model, hence the atomic.
  std::atomic<std::chrono::milliseconds::rep> drain_ms_{10000};
  std::vector<int> children_;       // pids
  std::vector<int> first_workers_;  // prefork: pids forked by start()
  std::thread thread_;
};

}  // namespace rapidrpc::detail

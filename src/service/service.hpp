// Private: the lifecycle every part of a server that runs on a thread or in
// a process of its own shares (a loop, the process supervisor, the ZeroMQ
// endpoint, the worker-host front and link, the admin listener), and the
// one ordered list the server walks to start, stop and join them.
//
// Each is built and bound first (its own constructor and bind/listen calls,
// which may throw and leave nothing running); start() then gives it its
// thread or process. The list starts them in the order they were added and
// joins them in the reverse order, so a service added before another (the
// admin listener, the runner calls are handed to) keeps working until every
// service added after it has finished. docs/design.md ("Start and stop")
// gives the server's order.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace rapidrpc::detail {

class service {
 public:
  virtual ~service() = default;

  /// Starts its thread or process. Called once, after it is bound; throws
  /// std::system_error when the thread or process cannot be had.
  virtual void start() = 0;
  /// Any thread, once: take no new work; finish what is in flight for at
  /// most `drain`, then cut it off.
  virtual void stop(std::chrono::milliseconds drain) = 0;
  /// Waits for its thread or process to end (after stop()).
  virtual void join() = 0;

  /// The addresses it listens on, once bound ("host:port", or a ZeroMQ
  /// endpoint as libzmq reports it); none for a service that only connects.
  virtual std::vector<std::string> endpoints() const { return {}; }
  /// Its listening sockets, one descriptor each, from bind until join()
  /// (to hand them to a successor process).
  virtual std::vector<int> listening_descriptors() const { return {}; }
};

class service_list {
 public:
  /// Adds `s` (not owned; it outlives the list's use) after those added.
  void add(service& s) { services_.push_back(&s); }

  /// Starts each in the order added. If one throws, those already started
  /// are stopped with no drain and joined, last started first, and the
  /// error is rethrown: nothing of the list is left running.
  void start();
  /// Stops each started one, in the order added.
  void stop(std::chrono::milliseconds drain);
  /// Joins each started one, last started first.
  void join();

  std::size_t started() const noexcept { return started_; }

 private:
  std::vector<service*> services_;
  std::size_t started_ = 0;
};

}  // namespace rapidrpc::detail

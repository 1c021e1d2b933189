// Private: what the server's three ZeroMQ services share (the ZeroMQ
// endpoint, a front's worker-host endpoint, a worker host's link): a ZeroMQ
// context, a thread of its own running an io_context that owns the socket
// and reads it (reader.hpp), the drain with its deadline, and the close
// that gives the last messages queued a moment to leave.
//
// A service derived from it owns its socket and says what a message means
// (on_message()); the skeleton starts and ends the thread. Its lifecycle is
// service.hpp's: bound first (bind()), then start(), stop(drain), join().
#pragma once

#include "log/log.hpp"
#include "service/service.hpp"
#include "zmq/reader.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <zmq.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc::detail {

class zmq_service : public virtual service {
 public:
  ~zmq_service() override;
  zmq_service(const zmq_service&) = delete;
  zmq_service& operator=(const zmq_service&) = delete;

  /// Calls on_start(), then runs the io_context on a thread of its own until
  /// the service ends; the thread then calls on_close() and closes the
  /// socket watched, with the linger given (the context waits for what is
  /// queued when it is destroyed).
  void start() final;
  /// Any thread, once: on the service's thread, calls on_drain() and ends
  /// the service when nothing is in flight (settled()) or at the deadline,
  /// whichever comes first; the calls left past it get no answer.
  void stop(std::chrono::milliseconds drain) override;
  void join() override;
  /// The addresses bind() bound, as libzmq reports them.
  std::vector<std::string> endpoints() const override { return bound_; }

 protected:
  /// `max_frames` and `who` as zmq_reader's; `lines` is the derived
  /// service's (it outlives the reader); `close_linger_ms`: how long what is
  /// queued at the close may take to leave.
  zmq_service(std::size_t max_frames, const char* who, const logger* lines, int close_linger_ms);

  /// The derived destructor's first step, while what its handlers use still
  /// exists: a service running is stopped with no drain and joined, and the
  /// socket, if the thread did not close it, is closed.
  void end();

  /// A message read from the socket (service's thread).
  virtual void on_message(std::vector<zmq::message_t>& frames, std::size_t count) = 0;
  /// Before the thread starts (nothing runs yet): the first messages, timers.
  virtual void on_start() {}
  /// The drain's first step (service's thread): tell the peers, stop reading.
  virtual void on_drain() {}
  /// Calls not answered yet; the drain ends when none is left.
  virtual std::size_t in_flight() const { return 0; }
  /// On the thread, once the io_context has stopped, before the close.
  virtual void on_close() {}

  /// Binds `socket` to `address` and lists what libzmq bound; throws
  /// std::runtime_error naming `what` and why it cannot.
  std::string bind(zmq::socket_t& socket, const std::string& address, const char* what);
  /// Reads `socket` from now on (again after a reconnection); it is the one
  /// the thread closes.
  void watch(zmq::socket_t& socket);
  /// After an answer was sent or a call ended (service's thread): ends a
  /// drain that has nothing in flight left, else reads on.
  void settled();
  bool draining() const noexcept { return draining_; }
  /// The io_context has stopped and the socket is closed: nothing may be sent.
  bool closed() const noexcept { return closed_; }
  /// What is queued at the close is dropped at once, not given its moment
  /// (the peer is gone: it would not leave).
  void drop_at_close() noexcept { close_linger_ms_ = 0; }

  boost::asio::io_context io_{1};
  zmq::context_t context_{1};
  zmq_reader reader_;

 private:
  void begin_drain(std::chrono::milliseconds drain);
  void close();

  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  boost::asio::steady_timer drain_timer_{io_};
  zmq::socket_t* socket_ = nullptr;
  int close_linger_ms_;
  std::vector<std::string> bound_;
  bool draining_ = false;
  bool closed_ = false;
  std::thread thread_;
};

}  // namespace rapidrpc::detail

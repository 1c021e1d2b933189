// Private: a ZeroMQ socket read from an io_context, as the server's three
// sockets are (the ZeroMQ endpoint, a front's worker-host endpoint and a
// worker host's link). The socket belongs to the io_context's thread; no
// other thread touches it.
//
// ZMQ_FD only says that the socket's state may have changed, and only once
// (an edge): the socket must be read until it has nothing more before
// waiting again, and a send can take the notification of an arrival with
// it, so every send is followed by a pump (sent()).
#pragma once

#include "log/log.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <zmq.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace rapidrpc::detail {

class zmq_reader {
 public:
  /// Hears each message read: its frames, and how many it had. A message of
  /// more than max_frames frames comes with count max_frames + 1 (its
  /// frames from there on are lost): the owner drops it.
  using handler = std::function<void(std::vector<zmq::message_t>& frames, std::size_t count)>;

  /// `who` names the socket in the one error line a failed read gets, said
  /// to `lines` (the owner's; it outlives the reader).
  zmq_reader(boost::asio::io_context& io, std::size_t max_frames, handler on_message,
             const char* who, const logger* lines);
  ~zmq_reader() { unwatch(); }  // the descriptor is libzmq's: released, never closed
  zmq_reader(const zmq_reader&) = delete;
  zmq_reader& operator=(const zmq_reader&) = delete;

  /// Reads `socket` from now on, starting with a pump (messages may be
  /// waiting already). It outlives the watch (until unwatch()).
  void watch(zmq::socket_t& socket);
  /// Stops reading the socket, before it is closed or replaced; a wait
  /// pending is cancelled and its completion ignored.
  void unwatch();
  /// After a send from the socket's thread: a pump soon, unless one runs now
  /// (it looks again anyway).
  void sent();
  /// Reads nothing more until watch() again (a drain: messages not read
  /// yet stay unread).
  void pause();

 private:
  void schedule_pump();
  void wait_for_input();
  void pump();

  boost::asio::io_context& io_;
  boost::asio::posix::stream_descriptor notify_;
  std::vector<zmq::message_t> frames_;  // max_frames, and one for the rest of a longer message
  handler on_message_;
  const char* who_;
  const logger* lines_;  // the owner's
  zmq::socket_t* socket_ = nullptr;
  std::uint64_t watch_ = 0;  // which watch a completion belongs to
  bool waiting_ = false;     // an async_wait on notify_ is pending
  bool pump_posted_ = false;
  bool pumping_ = false;
};

}  // namespace rapidrpc::detail

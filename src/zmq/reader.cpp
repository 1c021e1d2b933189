#include "zmq/reader.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdio>

namespace rapidrpc::detail {

namespace net = boost::asio;

namespace {

// Messages read in one turn before the loop lets completions run.
constexpr int max_messages_per_turn = 256;

}  // namespace

zmq_reader::zmq_reader(net::io_context& io, std::size_t max_frames, handler on_message,
                       const char* who, const logger* lines)
    : io_(io),
      notify_(io),
      frames_(max_frames + 1),
      on_message_(std::move(on_message)),
      who_(who),
      lines_(lines) {}

void zmq_reader::watch(zmq::socket_t& socket) {
  unwatch();
  socket_ = &socket;
  notify_.assign(socket.get(zmq::sockopt::fd));
  schedule_pump();
}

void zmq_reader::unwatch() {
  ++watch_;
  waiting_ = false;
  if (socket_ != nullptr) notify_.release();  // cancels a wait; the descriptor is libzmq's
  socket_ = nullptr;
}

void zmq_reader::pause() { unwatch(); }

void zmq_reader::sent() {
  if (!pumping_) schedule_pump();
}

void zmq_reader::schedule_pump() {
  if (pump_posted_) return;
  pump_posted_ = true;
  net::post(io_, [this, watch = watch_] {
    pump_posted_ = false;
    if (watch == watch_) pump();
  });
}

void zmq_reader::wait_for_input() {
  if (waiting_) return;
  waiting_ = true;
  notify_.async_wait(net::posix::stream_descriptor::wait_read,
                     [this, watch = watch_](const boost::system::error_code& ec) {
                       if (watch != watch_) return;  // unwatched meanwhile
                       waiting_ = false;
                       if (!ec) pump();
                     });
}

void zmq_reader::pump() {
  if (socket_ == nullptr) return;
  pumping_ = true;
  struct done_pumping {
    bool& flag;
    ~done_pumping() { flag = false; }
  } guard{pumping_};
  const std::size_t last = frames_.size() - 1;
  for (int i = 0; i < max_messages_per_turn; ++i) {
    std::size_t n = 0;
    try {
      // A read that finds nothing has let libzmq take in what its I/O
      // thread said (as asking for ZMQ_EVENTS does, at the cost of a
      // poll() on the descriptor and a getpid() for every message): the
      // descriptor says so again when more comes.
      bool more = true;
      while (more) {
        zmq::message_t& f = frames_[n < last ? n : last];
        if (!socket_->recv(f, zmq::recv_flags::dontwait)) break;  // a message comes whole
        more = f.more();
        ++n;
      }
    } catch (const zmq::error_t& e) {
      // Not expected while the context lives (signals are blocked, so no
      // EINTR); said, and the reader keeps waiting rather than going deaf.
      lines_->say(log_level::error, "%s: cannot read: %s", who_, e.what());
      wait_for_input();
      return;
    }
    if (n == 0) {
      wait_for_input();
      return;
    }
    const std::uint64_t watch = watch_;
    on_message_(frames_, std::min(n, last + 1));
    if (watch != watch_) return;  // the handler unwatched or replaced the socket
  }
  // More may be waiting; let the completions queued meanwhile go first.
  schedule_pump();
}

}  // namespace rapidrpc::detail

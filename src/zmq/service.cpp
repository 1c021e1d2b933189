#include "zmq/service.hpp"

#include <boost/asio/post.hpp>

#include <stdexcept>

namespace rapidrpc::detail {

namespace net = boost::asio;

zmq_service::zmq_service(std::size_t max_frames, const char* who, const logger* lines,
                         int close_linger_ms)
    : reader_(
          io_, max_frames,
          [this](std::vector<zmq::message_t>& frames, std::size_t n) { on_message(frames, n); },
          who, lines),
      work_(net::make_work_guard(io_)),
      close_linger_ms_(close_linger_ms) {}

// end() has run (the derived destructor's): nothing is left to do here but
// what the members' own destructors do.
zmq_service::~zmq_service() = default;

void zmq_service::end() {
  if (thread_.joinable()) {
    stop(std::chrono::milliseconds(0));
    join();
  }
  // Nothing of io_ runs any more: handlers still queued (a pool result that
  // came after the drain deadline) are destroyed without running.
  if (!closed_ && socket_ != nullptr) {
    reader_.unwatch();
    socket_->close();
    closed_ = true;
  }
}

std::string zmq_service::bind(zmq::socket_t& socket, const std::string& address, const char* what) {
  try {
    if (address.find("://[") != std::string::npos) socket.set(zmq::sockopt::ipv6, 1);
    socket.bind(address);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(std::string("cannot bind the ") + what + " " + address + ": " +
                             e.what());
  }
  bound_.push_back(socket.get(zmq::sockopt::last_endpoint));
  return bound_.back();
}

void zmq_service::watch(zmq::socket_t& socket) {
  socket_ = &socket;
  reader_.watch(socket);
}

void zmq_service::start() {
  on_start();
  thread_ = std::thread([this] {
    io_.run();
    on_close();
    close();
  });
}

void zmq_service::stop(std::chrono::milliseconds drain) {
  net::post(io_, [this, drain] { begin_drain(drain); });
}

void zmq_service::join() {
  if (thread_.joinable()) thread_.join();
}

void zmq_service::begin_drain(std::chrono::milliseconds drain) {
  if (draining_) return;
  draining_ = true;
  on_drain();
  drain_timer_.expires_after(drain);
  drain_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) io_.stop();  // past the deadline: the calls left get no answer
  });
  settled();
}

void zmq_service::settled() {
  if (!draining_) return reader_.sent();
  if (in_flight() != 0) return;
  drain_timer_.cancel();
  work_.reset();
  io_.stop();
}

// Messages already queued get a moment to leave; the context waits for
// them when it is destroyed.
void zmq_service::close() {
  reader_.unwatch();
  if (socket_ != nullptr) {
    socket_->set(zmq::sockopt::linger, close_linger_ms_);
    socket_->close();
  }
  closed_ = true;
}

}  // namespace rapidrpc::detail

#include "server/loop.hpp"

#include "http/response.hpp"
#include "server/connection.hpp"
#include "server/listen.hpp"
#include "server/socket_read.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

namespace rapidrpc {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace detail {

loop::loop(serving_state& shared, std::size_t shard, net::io_context* external)
    : shared_(shared),
      serving_slots_(connection::serving_bytes()),
      parsers_(shared.limits),
      own_io_(external != nullptr ? std::nullopt : std::make_optional<net::io_context>(1)),
      io_(external != nullptr ? *external : *own_io_),
      work_(net::make_work_guard(io_)),
      external_(external != nullptr) {
  if (shared.metrics != nullptr) stats_ = shared.metrics->at(shard);
  context_.loop = io_.get_executor();
  context_.pool = &shared.pool;
  if (shared.log != nullptr) log_ = std::make_unique<access_log_buffer>(*shared.log, io_);
}

tcp::endpoint loop::adopt(int fd) {
  auto l =
      std::make_unique<listener>(listener{tcp::acceptor(io_), net::steady_timer(io_), false, {}});
  tcp::endpoint ep = adopt_duplicate(l->acceptor, fd, "the listening socket");
  ask_for_read_counts(l->acceptor.native_handle());
  listeners_.push_back(std::move(l));
  bound_.push_back(ep);
  return ep;
}

tcp::endpoint loop::listen(const tcp::endpoint& ep) {
  auto l =
      std::make_unique<listener>(listener{tcp::acceptor(io_), net::steady_timer(io_), false, {}});
  // Every loop listens on the same address; the kernel spreads new
  // connections over them, so no loop hands sockets to another.
  bind_acceptor(l->acceptor, ep, true);
  // Passed on to every connection accepted: connection.cpp's reads.
  ask_for_read_counts(l->acceptor.native_handle());
  l->acceptor.listen(net::socket_base::max_listen_connections);
  listeners_.push_back(std::move(l));
  bound_.push_back(listeners_.back()->acceptor.local_endpoint());
  return bound_.back();
}

std::vector<std::string> loop::endpoints() const { return host_ports(bound_); }

std::vector<int> loop::listening_descriptors() const {
  std::vector<int> out;
  for (const auto& l : listeners_)
    if (l->acceptor.is_open()) out.push_back(l->acceptor.native_handle());
  return distinct_sockets(out);
}

void loop::start() {
  if (external_) {
    // On the caller's thread, which may be running the io_context already.
    net::post(io_, [this] {
      for (auto& l : listeners_) accept(*l);
      sweep();
    });
    return;
  }
  for (auto& l : listeners_) accept(*l);
  sweep();
  thread_ = std::thread([this] { io_.run(); });
}

void loop::join() {
  if (!external_) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  std::unique_lock hold(finish_lock_);
  while (!finished_) {
    if (io_.get_executor().running_in_this_thread())
      throw std::logic_error(
          "rapidrpc::server::wait() on the thread that runs its io_context would never return");
    if (io_.stopped())
      throw std::logic_error(
          "rapidrpc::server: its io_context was stopped before the server finished; run it "
          "until the server has stopped");
    finish_cv_.wait_for(hold, std::chrono::milliseconds(100));
  }
}

void loop::serve_here(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  loop_socket socket(io_, addr.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd);
  exit_when_idle_ = true;
  boost::system::error_code ec;
  tcp::endpoint peer = socket.remote_endpoint(ec);
  std::make_shared<connection>(*this, std::move(socket), peer)->start();
  if (connections_.empty()) return;  // closed at once (say the peer was gone)
  sweep();
  io_.run();
}

void loop::detach(connection* c) {
  connections_.erase(c);
  freed_since_sweep_ = true;
  if (draining_ || exit_when_idle_) {
    if (exit_when_idle_ && connections_.empty()) draining_ = true;
    finish_if_drained();
  } else if (accept_paused_ && connections_.size() < shared_.max_open_per_loop) {
    resume_accepting();
  }
}

void loop::resume_accepting() {
  accept_paused_ = false;
  for (auto& l : listeners_)
    if (l->acceptor.is_open() && !l->armed) accept(*l);
}

void loop::accept(listener& l) {
  l.armed = true;
  // The peer's address comes with the accept itself (no getpeername()).
  l.acceptor.async_accept(
      io_, l.peer, [this, &l](const boost::system::error_code& ec, loop_socket s) {
        l.armed = false;
        if (ec == net::error::operation_aborted) return;
        if (!l.acceptor.is_open()) {
          // The kernel handed over this connection just before the drain
          // closed the listener: a real client, served like the others
          // (its reply says "Connection: close"), not dropped with a reset.
          if (!ec) serve_late(std::move(s), l.peer);
          return;
        }
        if (ec) {
          // Out of descriptors (or memory): pause instead of spinning on an
          // accept that keeps failing; the backlog waits meanwhile.
          if (ec == net::error::no_descriptors || ec.value() == ENFILE ||
              ec == net::error::no_buffer_space || ec == net::error::no_memory) {
            l.armed = true;
            l.retry.expires_after(std::chrono::milliseconds(100));
            l.retry.async_wait([this, &l](const boost::system::error_code& e) {
              l.armed = false;
              if (!e) accept(l);
            });
            return;
          }
          accept(l);  // e.g. the peer reset before accept: try the next one
          return;
        }
        if (shared_.connections.load(std::memory_order_relaxed) >= shared_.limits.max_connections) {
          turn_away(s);  // over the limit: the existing clients keep being served
        } else {
          std::make_shared<connection>(*this, std::move(s), l.peer)->start();
        }
        if (shared_.max_open_per_loop != 0 && connections_.size() >= shared_.max_open_per_loop) {
          // At the cap (sequential: one connection at a time): stop accepting;
          // new connections wait in the backlog until one closes.
          accept_paused_ = true;
          return;
        }
        if (accept_paused_) return;  // another listener reached the cap meanwhile
        accept(l);
      });
}

// Over the connection limit: a 503 in one non-blocking send (a new socket's
// buffer has room for it), then close. What the client already sent is read
// and dropped first, so that the close is a FIN, not a reset that could
// destroy the answer before the client reads it.
void loop::turn_away(loop_socket& s) {
  busy_reply_.clear();
  stats_.rejected(metrics::rejection::connections);
  http::write_error(busy_reply_, shared_.server_name, 503, false, false, "Retry-After: 1\r\n");
  const int fd = s.native_handle();
  [[maybe_unused]] auto sent =
      ::send(fd, busy_reply_.data(), busy_reply_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  char drop[4096];
  [[maybe_unused]] auto got = ::recv(fd, drop, sizeof drop, MSG_DONTWAIT);
  boost::system::error_code ignored;
  s.close(ignored);
}

// Once a second: close connections past their deadline, and park those
// quiet for a while (connection::park). A coarse sweep costs no timer
// operation per request.
void loop::sweep() {
  sweep_timer_.expires_after(std::chrono::seconds(1));
  sweep_timer_.async_wait([this](const boost::system::error_code& ec) {
    // A sweep that had already fired when the loop finished must not arm
    // another: the loop would never run out of work.
    if (ec || !work_) return;
    auto now = connection::clock::now();
    // Closing only cancels a connection's waits, so none is destroyed while
    // the set is walked.
    for (connection* c : connections_) c->check_deadline(now);
    for (connection* c : connections_) c->park(now);
    // What closed connections freed goes back to the system (the daemon's
    // heap keeps freed memory otherwise): once a second at most, and not
    // while large requests are coming (their pages are kept for the next).
    if (freed_since_sweep_) {
      freed_since_sweep_ = false;
      trimmer_.idle_freed();
    }
    sweep();
  });
}

void loop::stop(std::chrono::milliseconds drain) {
  net::post(io_, [this, drain] { begin_drain(drain); });
}

void loop::begin_drain(std::chrono::milliseconds drain) {
  if (draining_) return;
  draining_ = true;
  for (auto& l : listeners_) {
    boost::system::error_code ignored;
    l->acceptor.close(ignored);
    l->retry.cancel();
  }
  drain_sweep();
  drain_deadline_ = std::chrono::steady_clock::now() + drain;
  arm_drain_deadline();
  finish_if_drained();
}

void loop::arm_drain_deadline() {
  drain_timer_.expires_at(drain_deadline_);
  drain_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !work_) return;
    // Past the deadline: whatever is left is cut off, and said so (a
    // client sees only its connection close).
    std::vector<connection*> left(connections_.begin(), connections_.end());
    if (!left.empty()) {
      // Which clients held the stop, and how (the first few).
      std::string which;
      constexpr std::size_t named = 4;
      for (std::size_t i = 0; i < left.size() && i < named; ++i)
        which += (i == 0 ? ": " : "; ") + left[i]->state_text();
      if (left.size() > named) which += "; and " + std::to_string(left.size() - named) + " more";
      shared_.lines.say(log_level::warning, "drain deadline reached; closing %zu connection(s)%s",
                        left.size(), which.c_str());
    }
    for (connection* c : left) c->close();
    // Their pending handlers (a call still running holds its connection)
    // are dropped with the loop's own io_context; a caller's runs them, and
    // the loop finishes once the last connection is gone.
    if (!external_) io_.stop();
  });
}

// A connection accepted as the drain began (the listener already closed):
// served under the drain's rules, even if the loop had found itself done.
void loop::serve_late(loop_socket s, const tcp::endpoint& peer) {
  const bool finished = !work_;
  if (finished) work_.emplace(net::make_work_guard(io_));
  std::make_shared<connection>(*this, std::move(s), peer)->start();
  if (connections_.empty()) {  // closed at once
    finish_if_drained();
    return;
  }
  if (finished) arm_drain_deadline();
  drain_sweep();
}

// Draining: every 50 ms, each connection closes if it is idle and quiet,
// until none is left.
void loop::drain_sweep() {
  const auto now = connection::clock::now();
  std::vector<connection*> open(connections_.begin(), connections_.end());
  for (connection* c : open) c->drain(now);
  if (connections_.empty()) return;
  quiet_timer_.expires_after(std::chrono::milliseconds(50));
  quiet_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) drain_sweep();
  });
}

void loop::finish_if_drained() {
  if (!connections_.empty() || !work_) return;
  sweep_timer_.cancel();
  drain_timer_.cancel();
  quiet_timer_.cancel();
  trimmer_.finish();         // not later: the loop is done (a fork or prefork child's connection)
  if (log_) log_->finish();  // the last lines now, not at the next tick
  work_.reset();             // run() returns once the queued handlers are done
  if (external_) {
    // The cancelled waits' handlers are queued ahead of this one: once it
    // runs, no handler of the loop's is left in the caller's io_context.
    net::post(io_, [this] {
      if (work_) return;  // a late connection revived it (serve_late())
      std::lock_guard hold(finish_lock_);
      finished_ = true;
      finish_cv_.notify_all();
    });
  }
}

}  // namespace detail

}  // namespace rapidrpc

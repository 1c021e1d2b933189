// Private: a connection's read, as a socket's async_read_some, that tells
// the loop's reactor when it drained the socket.
//
// Asio's epoll reactor tries a read at once when it is started, unless it
// knows the socket to be drained; it takes only the end of the stream for
// drained. So after each keep-alive request the next read began with a
// recv() that failed with EAGAIN: one system call in three of a request
// (send, recv, recv), 1.2 us on this project's test machine. This read
// tells the reactor when the socket is drained (socket_read.hpp: by the
// kernel's count of what is left, or without one by a short read), and the
// reactor then waits for epoll's next report before it reads again. Its
// handler is told what the read left: handler(ec, n, left).
//
// It is built from Asio's reactor operations (boost::asio::detail), which
// are not a public interface: only with the Boost release it was written
// and tested against (1.81) and the epoll reactor. Anywhere else it is
// async_read_some, which is correct everywhere and costs the one call; so
// is it where RAPIDRPC_NO_DRAINED_READ is defined, which the
// ThreadSanitizer build does (CMakeLists.txt), so that CI runs that path.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/version.hpp>

#include "server/socket_read.hpp"

#include <cstddef>
#include <type_traits>
#include <utility>

#if BOOST_VERSION == 108100 && defined(BOOST_ASIO_HAS_EPOLL) && \
    !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT) &&             \
    !defined(BOOST_ASIO_ENABLE_HANDLER_TRACKING) && !defined(RAPIDRPC_NO_DRAINED_READ)
#define RAPIDRPC_DRAINED_READ 1
#include <boost/asio/detail/epoll_reactor.hpp>
#include <boost/asio/detail/reactive_socket_service.hpp>
#include <boost/asio/detail/reactor_op.hpp>

#include <cerrno>
#include <memory>
#endif

namespace rapidrpc::detail {

#ifdef RAPIDRPC_DRAINED_READ

namespace drained {

namespace asio_detail = boost::asio::detail;

// The socket's implementation is a protected member; a pointer to a
// member, named through a derived class, reaches it (the standard's own
// rule for protected access).
template <class Socket>
struct socket_access : Socket {
  static auto& impl(Socket& s) { return s.*(&socket_access::impl_); }
};

/// One read of at most `size` bytes into `data`; `handler(ec, n, left)` on
/// the socket's executor, as async_read_some's with what the read left.
template <class Handler>
class read_op : public asio_detail::reactor_op {
 public:
  read_op(int fd, void* data, std::size_t size, Handler&& handler)
      : reactor_op(boost::system::error_code(), &read_op::perform_read, &read_op::complete),
        fd_(fd),
        data_(data),
        size_(size),
        handler_(std::move(handler)) {}

 private:
  static status perform_read(reactor_op* base) {
    auto* o = static_cast<read_op*>(base);
    for (;;) {
      const socket_read r = read_socket(o->fd_, o->data_, o->size_);
      if (r.n > 0) {
        o->bytes_transferred_ = static_cast<std::size_t>(r.n);
        o->left_ = r.left;
        // Drained: epoll reports the next bytes (or the end).
        return r.drained(o->size_) ? done_and_exhausted : done;
      }
      if (r.n == 0) {
        o->ec_ = boost::asio::error::eof;
        return done_and_exhausted;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return not_done;
      o->ec_ = boost::system::error_code(errno, boost::system::system_category());
      return done;
    }
  }

  // `owner` is null when the io_context is destroyed with the operation
  // still queued: the operation is freed, its handler not called.
  static void complete(void* owner, asio_detail::operation* base,
                       const boost::system::error_code& /*ec*/, std::size_t /*n*/) {
    std::unique_ptr<read_op> o(static_cast<read_op*>(base));
    Handler handler(std::move(o->handler_));
    const boost::system::error_code ec = o->ec_;
    const std::size_t n = o->bytes_transferred_;
    const read_left left = o->left_;
    o.reset();
    if (owner != nullptr) handler(ec, n, left);
  }

  int fd_;
  void* data_;
  std::size_t size_;
  read_left left_ = read_left::unknown;
  Handler handler_;
};

}  // namespace drained

/// Reads for the sockets of one io_context (whose reactor it finds once).
class drained_reader {
 public:
  explicit drained_reader(boost::asio::io_context& io)
      : reactor_(boost::asio::use_service<drained::asio_detail::epoll_reactor>(io)) {}

  /// Reads at most `into.size()` bytes (more than 0) from `s` (of this
  /// io_context, open, in non-blocking mode) and then calls
  /// `handler(ec, n, left)` from the io_context, as s.async_read_some(into,
  /// handler) does with (ec, n); cancelled, closed or destroyed alike.
  template <class Socket, class Handler>
  void read(Socket& s, boost::asio::mutable_buffer into, Handler&& handler) {
    auto& impl = drained::socket_access<Socket>::impl(s).get_implementation();
    auto* op = new drained::read_op<std::decay_t<Handler>>(impl.socket_, into.data(), into.size(),
                                                           std::forward<Handler>(handler));
    reactor_.start_op(drained::asio_detail::epoll_reactor::read_op, impl.socket_,
                      impl.reactor_data_, op, false, true);
  }

 private:
  drained::asio_detail::epoll_reactor& reactor_;
};

#else

class drained_reader {
 public:
  explicit drained_reader(boost::asio::io_context& /*io*/) {}

  template <class Socket, class Handler>
  void read(Socket& s, boost::asio::mutable_buffer into, Handler&& handler) {
    s.async_read_some(into, [h = std::forward<Handler>(handler)](
                                const boost::system::error_code& ec, std::size_t n) mutable {
      h(ec, n, read_left::unknown);
    });
  }
};

#endif

}  // namespace rapidrpc::detail

// Private: one read of a connection's socket that also says whether the
// socket holds more after it, by the kernel's account: TCP_INQ's count of
// what is left (tcp(7)), which the listening sockets ask for and pass on
// to the connections they accept (loop.cpp, process_modes.cpp). The kernel
// counts after the read, so the end of the stream is in it too: it counts
// as one byte left.
//
// With edge-triggered readiness an arrival is reported once, so a reader
// must know when it has drained the socket. A short read says so for the
// bytes, but not for an end of the stream that came with them: taken for
// drained, such a socket is not read again until something else arrives,
// and a client that half-closes after its request (`nc -N`, socat) waited
// for the parking to find its end (connection.cpp). The count says it.
// Where there is none (a socket that did not ask, a kernel before 4.18), a
// short read is taken for drained, as before.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstring>

namespace rapidrpc::detail {

/// What a read left in the socket.
enum class read_left : signed char {
  unknown,  ///< no count came with the read
  nothing,  ///< drained: epoll reports the next arrival
  more,     ///< bytes, or the end of the stream: read again
};

struct socket_read {
  ssize_t n = -1;  ///< as recv()'s (errno set when negative)
  read_left left = read_left::unknown;

  /// Whether the socket is drained once `n` of `asked` bytes are read: by
  /// the count, or, without one, by a short read.
  [[nodiscard]] bool drained(std::size_t asked) const noexcept {
    return left == read_left::nothing ||
           (left == read_left::unknown && static_cast<std::size_t>(n) < asked);
  }
};

/// recv(fd, data, size, 0), with the count of what is left when the socket
/// asked for it.
inline socket_read read_socket(int fd, void* data, std::size_t size) noexcept {
  iovec iov{data, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  socket_read r;
  r.n = ::recvmsg(fd, &msg, 0);
  if (r.n < 0) return r;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_TCP && c->cmsg_type == TCP_CM_INQ) {
      int left = 0;
      std::memcpy(&left, CMSG_DATA(c), sizeof left);
      r.left = left > 0 ? read_left::more : read_left::nothing;
    }
  }
  return r;
}

/// Asks a TCP socket (a listening one: for every connection it accepts
/// from now on) for the count. Best effort: without it reads say unknown.
inline void ask_for_read_counts(int fd) noexcept {
  const int on = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_INQ, &on, sizeof on);
}

}  // namespace rapidrpc::detail

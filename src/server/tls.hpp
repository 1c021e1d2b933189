// Private: TLS for the server's connections, on OpenSSL.
//
// A tls::context is built once by server::start() from server_options::tls
// and shared read-only by every loop (and inherited by the processes of the
// fork and prefork modes). Each TLS connection owns a tls::session: an SSL
// object on the connection's own non-blocking socket, through a BIO of ours
// that reads what the loop's readiness read already took off the socket
// first, then the socket (socket_read.hpp); writes go out with
// send(MSG_NOSIGNAL). The connection keeps its structure: read_some() and
// flush() call session::read() and session::write(), which say "would
// block" as the socket calls do, and which way (a TLS read may need the
// socket writable, a write readable).
#pragma once

#include "server/socket_read.hpp"

#include <rapidrpc/tls_options.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

struct ssl_st;
struct ssl_ctx_st;

namespace rapidrpc::detail::tls {

/// The server's TLS settings, loaded: TLS 1.2 or later, modern AEAD cipher
/// suites with forward secrecy, no compression, no renegotiation, stateless
/// session tickets.
class context {
 public:
  /// Loads the certificate chain and the private key. Throws
  /// std::runtime_error naming the file and OpenSSL's reason if either
  /// cannot be loaded or they do not match.
  explicit context(const tls_options& options);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  ssl_ctx_st* native() const noexcept { return ctx_; }

 private:
  ssl_ctx_st* ctx_ = nullptr;
};

/// One connection's TLS state. Used from the connection's loop thread only.
class session {
 public:
  /// How an operation ended.
  enum class status : std::uint8_t {
    ok,          ///< bytes moved
    want_read,   ///< wait until the socket is readable, then call again
    want_write,  ///< wait until the socket is writable, then call again
    eof,         ///< the peer closed the TLS stream
    failed,      ///< a handshake or protocol error, or the socket failed
  };

  /// A server-side session on `fd` (the handshake runs within the first
  /// reads). Throws std::bad_alloc.
  session(ssl_ctx_st* ctx, int fd);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Reads up to `len` bytes of plaintext into `buf`; `n` is set on ok.
  status read(char* buf, std::size_t len, std::size_t& n);
  /// Writes up to `len` bytes from `buf` (at least one TLS record's worth
  /// unless blocked); `n` is set on ok. After want_*, call again with the
  /// same bytes (the buffer may have moved or grown).
  status write(const char* buf, std::size_t len, std::size_t& n);
  /// True once the handshake has completed.
  bool established() const noexcept;
  /// True if a read would surely block: nothing is buffered here or in
  /// OpenSSL, and the last read of the socket found it drained.
  bool drained() const noexcept;
  /// Sends close_notify if the session is in a state to, without waiting
  /// for the socket or for the peer's answer.
  void close_notify() noexcept;

  /// The loop's readiness read puts ciphertext here; the next read() takes
  /// it before reading the socket. `space()` has room for `capacity()`
  /// (allocated again after release_buffers(); throws std::bad_alloc).
  char* space();
  static constexpr std::size_t capacity() noexcept { return prefetch_capacity; }
  void received(std::size_t n, read_left left) noexcept;
  /// True if nothing is buffered, here or in OpenSSL: a read of the
  /// socket is the only way on.
  bool holds_nothing() const noexcept;
  /// Frees the readiness read's buffer and OpenSSL's record buffers, if
  /// they hold nothing (an idle connection, parked: it reads no more into
  /// space() until it wakes).
  void release_buffers() noexcept;

  // For the BIO.
  int bio_read(char* buf, int len);
  int bio_write(const char* buf, int len);

 private:
  static constexpr std::size_t prefetch_capacity = 17 * 1024;  // a whole TLS record
  status result(int ret, std::size_t& n);

  ssl_st* ssl_ = nullptr;
  int fd_;
  std::unique_ptr<char[]> prefetch_;
  std::size_t prefetch_begin_ = 0;
  std::size_t prefetch_end_ = 0;
  bool drained_ = false;  // the last read of the socket drained it (socket_read.hpp)
  bool failed_ = false;   // no close_notify after a fatal error
};

}  // namespace rapidrpc::detail::tls

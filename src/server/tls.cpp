#include "server/tls.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sys/socket.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace rapidrpc::detail::tls {

namespace {

// TLS 1.2 suites: ECDHE key exchange and AEAD ciphers only. (TLS 1.3 has
// only such suites; OpenSSL's default list for it is kept.)
constexpr const char* tls12_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// OpenSSL's reasons, oldest first, without repeats; the queue is emptied.
std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    const char* reason = ERR_GET_LIB(e) == ERR_LIB_SYS ? std::strerror(ERR_GET_REASON(e))
                                                       : ERR_reason_error_string(e);
    std::string text = reason ? reason : "error " + std::to_string(ERR_GET_REASON(e));
    if (text == "system lib" || out.find(text) != std::string::npos) continue;
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? std::string("unknown error") : out;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("TLS: " + what + ": " + openssl_errors());
}

// An encrypted private key is an error, not a prompt on the terminal.
int no_password(char*, int, int, void*) { return 0; }

// ---- the BIO: the connection's socket, with the loop's read in front ----------

session* of(BIO* b) { return static_cast<session*>(BIO_get_data(b)); }

int bio_read(BIO* b, char* buf, int len) {
  BIO_clear_retry_flags(b);
  int n = of(b)->bio_read(buf, len);
  if (n < 0 && errno == EAGAIN) BIO_set_retry_read(b);
  return n;
}

int bio_write(BIO* b, const char* buf, int len) {
  BIO_clear_retry_flags(b);
  int n = of(b)->bio_write(buf, len);
  if (n < 0 && errno == EAGAIN) BIO_set_retry_write(b);
  return n;
}

long bio_ctrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;  // writes are never buffered here
}

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

int bio_destroy(BIO*) { return 1; }

const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rapidrpc socket");
    if (m == nullptr || BIO_meth_set_read(m, bio_read) != 1 ||
        BIO_meth_set_write(m, bio_write) != 1 || BIO_meth_set_ctrl(m, bio_ctrl) != 1 ||
        BIO_meth_set_create(m, bio_create) != 1 || BIO_meth_set_destroy(m, bio_destroy) != 1)
      throw std::bad_alloc();
    return m;
  }();
  return method;
}

}  // namespace

// ---- context --------------------------------------------------------------------

context::context(const tls_options& options) {
  if (options.certificate_chain_file.empty() || options.private_key_file.empty())
    throw std::runtime_error("TLS needs both a certificate chain file and a private key file");
  ERR_clear_error();
  socket_method();  // built once, before any loop thread can race for it
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (ctx_ == nullptr) fail("cannot create a context");
  try {
    if (SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION) != 1) fail("cannot require TLS 1.2");
    SSL_CTX_set_options(
        ctx_, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    if (SSL_CTX_set_cipher_list(ctx_, tls12_ciphers) != 1) fail("cannot set the cipher suites");
    // Partial writes: flush() sends record by record from its output buffer,
    // which may grow (and move) between a blocked write and its retry.
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // Reading ahead lets a short socket read tell that the socket is drained.
    SSL_CTX_set_read_ahead(ctx_, 1);
    // Resumption by stateless tickets only: no session cache shared (and
    // locked) between the loops.
    SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx_, 1);
    SSL_CTX_set_default_passwd_cb(ctx_, no_password);

    const auto& chain = options.certificate_chain_file;
    const auto& key = options.private_key_file;
    if (SSL_CTX_use_certificate_chain_file(ctx_, chain.c_str()) != 1)
      fail("cannot load the certificate chain from " + chain);
    if (SSL_CTX_use_PrivateKey_file(ctx_, key.c_str(), SSL_FILETYPE_PEM) != 1)
      fail("cannot load the private key from " + key);
    if (SSL_CTX_check_private_key(ctx_) != 1)
      fail("the private key in " + key + " does not match the certificate in " + chain);
  } catch (...) {
    SSL_CTX_free(ctx_);
    throw;
  }
}

context::~context() { SSL_CTX_free(ctx_); }

// ---- session ---------------------------------------------------------------------

session::session(ssl_ctx_st* ctx, int fd) : fd_(fd) {
  ssl_ = SSL_new(ctx);
  BIO* bio = ssl_ ? BIO_new(socket_method()) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl_);
    ERR_clear_error();
    throw std::bad_alloc();
  }
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);  // the SSL owns the BIO
  SSL_set_accept_state(ssl_);
}

session::~session() { SSL_free(ssl_); }

char* session::space() {
  if (!prefetch_) prefetch_ = std::make_unique_for_overwrite<char[]>(prefetch_capacity);
  return prefetch_.get();
}

bool session::holds_nothing() const noexcept {
  return prefetch_begin_ == prefetch_end_ && SSL_has_pending(ssl_) == 0;
}

void session::release_buffers() noexcept {
  if (prefetch_begin_ != prefetch_end_) return;
  prefetch_.reset();
  prefetch_begin_ = prefetch_end_ = 0;
  // OpenSSL's record buffers too (~34 KiB), if empty; allocated again by
  // the next read or write. Only here, not after every record
  // (SSL_MODE_RELEASE_BUFFERS): a busy connection keeps them.
  (void)SSL_free_buffers(ssl_);
}

void session::received(std::size_t n, read_left left) noexcept {
  prefetch_begin_ = 0;
  prefetch_end_ = n;
  drained_ = socket_read{static_cast<ssize_t>(n), left}.drained(prefetch_capacity);
}

bool session::established() const noexcept { return SSL_is_init_finished(ssl_) == 1; }

bool session::drained() const noexcept { return drained_ && holds_nothing(); }

session::status session::read(char* buf, std::size_t len, std::size_t& n) {
  ERR_clear_error();
  int ret = SSL_read(ssl_, buf, static_cast<int>(std::min<std::size_t>(len, 1 << 30)));
  return result(ret, n);
}

session::status session::write(const char* buf, std::size_t len, std::size_t& n) {
  ERR_clear_error();
  int ret = SSL_write(ssl_, buf, static_cast<int>(std::min<std::size_t>(len, 1 << 30)));
  return result(ret, n);
}

session::status session::result(int ret, std::size_t& n) {
  if (ret > 0) {
    n = static_cast<std::size_t>(ret);
    return status::ok;
  }
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
      return status::want_read;
    case SSL_ERROR_WANT_WRITE:
      return status::want_write;
    case SSL_ERROR_ZERO_RETURN:
      return status::eof;  // also a TCP end without close_notify
    default:
      // A failed handshake (a plain-HTTP client, an old protocol, no
      // common cipher), a bad record, or a dead socket.
      failed_ = true;
      ERR_clear_error();
      return status::failed;
  }
}

void session::close_notify() noexcept {
  if (failed_ || SSL_is_init_finished(ssl_) != 1) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // one try: a full socket loses it
  ERR_clear_error();
}

int session::bio_read(char* buf, int len) {
  if (prefetch_begin_ < prefetch_end_) {
    std::size_t n = std::min(prefetch_end_ - prefetch_begin_, static_cast<std::size_t>(len));
    std::memcpy(buf, prefetch_.get() + prefetch_begin_, n);
    prefetch_begin_ += n;
    return static_cast<int>(n);
  }
  for (;;) {
    const socket_read r = read_socket(fd_, buf, static_cast<std::size_t>(len));
    if (r.n >= 0) {
      // Edge-triggered: once drained, the next arrival wakes the loop.
      drained_ = r.drained(static_cast<std::size_t>(len));
      return static_cast<int>(r.n);
    }
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) errno = EAGAIN;
    drained_ = errno == EAGAIN;
    return -1;
  }
}

int session::bio_write(const char* buf, int len) {
  for (;;) {
    ssize_t n = ::send(fd_, buf, static_cast<std::size_t>(len), MSG_NOSIGNAL);
    if (n >= 0) return static_cast<int>(n);
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) errno = EAGAIN;
    return -1;
  }
}

}  // namespace rapidrpc::detail::tls

// The TLS side of an https client: the context, and the host check of each
// session. rapidrpc::client and `rapidrpc bench` both use it, so both verify
// a server the same way.
//
// Threading: make_tls_client_context() may be called from any thread; a
// context may then be shared by sessions on several threads (OpenSSL's
// rules); a session (SSL object) is used by one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace boost::asio::ssl {
class context;
}
struct ssl_st;  // OpenSSL's SSL

namespace rapidrpc {

/// How an https client checks the server.
struct tls_client_options {
  /// A PEM file of the CA certificates the server's chain must lead to
  /// (empty: the system's store).
  std::string ca_file;
  /// Verify the chain and that the certificate names the host. false is
  /// INSECURE: any certificate is accepted, so anyone able to intercept the
  /// connection can read and change it. Only for tests.
  bool verify = true;
};

/// A client context: TLS 1.2 or 1.3, no compression, the CA certificates of
/// `options` loaded when verifying. Throws std::invalid_argument, saying
/// which file and why, if they cannot be loaded.
std::shared_ptr<boost::asio::ssl::context> make_tls_client_context(
    const tls_client_options& options);

/// Prepares one client session for `host` (a DNS name, or an IP address
/// without brackets, as in the URL): SNI for a name, and with `verify` the
/// certificate must name that host or address in its subjectAltName.
/// Returns false if OpenSSL cannot take the host (the session must not go on).
bool set_tls_client_host(ssl_st* session, const std::string& host, bool verify) noexcept;

/// Why a client handshake on `session` failed: "certificate verify failed:
/// " and OpenSSL's reason if the chain or the name was refused, else `error`
/// (the handshake's own error message).
std::string tls_handshake_failure(const ssl_st* session, std::string_view error);

}  // namespace rapidrpc

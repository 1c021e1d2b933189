// The TLS client context and session checks (include/rapidrpc/tls_client.hpp).
#include <rapidrpc/tls_client.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace rapidrpc {

namespace ssl = boost::asio::ssl;

std::shared_ptr<ssl::context> make_tls_client_context(const tls_client_options& options) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::no_compression);
  if (!options.verify) {
    ctx->set_verify_mode(ssl::verify_none);
    return ctx;
  }
  boost::system::error_code ec;
  if (options.ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec)
      throw std::invalid_argument("cannot load the system's CA certificates: " + ec.message());
  } else {
    ctx->load_verify_file(options.ca_file, ec);
    if (ec)
      throw std::invalid_argument("cannot load CA certificates from " + options.ca_file + ": " +
                                  ec.message());
  }
  ctx->set_verify_mode(ssl::verify_peer);
  return ctx;
}

bool set_tls_client_host(ssl_st* session, const std::string& host, bool verify) noexcept {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  const bool address = !ec;
  if (!address) SSL_set_tlsext_host_name(session, host.c_str());  // SNI takes names only; a hint
  if (!verify) return true;
  // OpenSSL checks the certificate's subjectAltName (or CN) against the
  // URL's host: a name, or an IP address.
  return address ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(session), host.c_str()) == 1
                 : SSL_set1_host(session, host.c_str()) == 1;
}

std::string tls_handshake_failure(const ssl_st* session, std::string_view error) {
  const long verify = SSL_get_verify_result(session);
  if (verify != X509_V_OK)
    return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
  return std::string(error);
}

}  // namespace rapidrpc

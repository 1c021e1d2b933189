// TLS (HTTPS) for a server: the certificate chain and key files.
#pragma once

#include <string>

namespace rapidrpc {

/// TLS (HTTPS) for a server. Both files set: every connection speaks TLS
/// 1.2 or 1.3; both empty: plain HTTP. server::start() loads them and
/// throws std::runtime_error if either is missing, unreadable or malformed,
/// if only one is set, or if the key does not match the certificate.
struct tls_options {
  /// PEM file: the server's certificate first, then any intermediate CA
  /// certificates, in order.
  std::string certificate_chain_file;
  /// PEM file: the certificate's private key, not encrypted.
  std::string private_key_file;

  /// True if TLS is asked for (either file set).
  bool enabled() const noexcept {
    return !certificate_chain_file.empty() || !private_key_file.empty();
  }
};

}  // namespace rapidrpc

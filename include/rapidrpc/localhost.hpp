// The one rule for the name "localhost", shared by the server's listener,
// the client and `rapidrpc bench`.
//
// Threading: a pure function.
#pragma once

#include <algorithm>
#include <string_view>

namespace rapidrpc {

/// True if `host` is "localhost", ASCII case ignored as in every DNS name.
/// Such a host means the loopback addresses, 127.0.0.1 and ::1, without
/// asking the resolver (RFC 6761), so it works with no /etc/hosts entry:
/// the server listens on both, and the client and `rapidrpc bench` connect
/// to them.
inline bool is_localhost(std::string_view host) noexcept {
  constexpr std::string_view name = "localhost";
  return std::ranges::equal(host, name, [](char a, char b) {
    return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
  });
}

}  // namespace rapidrpc

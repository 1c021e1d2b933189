// Access control: who may connect (address ranges), who may call (HTTP Basic
// authentication against password hashes), and what a call's caller is, as
// an authorization hook sees it (rapidrpc/registry.hpp, call_peer).
//
// Threading: every function here is safe to call from any thread; an
// ip_network or users table is read-only once built.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace rapidrpc {

/// An address range in CIDR notation: "127.0.0.0/8", "::1/128", "10.1.2.3"
/// (a bare address is the range of that one address).
class ip_network {
 public:
  /// Parses CIDR notation; throws std::invalid_argument if it is not an
  /// IPv4 or IPv6 address with an optional prefix length in range. Bits past
  /// the prefix are ignored ("10.1.2.3/8" is 10.0.0.0/8).
  static ip_network parse(std::string_view cidr);

  /// True if `a` is in the range. An IPv4-mapped IPv6 address
  /// (::ffff:127.0.0.1) is taken as the IPv4 address it maps, and a range
  /// written as an IPv4-mapped IPv6 prefix of at least 96 bits matches
  /// IPv4 addresses.
  bool contains(const boost::asio::ip::address& a) const noexcept;

  /// The range in CIDR notation, with the bits past the prefix cleared.
  std::string to_string() const;

 private:
  bool v6_ = false;
  unsigned prefix_ = 0;
  unsigned char bytes_[16] = {};
};

/// User names and their password hashes, for HTTP Basic authentication.
/// A name is 1 to 64 printable ASCII characters other than ':', space and
/// '"'; a hash is in the form hash_password() writes.
using users_table = std::map<std::string, std::string, std::less<>>;

/// The PBKDF2 iteration count hash_password() uses by default.
inline constexpr unsigned default_password_iterations = 100'000;

/// Hashes a password with PBKDF2-HMAC-SHA256 and a random 16-byte salt, in
/// the modular crypt form `$pbkdf2-sha256$ITERATIONS$SALT$HASH` (SALT and
/// HASH in the "adapted base64" of passlib: the standard alphabet with '.'
/// for '+', no padding; HASH is 32 bytes). Python's passlib writes and reads
/// the same form (passlib.hash.pbkdf2_sha256). Throws
/// std::invalid_argument for iterations outside [1000, 100000000], and
/// std::runtime_error if no random bytes can be had.
std::string hash_password(std::string_view password,
                          unsigned iterations = default_password_iterations);

/// True if `password` matches `hash` (the form above). Compares in constant
/// time; a malformed hash never matches.
bool verify_password(std::string_view password, std::string_view hash);

/// True if `hash` is well-formed (the form above, iterations in range).
bool valid_password_hash(std::string_view hash) noexcept;

/// Reads a users file: one `name:hash` per line; blank lines and lines
/// starting with '#' are skipped; surrounding spaces and a CR before the
/// line end are ignored. Throws std::runtime_error naming the line of the
/// first bad name, bad hash, missing ':' or repeated name (never quoting
/// the hash).
users_table parse_users(std::string_view text);

/// parse_users() on a file's contents; also throws std::runtime_error if
/// the file cannot be read.
users_table load_users(const std::string& path);

/// How the access log writes its lines (server_options::log.format).
enum class access_log_format : std::uint8_t {
  text,  ///< TIME PEER USER "METHOD" STATUS FAULT REQUEST_BYTES RESPONSE_BYTES MICROSECONDS
  json,  ///< one JSON object a line
};

}  // namespace rapidrpc

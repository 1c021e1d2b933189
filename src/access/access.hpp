// Private: the server's access checks, made when a request's header is
// complete (before its body is read): the peer's address against the
// allowed ranges, and HTTP Basic credentials against the users table.
//
// The policy is built before the loops start and read-only after; each
// connection keeps its own peer_access. A successful verification is
// remembered by the connection (the same Authorization value on its next
// request costs a comparison) and by its loop thread, in a small cache of
// salted SHA-256 digests (a new connection with known credentials costs one
// digest), so PBKDF2 runs once per credentials and loop, not per request.
#pragma once

#include <rapidrpc/access.hpp>

#include <boost/asio/ip/address.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc::detail {

/// What one connection has established.
struct peer_access {
  bool allowed = true;                ///< the peer's address is in an allowed range
  const std::string* user = nullptr;  ///< the authenticated user, if any
  std::string verified;               ///< the Authorization value that verified
};

/// The realm of the WWW-Authenticate challenge.
inline constexpr std::string_view auth_challenge = "WWW-Authenticate: Basic realm=\"rapidrpc\"\r\n";

class access_policy {
 public:
  /// Throws std::invalid_argument for a malformed hash or user name.
  access_policy(const users_table& users, std::vector<ip_network> allow);

  /// True if requests must pass check_header().
  bool active() const noexcept { return !allow_.empty() || !users_.empty(); }
  /// True if requests must carry credentials.
  bool authenticates() const noexcept { return !users_.empty(); }
  /// True if `a` is in an allowed range (or no range is set).
  bool allowed(const boost::asio::ip::address& a) const noexcept;

  /// The check of one request's header: 0 to go on, 403 if the peer is not
  /// allowed, 401 if credentials are needed and `authorization` (the
  /// header's value, empty if absent) does not hold valid ones. Updates
  /// `peer` (the user, the verified value). Loop thread only.
  int check_header(peer_access& peer, std::string_view authorization) const;

  /// The user `authorization` authenticates, or nullptr. Runs PBKDF2 unless
  /// the loop's cache knows the value; an unknown user costs as much as a
  /// known one.
  const std::string* authenticate(std::string_view authorization) const;

 private:
  struct user {
    std::string name;
    unsigned iterations = 0;
    std::string salt;
    std::string hash;
  };

  std::vector<ip_network> allow_;
  std::vector<user> users_;  // sorted by name
  user dummy_;               // verified against for unknown names
  unsigned char cache_salt_[16] = {};
};

namespace password {

/// Splits a `$pbkdf2-sha256$N$SALT$HASH` string; false if malformed.
bool parse(std::string_view text, unsigned& iterations, std::string& salt, std::string& hash);
/// PBKDF2-HMAC-SHA256 of `pw` into 32 bytes.
std::string derive(std::string_view pw, std::string_view salt, unsigned iterations);
/// Passlib's adapted base64 ('.' for '+', no padding).
std::string ab64_encode(std::string_view bytes);
bool ab64_decode(std::string_view text, std::string& out);

}  // namespace password

/// Standard base64 (with padding) as in a Basic credentials value; false if
/// malformed.
bool base64_decode(std::string_view text, std::string& out);

}  // namespace rapidrpc::detail

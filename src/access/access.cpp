#include "access/access.hpp"

#include <rapidrpc/literals.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace rapidrpc {

// ---- ip_network -----------------------------------------------------------------

ip_network ip_network::parse(std::string_view cidr) {
  auto slash = cidr.find('/');
  std::string addr_text(cidr.substr(0, slash));
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(addr_text, ec);
  if (ec) throw std::invalid_argument("not an IP address: \"" + addr_text + "\"");
  ip_network n;
  n.v6_ = a.is_v6();
  unsigned max = n.v6_ ? 128 : 32;
  n.prefix_ = max;
  if (slash != std::string_view::npos) {
    std::string_view len = cidr.substr(slash + 1);
    unsigned p = 0;
    auto r = std::from_chars(len.data(), len.data() + len.size(), p);
    if (len.empty() || r.ec != std::errc() || r.ptr != len.data() + len.size() || p > max)
      throw std::invalid_argument("bad prefix length in \"" + std::string(cidr) + "\"");
    n.prefix_ = p;
  }
  if (n.v6_) {
    auto b = a.to_v6().to_bytes();
    std::memcpy(n.bytes_, b.data(), 16);
  } else {
    auto b = a.to_v4().to_bytes();
    std::memcpy(n.bytes_, b.data(), 4);
  }
  // Clear the bits past the prefix.
  for (unsigned i = 0; i < 16; ++i) {
    unsigned first = i * 8;
    if (first >= n.prefix_)
      n.bytes_[i] = 0;
    else if (first + 8 > n.prefix_)
      n.bytes_[i] &= static_cast<unsigned char>(0xff00u >> (n.prefix_ - first));
  }
  return n;
}

namespace {

bool prefix_match(const unsigned char* a, const unsigned char* net, unsigned prefix) {
  unsigned full = prefix / 8;
  if (std::memcmp(a, net, full) != 0) return false;
  unsigned rest = prefix % 8;
  if (rest == 0) return true;
  auto mask = static_cast<unsigned char>(0xff00u >> rest);
  return (a[full] & mask) == net[full];
}

constexpr unsigned char v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

}  // namespace

bool ip_network::contains(const boost::asio::ip::address& a) const noexcept {
  if (a.is_v4() || (a.is_v6() && a.to_v6().is_v4_mapped())) {
    auto v4 =
        a.is_v4()
            ? a.to_v4().to_bytes()
            : boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()).to_bytes();
    if (!v6_) return prefix_match(v4.data(), bytes_, prefix_);
    // An IPv4-mapped range (::ffff:10.0.0.0/104) matches IPv4 peers.
    if (prefix_ < 96 || std::memcmp(bytes_, v4_mapped_prefix, 12) != 0) return false;
    return prefix_match(v4.data(), bytes_ + 12, prefix_ - 96);
  }
  if (!v6_) return false;
  auto b = a.to_v6().to_bytes();
  return prefix_match(b.data(), bytes_, prefix_);
}

std::string ip_network::to_string() const {
  std::string s;
  if (v6_) {
    boost::asio::ip::address_v6::bytes_type b;
    std::memcpy(b.data(), bytes_, 16);
    s = boost::asio::ip::address_v6(b).to_string();
  } else {
    boost::asio::ip::address_v4::bytes_type b;
    std::memcpy(b.data(), bytes_, 4);
    s = boost::asio::ip::address_v4(b).to_string();
  }
  return s + "/" + std::to_string(prefix_);
}

// ---- password hashes ------------------------------------------------------------

namespace detail {

namespace {

constexpr std::string_view hash_scheme = "$pbkdf2-sha256$";
constexpr unsigned min_iterations = 1000;
constexpr unsigned max_iterations = 100'000'000;
constexpr std::size_t hash_bytes = 32;
constexpr std::size_t salt_bytes = 16;

}  // namespace

bool base64_decode(std::string_view text, std::string& out) {
  // The library's decoder skips spaces; a credentials token holds none.
  if (text.find_first_of(" \t\r\n") != std::string_view::npos) return false;
  std::vector<std::uint8_t> bytes;
  if (!rapidrpc::decode_base64(text, bytes)) return false;
  out.assign(bytes.begin(), bytes.end());
  return true;
}

namespace password {

// Passlib's ab64 is standard base64 with '.' for '+' and no padding.
std::string ab64_encode(std::string_view bytes) {
  std::string out;
  rapidrpc::append_base64(out, bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  std::replace(out.begin(), out.end(), '+', '.');
  return out;
}

bool ab64_decode(std::string_view text, std::string& out) {
  if (text.size() % 4 == 1 || text.find_first_of("+= \t\r\n") != std::string_view::npos)
    return false;
  std::string padded(text);
  std::replace(padded.begin(), padded.end(), '.', '+');
  padded.append((4 - padded.size() % 4) % 4, '=');
  return base64_decode(padded, out);
}

bool parse(std::string_view text, unsigned& iterations, std::string& salt, std::string& hash) {
  if (text.substr(0, hash_scheme.size()) != hash_scheme) return false;
  text.remove_prefix(hash_scheme.size());
  auto d1 = text.find('$');
  if (d1 == std::string_view::npos) return false;
  auto d2 = text.find('$', d1 + 1);
  if (d2 == std::string_view::npos) return false;
  std::string_view n = text.substr(0, d1);
  if (n.empty() || n.size() > 9 || n[0] == '0') return false;
  auto r = std::from_chars(n.data(), n.data() + n.size(), iterations);
  if (r.ec != std::errc() || r.ptr != n.data() + n.size()) return false;
  if (iterations < min_iterations || iterations > max_iterations) return false;
  if (!ab64_decode(text.substr(d1 + 1, d2 - d1 - 1), salt) || salt.empty() || salt.size() > 1024)
    return false;
  return ab64_decode(text.substr(d2 + 1), hash) && hash.size() == hash_bytes;
}

std::string derive(std::string_view pw, std::string_view salt, unsigned iterations) {
  std::string out(hash_bytes, '\0');
  if (PKCS5_PBKDF2_HMAC(pw.data(), static_cast<int>(pw.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), static_cast<int>(iterations), EVP_sha256(),
                        static_cast<int>(out.size()),
                        reinterpret_cast<unsigned char*>(out.data())) != 1)
    throw std::runtime_error("PBKDF2 failed");
  return out;
}

}  // namespace password
}  // namespace detail

std::string hash_password(std::string_view password, unsigned iterations) {
  if (iterations < detail::min_iterations || iterations > detail::max_iterations)
    throw std::invalid_argument("iterations must be between 1000 and 100000000");
  std::string salt(detail::salt_bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()), static_cast<int>(salt.size())) != 1)
    throw std::runtime_error("no random bytes for a salt");
  auto hash = detail::password::derive(password, salt, iterations);
  return std::string(detail::hash_scheme) + std::to_string(iterations) + "$" +
         detail::password::ab64_encode(salt) + "$" + detail::password::ab64_encode(hash);
}

bool valid_password_hash(std::string_view hash) noexcept {
  unsigned n = 0;
  std::string salt, h;
  try {
    return detail::password::parse(hash, n, salt, h);
  } catch (...) {
    return false;
  }
}

bool verify_password(std::string_view password, std::string_view hash) {
  unsigned n = 0;
  std::string salt, expected;
  if (!detail::password::parse(hash, n, salt, expected)) return false;
  auto got = detail::password::derive(password, salt, n);
  return CRYPTO_memcmp(got.data(), expected.data(), expected.size()) == 0;
}

// ---- users files ------------------------------------------------------------------

namespace {

bool valid_user_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c > ' ' && c < 0x7f && c != ':' && c != '"'; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

users_table parse_users(std::string_view text) {
  users_table out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    auto nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    auto where = "line " + std::to_string(line_no) + ": ";
    auto colon = line.find(':');
    if (colon == std::string_view::npos) throw std::runtime_error(where + "expected name:hash");
    std::string_view name = line.substr(0, colon);
    std::string_view hash = line.substr(colon + 1);
    if (!valid_user_name(name))
      throw std::runtime_error(
          where + "bad user name (1 to 64 printable ASCII characters, no ':' or '\"')");
    if (!valid_password_hash(hash))
      throw std::runtime_error(where +
                               "bad password hash (expected $pbkdf2-sha256$ITERATIONS$SALT$HASH)");
    if (!out.emplace(std::string(name), std::string(hash)).second)
      throw std::runtime_error(where + "user \"" + std::string(name) + "\" appears twice");
  }
  return out;
}

users_table load_users(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path);
  try {
    return parse_users(text.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

// ---- the server's policy ------------------------------------------------------------

namespace detail {

access_policy::access_policy(const users_table& users, std::vector<ip_network> allow)
    : allow_(std::move(allow)) {
  unsigned most = min_iterations;
  for (const auto& [name, hash] : users) {
    if (!valid_user_name(name)) throw std::invalid_argument("bad user name \"" + name + "\"");
    user u;
    u.name = name;
    if (!password::parse(hash, u.iterations, u.salt, u.hash))
      throw std::invalid_argument("bad password hash for user \"" + name + "\"");
    most = std::max(most, u.iterations);
    users_.push_back(std::move(u));
  }
  std::sort(users_.begin(), users_.end(),
            [](const user& a, const user& b) { return a.name < b.name; });
  // An unknown user is verified against this, as slow as the slowest entry,
  // so the time taken does not tell which names exist.
  dummy_.iterations = most;
  dummy_.salt.assign(salt_bytes, 'x');
  dummy_.hash.assign(hash_bytes, '\0');
  if (RAND_bytes(cache_salt_, sizeof cache_salt_) != 1) throw std::runtime_error("no random bytes");
}

bool access_policy::allowed(const boost::asio::ip::address& a) const noexcept {
  if (allow_.empty()) return true;
  return std::any_of(allow_.begin(), allow_.end(),
                     [&](const ip_network& n) { return n.contains(a); });
}

int access_policy::check_header(peer_access& peer, std::string_view authorization) const {
  if (!peer.allowed) return 403;
  if (users_.empty()) return 0;
  // The same credentials as the connection's last request: already verified.
  if (peer.user != nullptr && authorization.size() == peer.verified.size() &&
      CRYPTO_memcmp(authorization.data(), peer.verified.data(), authorization.size()) == 0)
    return 0;
  peer.user = authenticate(authorization);
  if (peer.user == nullptr) {
    peer.verified.clear();
    return 401;
  }
  peer.verified.assign(authorization);
  return 0;
}

namespace {

// Each loop thread remembers the last credentials it verified, as salted
// digests of the whole Authorization value: a hit proves the same value was
// verified before, without keeping the password itself.
struct cache_entry {
  const void* policy = nullptr;
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  std::size_t user = 0;
};
constexpr std::size_t cache_size = 64;
struct verified_cache {
  std::array<cache_entry, cache_size> entries;
  std::size_t next = 0;  // replaced in turn
};
thread_local verified_cache cache;

}  // namespace

const std::string* access_policy::authenticate(std::string_view authorization) const {
  // "Basic" (any case), spaces, then base64 of "name:password".
  constexpr std::string_view scheme = "basic";
  if (authorization.size() < scheme.size() + 1) return nullptr;
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if ((authorization[i] | 0x20) != scheme[i]) return nullptr;
  std::string_view token = authorization.substr(scheme.size());
  if (token.front() != ' ') return nullptr;
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);

  thread_local std::string scratch;
  scratch.assign(reinterpret_cast<const char*>(cache_salt_), sizeof cache_salt_);
  scratch.append(token);
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(scratch.data()), scratch.size(), digest.data());
  for (const auto& e : cache.entries)
    if (e.policy == this && CRYPTO_memcmp(e.digest.data(), digest.data(), digest.size()) == 0)
      return &users_[e.user].name;

  std::string& credentials = scratch;
  if (!base64_decode(token, credentials)) return nullptr;
  auto colon = credentials.find(':');
  if (colon == std::string::npos) return nullptr;
  std::string_view name(credentials.data(), colon);
  std::string_view pw(credentials.data() + colon + 1, credentials.size() - colon - 1);

  auto it = std::lower_bound(users_.begin(), users_.end(), name,
                             [](const user& u, std::string_view n) { return u.name < n; });
  const bool known = it != users_.end() && it->name == name;
  const user& u = known ? *it : dummy_;
  auto got = password::derive(pw, u.salt, u.iterations);
  bool ok = CRYPTO_memcmp(got.data(), u.hash.data(), hash_bytes) == 0;
  if (!known || !ok) return nullptr;

  auto& slot = cache.entries[cache.next];
  cache.next = (cache.next + 1) % cache_size;
  slot.policy = this;
  slot.digest = digest;
  slot.user = static_cast<std::size_t>(it - users_.begin());
  return &it->name;
}

}  // namespace detail
}  // namespace rapidrpc

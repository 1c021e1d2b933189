// rapidrpc::structure: the hash index of large structs, erasing, equality.
#include <rapidrpc/value.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <random>

namespace rapidrpc {

namespace {

// SipHash-1-3 (Aumasson and Bernstein), the keyed hash that Python and Rust
// use for their dictionaries against hash flooding. The key is drawn once
// per process, so a client cannot choose member names that collide.
struct sip_key {
  std::uint64_t k0;
  std::uint64_t k1;
};

sip_key make_key() {
  std::random_device rd;
  auto draw = [&rd] { return (std::uint64_t{rd()} << 32) ^ rd(); };
  return {draw(), draw()};
}

const sip_key& process_key() {
  static const sip_key key = make_key();
  return key;
}

inline void sip_round(std::uint64_t& v0, std::uint64_t& v1, std::uint64_t& v2, std::uint64_t& v3) {
  v0 += v1;
  v1 = std::rotl(v1, 13);
  v1 ^= v0;
  v0 = std::rotl(v0, 32);
  v2 += v3;
  v3 = std::rotl(v3, 16);
  v3 ^= v2;
  v0 += v3;
  v3 = std::rotl(v3, 21);
  v3 ^= v0;
  v2 += v1;
  v1 = std::rotl(v1, 17);
  v1 ^= v2;
  v2 = std::rotl(v2, 32);
}

std::uint64_t read_le64(const char* p) {
  std::uint64_t x = 0;
  for (int i = 7; i >= 0; --i) x = (x << 8) | static_cast<unsigned char>(p[i]);
  return x;
}

std::uint32_t hash_name(std::string_view name) {
  const sip_key& key = process_key();
  std::uint64_t v0 = 0x736f6d6570736575ULL ^ key.k0;
  std::uint64_t v1 = 0x646f72616e646f6dULL ^ key.k1;
  std::uint64_t v2 = 0x6c7967656e657261ULL ^ key.k0;
  std::uint64_t v3 = 0x7465646279746573ULL ^ key.k1;
  const char* p = name.data();
  const std::size_t n = name.size();
  const char* const whole_end = p + (n & ~std::size_t{7});
  for (; p != whole_end; p += 8) {
    const std::uint64_t m = read_le64(p);
    v3 ^= m;
    sip_round(v0, v1, v2, v3);
    v0 ^= m;
  }
  std::uint64_t last = std::uint64_t{n & 0xff} << 56;
  for (std::size_t i = 0; i < (n & 7); ++i)
    last |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  v3 ^= last;
  sip_round(v0, v1, v2, v3);
  v0 ^= last;
  v2 ^= 0xff;
  sip_round(v0, v1, v2, v3);
  sip_round(v0, v1, v2, v3);
  sip_round(v0, v1, v2, v3);
  const std::uint64_t h = v0 ^ v1 ^ v2 ^ v3;
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

}  // namespace

structure::size_type structure::probe(std::string_view name) const noexcept {
  const std::uint32_t h = hash_name(name);
  const std::size_t mask = index_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const slot& s = index_[i];
    if (s.position == 0) return npos;
    if (s.hash == h && members_[s.position - 1].first == name) return s.position - 1;
  }
}

namespace {

template <class Slot>
void place(std::vector<Slot>& table, Slot s) {
  const std::size_t mask = table.size() - 1;
  std::size_t i = s.hash & mask;
  while (table[i].position != 0) i = (i + 1) & mask;
  table[i] = s;
}

}  // namespace

void structure::index_last() {
  if (index_.empty()) return rebuild_index();
  if (members_.size() > max_size()) {
    members_.pop_back();
    throw std::length_error("rapidrpc::structure: too many members");
  }
  if (members_.size() * 2 > index_.size()) {
    // Double the table; the slots keep their hashes, so no name is hashed again.
    std::vector<slot> bigger(index_.size() * 2, slot{0, 0});
    for (const slot& s : index_)
      if (s.position != 0) place(bigger, s);
    index_.swap(bigger);
  }
  place(index_,
        slot{hash_name(members_.back().first), static_cast<std::uint32_t>(members_.size())});
}

void structure::rebuild_index() {
  index_.clear();
  if (members_.size() < index_from) return;
  index_.assign(std::bit_ceil(members_.size() * 2), slot{0, 0});
  for (std::size_t i = 0; i < members_.size(); ++i)
    place(index_, slot{hash_name(members_[i].first), static_cast<std::uint32_t>(i + 1)});
}

void structure::reserve(size_type n) { members_.reserve(n); }

structure::iterator structure::erase(const_iterator pos) { return erase(pos, pos + 1); }

structure::iterator structure::erase(const_iterator first, const_iterator last) {
  const auto at = first - members_.cbegin();
  if (first != last) {
    members_.erase(first, last);
    rebuild_index();  // the positions after the gap moved
  }
  return members_.begin() + at;
}

structure::size_type structure::erase(std::string_view name) {
  const size_type i = position_of(name);
  if (i == npos) return 0;
  erase(members_.cbegin() + static_cast<difference_type>(i));
  return 1;
}

bool operator==(const structure& a, const structure& b) {
  if (a.size() != b.size()) return false;
  std::size_t i = 0;
  // The same order is the common case: walk both while the names agree.
  for (; i < a.size() && a.members_[i].first == b.members_[i].first; ++i)
    if (!(a.members_[i].second == b.members_[i].second)) return false;
  // Then by name: the names are unique and the sizes equal, so every member
  // of a found in b with an equal value makes them the same mapping.
  for (; i < a.size(); ++i) {
    const auto j = b.position_of(a.members_[i].first);
    if (j == structure::npos || !(a.members_[i].second == b.members_[j].second)) return false;
  }
  return true;
}

}  // namespace rapidrpc

// Helpers shared by the fuzz targets: the invariant check, a strict value
// comparison, deterministic chunking, and the gunzip invariants (used by both
// the gzip and the http_request targets).
#pragma once

#include <rapidrpc/value.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include "http/gzip.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

/// An invariant: if it does not hold, say which one on stderr and trap, so
/// that libFuzzer (or the replay driver, or ctest) reports the input.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      __builtin_trap();                                                                 \
    }                                                                                   \
  } while (false)

namespace rapidrpc::fuzz {

/// Equality that also tells -0.0 from 0.0 (value's operator== does not): a
/// round trip must keep every bit of a double.
inline bool same(const value& a, const value& b);

inline bool same(const array& a, const array& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

inline bool same(const value& a, const value& b) {
  if (a.type() != b.type()) return false;
  if (const double* x = a.get_if<double>())
    return std::bit_cast<std::uint64_t>(*x) == std::bit_cast<std::uint64_t>(b.as<double>());
  if (const array* x = a.get_if<array>()) return same(*x, b.as<array>());
  if (const structure* x = a.get_if<structure>()) {
    const structure& y = b.as<structure>();
    if (x->size() != y.size()) return false;
    for (auto i = x->begin(), j = y.begin(); i != x->end(); ++i, ++j)
      if (i->first != j->first || !same(i->second, j->second)) return false;
    return true;
  }
  return a == b;
}

/// Cuts `data` into chunks of 1 to 32 bytes, sizes drawn from a generator
/// seeded with a hash of the data: the same input is always cut the same way
/// (so a crash reproduces), different inputs differently.
inline std::vector<std::string_view> chunks(std::string_view data) {
  std::uint64_t h = 0xcbf29ce484222325u;  // FNV-1a
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3u;
  std::vector<std::string_view> out;
  while (!data.empty()) {
    h ^= h << 13;  // xorshift64
    h ^= h >> 7;
    h ^= h << 17;
    std::size_t n = 1 + static_cast<std::size_t>(h % 32);
    if (n > data.size()) n = data.size();
    out.push_back(data.substr(0, n));
    data.remove_prefix(n);
  }
  return out;
}

/// Feeds `doc` to `p` (reset first) in the pieces chunks() cuts, then
/// finishes. Returns what feed()/finish() said.
inline bool parse_in_chunks(xmlrpc::parser& p, std::string_view doc) {
  p.reset();
  for (std::string_view piece : chunks(doc))
    if (!p.feed(piece)) return false;
  return p.finish();
}

/// The same, in one piece (parse(): the direct scanner first, expat if
/// it gives up).
inline bool parse_whole(xmlrpc::parser& p, std::string_view doc) {
  p.reset();
  return p.parse(doc);
}

/// Runs http::gunzip on `in` under `limit` and checks what the server relies
/// on: the output never passes the limit by more than the one byte that
/// proves it too large; a success is reproduced exactly with the limit set to
/// its own size, and one byte less is too_large; a corrupt stream is corrupt
/// under any larger limit. Returns the result and leaves the output in `out`.
inline http::inflate_result check_gunzip(std::string_view in, std::string& out, std::size_t limit) {
  const http::inflate_result r = http::gunzip(in, out, limit);
  FUZZ_CHECK(out.size() <= limit + 1);
  std::string again;
  switch (r) {
    case http::inflate_result::ok:
      FUZZ_CHECK(out.size() <= limit);
      FUZZ_CHECK(http::gunzip(in, again, out.size()) == http::inflate_result::ok);
      FUZZ_CHECK(again == out);
      if (!out.empty())
        FUZZ_CHECK(http::gunzip(in, again, out.size() - 1) == http::inflate_result::too_large);
      break;
    case http::inflate_result::too_large: {
      // The output does pass the limit (or the data breaks further on);
      // what is left in `out` is unspecified (a bomb is only counted).
      const http::inflate_result wider = http::gunzip(in, again, 4 * limit + 4096);
      FUZZ_CHECK(wider != http::inflate_result::ok || again.size() > limit);
      break;
    }
    case http::inflate_result::corrupt:
      FUZZ_CHECK(http::gunzip(in, again, 4 * limit + 4096) == http::inflate_result::corrupt);
      break;
  }
  return r;
}

}  // namespace rapidrpc::fuzz

// Private: the bytes of a JSON string that stand for themselves, found
// many at a time; shared by the writer (what needs no escape) and the
// direct reader (what needs no unescaping or UTF-8 check).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rapidrpc::jsonrpc::detail {

// Printable ASCII but the quote and the backslash.
constexpr bool plain(unsigned char c) noexcept {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

#if defined(__SSE2__)
// 0xFF in each of the 16 bytes at `at` that is not plain(). As signed
// bytes, anything below 0x20 and anything from 0x80 up is less than 0x20:
// one comparison finds both.
inline __m128i not_plain(const unsigned char* at) noexcept {
  const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  return _mm_or_si128(
      _mm_cmplt_epi8(w, _mm_set1_epi8(0x20)),
      _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('"')), _mm_cmpeq_epi8(w, _mm_set1_epi8('\\'))));
}
#endif

// The first byte in [p, end) that is not plain(), or `end`: sixteen bytes
// at a time (SSE2), the first of them that is not plain found in the
// comparison's mask, after a run of 64 at a time; eight at a time (then one
// by one) in the last sixteen.
inline const unsigned char* skip_plain(const unsigned char* p, const unsigned char* end) noexcept {
#if defined(__SSE2__)
  const auto stops = not_plain;
  // A string of more than 16 plain bytes may be long (a base64 value, a
  // document): 64 bytes a turn, one test of the four blocks' stops
  // together; the block that has one is found below. A short one, most
  // strings, ends in its first block.
  if (end - p >= 16) {
    if (const int found = _mm_movemask_epi8(stops(p)); found != 0)
      return p + std::countr_zero(static_cast<unsigned>(found));
    p += 16;
  }
  while (end - p >= 64) {
    const __m128i any = _mm_or_si128(_mm_or_si128(stops(p), stops(p + 16)),
                                     _mm_or_si128(stops(p + 32), stops(p + 48)));
    if (_mm_movemask_epi8(any) != 0) break;
    p += 64;
  }
  while (end - p >= 16) {
    if (const int found = _mm_movemask_epi8(stops(p)); found != 0)
      return p + std::countr_zero(static_cast<unsigned>(found));
    p += 16;
  }
#endif
  constexpr std::uint64_t ones = 0x0101010101010101U;
  constexpr std::uint64_t highs = 0x8080808080808080U;
  // Whether a byte of x is zero (exact when no byte has its high bit set).
  const auto has_zero = [](std::uint64_t x) { return ((x - ones) & ~x & highs) != 0; };
  while (end - p >= 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    if ((w & highs) != 0) break;                    // non-ASCII
    if ((((w - 0x20 * ones) & ~w & highs) != 0) ||  // a byte < 0x20
        has_zero(w ^ ('"' * ones)) || has_zero(w ^ ('\\' * ones)))
      break;
    p += 8;
  }
  while (p != end && plain(*p)) ++p;
  return p;
}

}  // namespace rapidrpc::jsonrpc::detail

// Base64 (include/rapidrpc/literals.hpp), its block codecs (value/base64.hpp).
#include "value/base64.hpp"

#include <rapidrpc/literals.hpp>

#include <array>
#include <cstddef>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RAPIDRPC_BASE64_X86 1
#endif

namespace rapidrpc {
namespace {

constexpr char base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Sextet of each byte in the alphabet; not_base64 elsewhere.
constexpr std::uint8_t not_base64 = 0xFF;
constexpr std::array<std::uint8_t, 256> base64_sextets = [] {
  std::array<std::uint8_t, 256> t{};
  t.fill(not_base64);
  for (int i = 0; i < 64; ++i) {
    t[static_cast<unsigned char>(base64_alphabet[i])] = static_cast<std::uint8_t>(i);
  }
  return t;
}();

// Each byte's sextet already in its place in a group of four (`shift` 18,
// 12, 6 or 0); not_in_group for a byte outside the alphabet, so that one
// test of the four ORed together finds any of them.
constexpr std::uint32_t not_in_group = 0x80000000U;
constexpr std::array<std::uint32_t, 256> base64_placed(int shift) {
  std::array<std::uint32_t, 256> t{};
  for (std::size_t c = 0; c < 256; ++c)
    t[c] =
        base64_sextets[c] == not_base64 ? not_in_group : std::uint32_t{base64_sextets[c]} << shift;
  return t;
}
constexpr auto base64_placed_0 = base64_placed(18);
constexpr auto base64_placed_1 = base64_placed(12);
constexpr auto base64_placed_2 = base64_placed(6);
constexpr auto base64_placed_3 = base64_placed(0);

// The two characters of every 12 bits: two lookups per three bytes.
constexpr auto base64_pairs = [] {
  std::array<std::array<char, 2>, 4096> t{};
  for (std::size_t i = 0; i < 4096; ++i) t[i] = {base64_alphabet[i >> 6], base64_alphabet[i & 63]};
  return t;
}();

constexpr bool is_base64_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A block codec. decode: from the `n` characters at `in`, whole blocks (16
// or 32 characters) while every character of a block is in the alphabet;
// returns the characters used (a multiple of 4) and writes their bytes (3
// per 4) to `out`. encode: from the `n` bytes at `in`, whole blocks (12 or
// 24 bytes) while a block's loads fit in `n`; returns the bytes used (a
// multiple of 3) and writes their characters (4 per 3) to `out`. Neither
// reads past `n` nor writes more than the bytes or characters of what it
// used.
struct block_codec {
  const char* name;
  std::size_t (*decode)(const unsigned char* in, std::size_t n, std::uint8_t* out);
  std::size_t (*encode)(const std::uint8_t* in, std::size_t n, char* out);
};

#ifdef RAPIDRPC_BASE64_X86

// Decoding checks and translates 16 characters in a few instructions by
// their high and low 4 bits (the method of Muła and Lemire, "Faster Base64
// Encoding and Decoding using AVX2 Instructions", 2018):
//
// - Each high half (0-15) has a class bit; a low half has the bits of the
//   classes it is invalid in: a character is in the alphabet when the two
//   share no bit. Halves 0, 1 and 8-15 hold no character of the alphabet
//   and share one class.
// - Every character of a high half but '/' is the same distance from its
//   sextet: '+' 19, digits 4, 'A'-'Z' -65, 'a'-'z' -71; '/' is 16.
constexpr std::uint8_t high_class(std::size_t high) {
  return high >= 2 && high <= 7 ? static_cast<std::uint8_t>(1U << (high - 1)) : 1;
}

constexpr auto decode_high_classes = [] {
  std::array<std::uint8_t, 16> t{};
  for (std::size_t h = 0; h < 16; ++h) t[h] = high_class(h);
  return t;
}();

constexpr auto decode_low_invalid = [] {
  std::array<std::uint8_t, 16> t{};
  for (std::size_t h = 0; h < 16; ++h)
    for (std::size_t l = 0; l < 16; ++l)
      if (base64_sextets[h << 4 | l] == not_base64) t[l] |= high_class(h);
  return t;
}();

constexpr auto decode_offsets = [] {
  std::array<std::int8_t, 16> t{};
  for (std::size_t c = 0; c < 256; ++c)
    if (base64_sextets[c] != not_base64 && c != '/')
      t[c >> 4] = static_cast<std::int8_t>(base64_sextets[c] - static_cast<int>(c));
  return t;
}();
// What '/' adds to the offset of its high half (the one of '+').
constexpr auto slash_correction =
    static_cast<std::int8_t>(base64_sextets['/'] - '/' - decode_offsets['/' >> 4]);

// Packing 16 sextets into 12 bytes: pairs into 12 bits (first * 64 +
// second), pairs of those into 24 (first * 4096 + second), then the three
// bytes of each 32-bit lane, most significant first.
constexpr std::uint32_t pack_pairs = 0x01400140;
constexpr std::uint32_t pack_quads = 0x00011000;

// Encoding: the bytes of each group of three spread to four (b1 b0 b2 b1),
// the four sextets moved into their bytes with two multiplications, then
// translated by an offset looked up from each sextet's range.
constexpr std::uint32_t encode_mask_a = 0x0FC0FC00;  // sextets 0 and 2
constexpr std::uint32_t encode_mul_a = 0x04000040;   // their shifts right, as a high product
constexpr std::uint32_t encode_mask_b = 0x003F03F0;  // sextets 1 and 3
constexpr std::uint32_t encode_mul_b = 0x01000010;   // their shifts left

template <class T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::target("ssse3")]] inline void store_12(std::uint8_t* out, __m128i v) {
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), v);
  const auto last = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(v, 8)));
  std::memcpy(out + 8, &last, 4);
}

[[gnu::target("ssse3")]] __m128i table_128(const void* t) { return load<__m128i>(t); }

[[gnu::target("ssse3")]] std::size_t decode_ssse3(const unsigned char* in, std::size_t n,
                                                  std::uint8_t* out) {
  const __m128i classes = table_128(decode_high_classes.data());
  const __m128i invalid = table_128(decode_low_invalid.data());
  const __m128i offsets = table_128(decode_offsets.data());
  const __m128i nibble = _mm_set1_epi8(0x0F);
  const __m128i slash = _mm_set1_epi8('/');
  const __m128i correction = _mm_set1_epi8(slash_correction);
  const __m128i pairs = _mm_set1_epi32(pack_pairs);
  const __m128i quads = _mm_set1_epi32(pack_quads);
  const __m128i order = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
  std::size_t used = 0;
  for (; n - used >= 16; used += 16, out += 12) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + used));
    const __m128i high = _mm_and_si128(_mm_srli_epi32(c, 4), nibble);
    const __m128i low = _mm_and_si128(c, nibble);
    const __m128i bad =
        _mm_and_si128(_mm_shuffle_epi8(invalid, low), _mm_shuffle_epi8(classes, high));
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(bad, _mm_setzero_si128())) != 0xFFFF) break;
    const __m128i offset = _mm_add_epi8(_mm_shuffle_epi8(offsets, high),
                                        _mm_and_si128(_mm_cmpeq_epi8(c, slash), correction));
    const __m128i sextets = _mm_add_epi8(c, offset);
    const __m128i packed = _mm_madd_epi16(_mm_maddubs_epi16(sextets, pairs), quads);
    store_12(out, _mm_shuffle_epi8(packed, order));
  }
  return used;
}

[[gnu::target("avx2")]] __m256i table_256(const void* t) {
  return _mm256_broadcastsi128_si256(load<__m128i>(t));
}

[[gnu::target("avx2")]] std::size_t decode_avx2(const unsigned char* in, std::size_t n,
                                                std::uint8_t* out) {
  const __m256i classes = table_256(decode_high_classes.data());
  const __m256i invalid = table_256(decode_low_invalid.data());
  const __m256i offsets = table_256(decode_offsets.data());
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i slash = _mm256_set1_epi8('/');
  const __m256i correction = _mm256_set1_epi8(slash_correction);
  const __m256i pairs = _mm256_set1_epi32(pack_pairs);
  const __m256i quads = _mm256_set1_epi32(pack_quads);
  const __m256i order = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2,
                                         1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
  std::size_t used = 0;
  for (; n - used >= 32; used += 32, out += 24) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + used));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi32(c, 4), nibble);
    const __m256i low = _mm256_and_si256(c, nibble);
    const __m256i bad =
        _mm256_and_si256(_mm256_shuffle_epi8(invalid, low), _mm256_shuffle_epi8(classes, high));
    if (_mm256_movemask_epi8(_mm256_cmpeq_epi8(bad, _mm256_setzero_si256())) != -1) break;
    const __m256i offset =
        _mm256_add_epi8(_mm256_shuffle_epi8(offsets, high),
                        _mm256_and_si256(_mm256_cmpeq_epi8(c, slash), correction));
    const __m256i sextets = _mm256_add_epi8(c, offset);
    const __m256i packed = _mm256_madd_epi16(_mm256_maddubs_epi16(sextets, pairs), quads);
    const __m256i bytes = _mm256_shuffle_epi8(packed, order);  // 12 in each half
    store_12(out, _mm256_castsi256_si128(bytes));
    store_12(out + 12, _mm256_extracti128_si256(bytes, 1));
  }
  // The 16-character codec takes what is left: a short tail, or a block
  // whose second half has a line break.
  return used + decode_ssse3(in + used, n - used, out);
}

// Offsets from sextets to characters, by range: 26-51 (index 0), 52-61
// (1-10), 62, 63, 0-25 (13).
constexpr auto encode_offsets = [] {
  std::array<std::int8_t, 16> t{};
  t[0] = 'a' - 26;
  for (int i = 1; i <= 10; ++i) t[static_cast<std::size_t>(i)] = '0' - 52;
  t[11] = '+' - 62;
  t[12] = '/' - 63;
  t[13] = 'A';
  return t;
}();

[[gnu::target("ssse3")]] std::size_t encode_ssse3(const std::uint8_t* in, std::size_t n,
                                                  char* out) {
  const __m128i spread = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
  const __m128i mask_a = _mm_set1_epi32(static_cast<int>(encode_mask_a));
  const __m128i mul_a = _mm_set1_epi32(encode_mul_a);
  const __m128i mask_b = _mm_set1_epi32(encode_mask_b);
  const __m128i mul_b = _mm_set1_epi32(encode_mul_b);
  const __m128i offsets = table_128(encode_offsets.data());
  std::size_t used = 0;
  for (; n - used >= 16; used += 12, out += 16) {  // reads 16 bytes, uses 12
    const __m128i v =
        _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + used)), spread);
    const __m128i sextets = _mm_or_si128(_mm_mulhi_epu16(_mm_and_si128(v, mask_a), mul_a),
                                         _mm_mullo_epi16(_mm_and_si128(v, mask_b), mul_b));
    __m128i range = _mm_subs_epu8(sextets, _mm_set1_epi8(51));
    range = _mm_or_si128(
        range, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(26), sextets), _mm_set1_epi8(13)));
    const __m128i chars = _mm_add_epi8(sextets, _mm_shuffle_epi8(offsets, range));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), chars);
  }
  return used;
}

[[gnu::target("avx2")]] std::size_t encode_avx2(const std::uint8_t* in, std::size_t n, char* out) {
  const __m256i spread = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10, 1, 0,
                                          2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
  const __m256i mask_a = _mm256_set1_epi32(static_cast<int>(encode_mask_a));
  const __m256i mul_a = _mm256_set1_epi32(encode_mul_a);
  const __m256i mask_b = _mm256_set1_epi32(encode_mask_b);
  const __m256i mul_b = _mm256_set1_epi32(encode_mul_b);
  const __m256i offsets = table_256(encode_offsets.data());
  std::size_t used = 0;
  for (; n - used >= 28; used += 24, out += 32) {  // two halves of 12 from 16 bytes each
    const __m256i v = _mm256_shuffle_epi8(
        _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + used + 12)),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + used))),
        spread);
    const __m256i sextets = _mm256_or_si256(_mm256_mulhi_epu16(_mm256_and_si256(v, mask_a), mul_a),
                                            _mm256_mullo_epi16(_mm256_and_si256(v, mask_b), mul_b));
    __m256i range = _mm256_subs_epu8(sextets, _mm256_set1_epi8(51));
    range = _mm256_or_si256(
        range,
        _mm256_and_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(26), sextets), _mm256_set1_epi8(13)));
    const __m256i chars = _mm256_add_epi8(sextets, _mm256_shuffle_epi8(offsets, range));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), chars);
  }
  return used + encode_ssse3(in + used, n - used, out);
}

#endif  // RAPIDRPC_BASE64_X86

const block_codec& chosen() {
  static const block_codec codec = [] {
#ifdef RAPIDRPC_BASE64_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return block_codec{"avx2", decode_avx2, encode_avx2};
    if (__builtin_cpu_supports("ssse3")) return block_codec{"ssse3", decode_ssse3, encode_ssse3};
#endif
    return block_codec{"none", nullptr, nullptr};
  }();
  return codec;
}

template <bool Blocks>
bool decode(std::string_view text, std::vector<std::uint8_t>& out) {
  // Written in place (at most 3 bytes per 4 characters), then trimmed.
  const std::size_t old = out.size();
  out.resize(old + text.size() / 4 * 3 + 3);
  std::uint8_t* o = out.data() + old;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* const end = p + text.size();

  std::uint32_t group = 0;  // sextets of the current group of four
  int count = 0;            // characters of the current group seen, '=' included
  int padding = 0;          // '=' seen in the current group
  bool ended = false;       // a padded group closed the data
  const auto done = [&](bool ok) {
    out.resize(static_cast<std::size_t>(o - out.data()));
    return ok;
  };
  while (p != end) {
    // Whole groups of four data characters, the bulk of any text: decoded
    // four at a time. Anything else (a line break, '=', a bad byte) goes
    // one character at a time below. (Padding ends the data with count
    // left at 4, so nothing after it comes this way.)
    if (count == 0) {
      if constexpr (Blocks) {
        if (auto* const blocks = chosen().decode) {
          const std::size_t used = blocks(p, static_cast<std::size_t>(end - p), o);
          p += used;
          o += used / 4 * 3;
        }
      }
      while (end - p >= 4) {
        const std::uint32_t g = base64_placed_0[p[0]] | base64_placed_1[p[1]] |
                                base64_placed_2[p[2]] | base64_placed_3[p[3]];
        if ((g & not_in_group) != 0) break;  // not all four in the alphabet
        o[0] = static_cast<std::uint8_t>(g >> 16);
        o[1] = static_cast<std::uint8_t>(g >> 8);
        o[2] = static_cast<std::uint8_t>(g);
        o += 3;
        p += 4;
      }
      if (p == end) break;
    }
    const char ch = static_cast<char>(*p++);
    if (is_base64_space(ch)) continue;
    if (ended) return done(false);
    if (ch == '=') {
      if (count < 2) return done(false);  // "=" may only fill the last one or two places
      ++padding;
      if (++count < 4) continue;
      if (padding == 2) {  // two data characters: one byte, 4 unused bits
        if ((group & 0xF) != 0) return done(false);
        *o++ = static_cast<std::uint8_t>(group >> 4);
      } else {  // three data characters: two bytes, 2 unused bits
        if ((group & 0x3) != 0) return done(false);
        *o++ = static_cast<std::uint8_t>(group >> 10);
        *o++ = static_cast<std::uint8_t>(group >> 2);
      }
      ended = true;
      continue;
    }
    const std::uint8_t sextet = base64_sextets[static_cast<unsigned char>(ch)];
    if (sextet == not_base64 || padding != 0) return done(false);
    group = (group << 6) | sextet;
    if (++count == 4) {
      *o++ = static_cast<std::uint8_t>(group >> 16);
      *o++ = static_cast<std::uint8_t>(group >> 8);
      *o++ = static_cast<std::uint8_t>(group);
      group = 0;
      count = 0;
    }
  }
  return done(ended || count == 0);
}

template <bool Blocks>
void encode(std::string& out, std::span<const std::uint8_t> data) {
  const std::size_t old = out.size();
  out.resize(old + detail::base64_chars(data.size()));
  char* o = out.data() + old;
  const std::uint8_t* in = data.data();
  const std::size_t whole = data.size() / 3 * 3;
  if constexpr (Blocks) {
    if (auto* const blocks = chosen().encode) {
      const std::size_t used = blocks(in, data.size(), o);
      in += used;
      o += used / 3 * 4;
    }
  }
  for (const std::uint8_t* const in_end = data.data() + whole; in != in_end; in += 3, o += 4) {
    const std::uint32_t g = (std::uint32_t{in[0]} << 16) | (std::uint32_t{in[1]} << 8) | in[2];
    std::memcpy(o, base64_pairs[g >> 12].data(), 2);
    std::memcpy(o + 2, base64_pairs[g & 0xFFF].data(), 2);
  }
  std::size_t i = whole;
  if (const std::size_t rest = data.size() - i; rest != 0) {
    std::uint32_t g = std::uint32_t{data[i]} << 16;
    if (rest == 2) g |= std::uint32_t{data[i + 1]} << 8;
    *o++ = base64_alphabet[(g >> 18) & 63];
    *o++ = base64_alphabet[(g >> 12) & 63];
    *o++ = rest == 2 ? base64_alphabet[(g >> 6) & 63] : '=';
    *o++ = '=';
  }
}

}  // namespace

bool decode_base64(std::string_view text, std::vector<std::uint8_t>& out) {
  return decode<true>(text, out);
}

void append_base64(std::string& out, std::span<const std::uint8_t> data) {
  encode<true>(out, data);
}

void append_base64(std::string& out, std::string_view data) {
  append_base64(out, std::span(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}

namespace detail {

bool decode_base64_scalar(std::string_view text, std::vector<std::uint8_t>& out) {
  return decode<false>(text, out);
}

void append_base64_scalar(std::string& out, std::span<const std::uint8_t> data) {
  encode<false>(out, data);
}

std::string_view base64_block_codec() { return chosen().name; }

}  // namespace detail
}  // namespace rapidrpc

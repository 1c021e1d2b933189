// Base64's block codecs (src/value/base64.hpp) against its scalar code: the
// same text for every length, the same outcome for every byte in every
// place of a block, line breaks anywhere.
#include "value/base64.hpp"

#include <rapidrpc/literals.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rapidrpc {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, std::mt19937& random) {
  std::vector<std::uint8_t> data(n);
  for (auto& b : data) b = static_cast<std::uint8_t>(random());
  return data;
}

std::optional<std::vector<std::uint8_t>> decoded(std::string_view text, bool blocks) {
  std::vector<std::uint8_t> out{0x55};  // appended to, as by the parsers
  const bool ok = blocks ? decode_base64(text, out) : detail::decode_base64_scalar(text, out);
  if (!ok) return std::nullopt;
  return out;
}

#if defined(__x86_64__) || defined(__i386__)
TEST(Base64, TheWidestBlockCodecOfThisMachineIsUsed) {
  __builtin_cpu_init();
  const char* widest = __builtin_cpu_supports("avx2")    ? "avx2"
                       : __builtin_cpu_supports("ssse3") ? "ssse3"
                                                         : "none";
  EXPECT_EQ(detail::base64_block_codec(), widest);
}
#endif

TEST(Base64, EncodesAsTheScalarCodeAtEveryLength) {
  std::mt19937 random(1);
  for (std::size_t n = 0; n < 400; ++n) {
    const auto data = random_bytes(n, random);
    std::string fast = "x", scalar = "x";  // appended to
    append_base64(fast, data);
    detail::append_base64_scalar(scalar, data);
    ASSERT_EQ(fast, scalar) << n << " bytes";
    ASSERT_EQ(decoded(std::string_view(fast).substr(1), true),
              decoded(std::string_view(scalar).substr(1), false));
  }
  const auto large = random_bytes(1 << 20, random);
  std::string fast, scalar;
  append_base64(fast, large);
  detail::append_base64_scalar(scalar, large);
  EXPECT_EQ(fast, scalar);
}

TEST(Base64, DecodesAsTheScalarCodeWithAnyByteInAnyPlace) {
  std::mt19937 random(2);
  std::string text;
  append_base64(text, random_bytes(72, random));  // 96 characters: blocks of 16 and 32
  for (std::size_t place = 0; place < text.size(); ++place) {
    for (int byte = 0; byte < 256; ++byte) {
      std::string changed = text;
      changed[place] = static_cast<char>(byte);
      ASSERT_EQ(decoded(changed, true), decoded(changed, false))
          << "byte " << byte << " at " << place;
    }
  }
}

TEST(Base64, DecodesLineBreaksAndPaddingAnywhere) {
  std::mt19937 random(3);
  for (std::size_t n : {48, 49, 50, 95, 96, 97, 300}) {
    const auto data = random_bytes(n, random);
    std::string text;
    append_base64(text, data);
    std::vector<std::uint8_t> expected{0x55};
    expected.insert(expected.end(), data.begin(), data.end());
    for (std::size_t every = 1; every <= 80; ++every) {
      for (std::string_view gap : {"\n", "\r\n", " ", "\t \t"}) {
        std::string broken;
        for (std::size_t i = 0; i < text.size(); i += every)
          broken.append(text, i, every).append(gap);
        ASSERT_EQ(decoded(broken, true), expected) << n << " bytes, broken every " << every;
        ASSERT_EQ(decoded(broken, false), expected);
      }
    }
  }
}

}  // namespace
}  // namespace rapidrpc

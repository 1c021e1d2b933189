#include "http/gzip.hpp"

#include <gtest/gtest.h>

#include <random>

namespace rapidrpc::http {
namespace {

TEST(Gzip, RoundTrip) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "<value><int>" + std::to_string(i) + "</int></value>";
  std::string packed;
  gzip(text, packed);
  EXPECT_LT(packed.size(), text.size() / 4);
  std::string unpacked;
  ASSERT_EQ(gunzip(packed, unpacked, text.size()), inflate_result::ok);
  EXPECT_EQ(unpacked, text);
}

TEST(Gzip, LimitBoundary) {
  std::string text(10000, 'a');
  std::string packed, out;
  gzip(text, packed);
  EXPECT_EQ(gunzip(packed, out, 10000), inflate_result::ok);
  EXPECT_EQ(gunzip(packed, out, 9999), inflate_result::too_large);
}

TEST(Gzip, BombStopsAtTheLimit) {
  std::string packed, out;
  gzip(std::string(64 << 20, '\0'), packed);  // 64 MiB of zeros in ~64 KiB
  EXPECT_EQ(gunzip(packed, out, 1 << 20), inflate_result::too_large);
  EXPECT_LE(out.size(), (1u << 20) + 64 * 1024);
}

std::string with_claimed_size(std::string packed, std::uint32_t size) {
  for (int i = 0; i < 4; ++i) packed[packed.size() - 4 + i] = static_cast<char>(size >> (8 * i));
  return packed;
}

TEST(Gzip, ABombCostsNoMoreMemoryThanItsSizeFieldClaims) {
  std::string packed, out;
  gzip(std::string(64 << 20, '\0'), packed);
  // Its true size (mod 2^32) is past the limit: only counted.
  EXPECT_EQ(gunzip(packed, out, 1 << 20), inflate_result::too_large);
  EXPECT_LT(out.capacity(), 64u * 1024);
  // A lie of 1000 bytes: the output stops growing there, then is counted.
  EXPECT_EQ(gunzip(with_claimed_size(packed, 1000), out, 1 << 20), inflate_result::too_large);
  EXPECT_LT(out.capacity(), 64u * 1024);
}

TEST(Gzip, AnHonestBodyIsInflatedIntoOneAllocationOfItsSize) {
  std::string text(300'000, 'h'), packed, out;
  gzip(text, packed);
  ASSERT_EQ(gunzip(packed, out, 1 << 20), inflate_result::ok);
  EXPECT_EQ(out, text);
  EXPECT_LE(out.capacity(), text.size() + 64);
}

TEST(Gzip, AWrongSizeFieldStillGivesTheData) {
  // The size field is not checked by zlib before the end: a body whose field
  // is too small or too large (within the limit) inflates, then fails its
  // length check.
  std::string packed, out;
  gzip(std::string(5000, 'w'), packed);
  for (std::uint32_t size : {0u, 10u, 4999u, 5001u, 900'000u, 0xffffffffu})
    EXPECT_EQ(gunzip(with_claimed_size(packed, size), out, 1 << 20), inflate_result::corrupt)
        << size;
}

TEST(Gzip, ConcatenatedMembers) {
  std::string packed, out;
  gzip("abc", packed);
  gzip("def", packed);
  ASSERT_EQ(gunzip(packed, out, 100), inflate_result::ok);
  EXPECT_EQ(out, "abcdef");
  // The last member's size field is not the whole size: counted, then exact.
  std::string big(100'000, 'b');
  gzip(big, packed);
  gzip("abc", packed);
  ASSERT_EQ(gunzip(packed, out, 1 << 20), inflate_result::ok);
  EXPECT_EQ(out, "abcdef" + big + "abc");
  EXPECT_EQ(gunzip(packed, out, 100'008), inflate_result::too_large);
}

TEST(Gzip, AFailureLeavesNoOutputWhateverTheSizeFieldSays) {
  // A good member, then a broken one whose last four bytes (the "size
  // field") claim a small or a large size: corrupt either way, and nothing
  // of the good member is handed on (found by the gzip fuzz target).
  std::string good;
  gzip(std::string(300, 'x'), good);
  for (std::uint32_t claimed : {10u, 5000u, 0xFFFFFFFFu}) {
    std::string in = good + std::string("\x1f\x8b\x08\x00\x00\x00\xff\xff\xff\xff", 10);
    for (int i = 0; i < 4; ++i) in += static_cast<char>((claimed >> (8 * i)) & 0xFF);
    for (std::size_t limit : {1000u, 256u * 1024u}) {
      std::string out = "stale";
      EXPECT_EQ(gunzip(in, out, limit), inflate_result::corrupt) << claimed << " " << limit;
      EXPECT_TRUE(out.empty()) << claimed << " " << limit;
    }
  }
  std::string out = "stale";
  EXPECT_EQ(gunzip(good, out, 10), inflate_result::too_large);
  EXPECT_TRUE(out.empty());
}

TEST(Gzip, BrokenInputIsCorrupt) {
  std::string packed, out;
  gzip(std::string(1000, 'x'), packed);
  EXPECT_EQ(gunzip(packed.substr(0, packed.size() / 2), out, 1 << 20), inflate_result::corrupt);
  EXPECT_EQ(gunzip("not gzip at all", out, 1 << 20), inflate_result::corrupt);
  EXPECT_EQ(gunzip("", out, 1 << 20), inflate_result::corrupt);
  std::string flipped = packed;
  flipped[flipped.size() - 5] ^= 0x55;  // the CRC no longer matches
  EXPECT_EQ(gunzip(flipped, out, 1 << 20), inflate_result::corrupt);
}

}  // namespace
}  // namespace rapidrpc::http

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

TEST(Gzip, ConcatenatedMembers) {
  std::string packed, out;
  gzip("abc", packed);
  gzip("def", packed);
  ASSERT_EQ(gunzip(packed, out, 100), inflate_result::ok);
  EXPECT_EQ(out, "abcdef");
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

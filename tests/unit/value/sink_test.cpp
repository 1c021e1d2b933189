#include "value/sink.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc::detail {
namespace {

TEST(Sink, WritesAfterWhatTheStringHeldAndCutsItsRoomWhenDone) {
  std::string out = "head:";
  {
    sink to(out);
    to.put('[');
    to.put("abc");
    char* at = to.room(5);
    std::memcpy(at, "12345", 5);
    to.advance(at + 3);  // fewer than the room asked for
    to.put(']');
  }
  EXPECT_EQ(out, "head:[abc123]");
}

TEST(Sink, GrowsPastEveryStepAndKeepsEveryByte) {
  std::string out;
  std::string expected;
  {
    sink to(out);
    for (int i = 0; i < 5000; ++i) {
      std::string piece(static_cast<std::size_t>(i % 301), static_cast<char>('a' + i % 26));
      to.put(piece);
      expected += piece;
    }
  }
  EXPECT_EQ(out, expected);
}

TEST(Sink, AnEmptyPieceWithoutDataIsNothing) {
  std::string out = "a";
  {
    sink to(out);
    to.put(std::string_view());
  }
  EXPECT_EQ(out, "a");
}

TEST(Sink, WithStringSeesOnlyWhatWasWritten) {
  std::string out;
  {
    sink to(out);
    to.put("ab");
    to.with_string([](std::string& s) {
      EXPECT_EQ(s, "ab");
      s += "cd";
    });
    to.put('e');
  }
  EXPECT_EQ(out, "abcde");
}

// A large piece appended through with_string() with its size given is not
// copied again when the sink opens past it (a 10 MB base64 value was, once
// more than its own encoding cost).
TEST(Sink, APieceOfKnownSizeIsNotMovedAfterIt) {
  std::string out;
  const char* piece_at = nullptr;
  {
    sink to(out);
    to.put("<base64>");
    to.with_string(
        [&](std::string& s) {
          s.append(1 << 20, 'A');  // as append_base64 does: exactly what it needs
          piece_at = s.data();
        },
        1 << 20);
    to.put("</base64>");
    EXPECT_EQ(out.data(), piece_at);
  }
  EXPECT_EQ(out, "<base64>" + std::string(1 << 20, 'A') + "</base64>");
}

TEST(Sink, AnExceptionInWithStringLeavesTheStringAsItWasLeft) {
  std::string out = "x";
  try {
    sink to(out);
    to.put("y");
    to.with_string([](std::string& s) {
      s.append(100000, 'z');  // moves the string's storage
      throw std::runtime_error("stop");
    });
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(out, "xy" + std::string(100000, 'z'));
}

TEST(Sink, AnExceptionLeavesTheStringWithWhatWasWritten) {
  std::string out = "x";
  try {
    sink to(out);
    to.put("yz");
    throw std::runtime_error("stop");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(out, "xyz");
}

// The longest texts of each form fit the room asked for (literals_test
// compares the text with std::to_chars's over many doubles).
TEST(WriteDouble, TheLongestTextsOfEachForm) {
  const std::pair<double, std::string_view> cases[] = {
      {-1.2345678901234566e-07, "-0.00000012345678901234566"},  // plain, below 1
      {-9.999999999999999e20, "-999999999999999868928.0"},      // plain, exact integer
      {-2.2250738585072014e-308, "-2.2250738585072014e-308"},   // exponent
      {-1.7976931348623157e308, "-1.7976931348623157e+308"},
      {-1234567890123456.8, "-1234567890123456.8"},  // the furthest copy of digits
      {-4503599627370495.5, "-4503599627370495.5"},
      {-1e15, "-1000000000000000.0"},                // one digit, fifteen zeros
      {-9007199254740991.0, "-9007199254740991.0"},  // 2^53 - 1
      {1e21, "1e+21"},
      {0.5, "0.5"},
      {-0.0, "-0.0"},
  };
  for (const auto& [d, expected] : cases) {
    char text[max_double_chars];
    char* end = write_double(text, d);
    ASSERT_NE(end, nullptr);
    EXPECT_EQ(std::string_view(text, static_cast<std::size_t>(end - text)), expected);
  }
  char text[max_double_chars];
  EXPECT_EQ(write_double(text, std::numeric_limits<double>::infinity()), nullptr);
  EXPECT_EQ(write_double(text, std::numeric_limits<double>::quiet_NaN()), nullptr);
}

// write_integer and write_unsigned write what std::to_chars writes, for
// every digit count and both sides of each power of ten, and touch nothing
// past their room.
TEST(WriteInteger, AsStdToCharsWritesThem) {
  std::vector<std::uint64_t> cases = {0,
                                      1,
                                      9,
                                      10,
                                      99,
                                      100,
                                      std::numeric_limits<std::uint64_t>::max(),
                                      std::numeric_limits<std::uint64_t>::max() - 1};
  std::uint64_t p = 1;
  for (int i = 0; i < 19; ++i, p *= 10)
    for (std::uint64_t d : {p - 1, p, p + 1, 2 * p - 1, 5 * p, 9 * p + (p - 1)}) cases.push_back(d);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) cases.push_back(rng() >> (rng() % 64));
  const auto check = [](auto v, char* (*write)(char*, decltype(v)) noexcept) {
    char want[32];
    const auto w = std::to_chars(want, want + sizeof want, v);
    char got[max_integer_chars + 4];
    std::memset(got, '#', sizeof got);
    char* end = write(got, v);
    ASSERT_EQ(std::string_view(got, static_cast<std::size_t>(end - got)),
              std::string_view(want, static_cast<std::size_t>(w.ptr - want)))
        << v;
    for (std::size_t k = max_integer_chars; k < sizeof got; ++k) ASSERT_EQ(got[k], '#') << v;
  };
  for (std::uint64_t v : cases) {
    check(v, &write_unsigned);
    check(static_cast<std::int64_t>(v), &write_integer);
    check(-static_cast<std::int64_t>(v >> 1), &write_integer);
  }
  check(std::numeric_limits<std::int64_t>::min(), &write_integer);
}

TEST(WriteDateTime, BothForms) {
  const date_time t{1998, 7, 17, 14, 8, 55};
  char text[max_date_time_chars];
  EXPECT_EQ(std::string_view(text, static_cast<std::size_t>(
                                       write_date_time(text, t, date_format::basic) - text)),
            "19980717T14:08:55");
  EXPECT_EQ(std::string_view(text, static_cast<std::size_t>(
                                       write_date_time(text, t, date_format::extended) - text)),
            "1998-07-17T14:08:55");
}

}  // namespace
}  // namespace rapidrpc::detail

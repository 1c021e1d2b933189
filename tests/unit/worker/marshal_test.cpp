// The compact form of the worker protocol (src/worker/marshal.hpp): a call
// is written as Python's marshal.dumps((name, params), 2) writes it, byte
// for byte (the bytes below are Python 3.11's), and an answer is read as
// marshal.loads() reads it, or refused with the reason: malformed (the
// worker broke the form) or a value XML-RPC has no type for.
#include "worker/marshal.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

namespace rapidrpc::detail::marshal {
namespace {

using namespace std::string_view_literals;

outcome read(std::string_view answer, std::size_t depth = 64) {
  auto r = read_answer(answer, depth);
  if (auto* u = std::get_if<unreadable>(&r)) {
    ADD_FAILURE() << "unreadable: " << u->why;
    return value();
  }
  return std::get<outcome>(std::move(r));
}

// The result an answer carries (a failure if it is not one).
value result(std::string_view answer, std::size_t depth = 64) {
  auto o = read(answer, depth);
  if (auto* v = std::get_if<value>(&o)) return std::move(*v);
  ADD_FAILURE() << "a fault";
  return value();
}

unreadable refused(std::string_view answer, std::size_t depth = 64) {
  auto r = read_answer(answer, depth);
  if (auto* u = std::get_if<unreadable>(&r)) return *u;
  ADD_FAILURE() << "read";
  return {};
}

TEST(MarshalCall, IsWhatPythonsMarshalWrites) {
  std::string out;
  ASSERT_TRUE(append_call(out, "sample.add", {3, 5}));
  EXPECT_EQ(out, "m(\x02\0\0\0u\x0a\0\0\0sample.add(\x02\0\0\0i\x03\0\0\0i\x05\0\0\0"sv);

  out.clear();
  structure s;
  s.try_emplace("a", array{});
  ASSERT_TRUE(append_call(out, "m",
                          {std::int64_t{1} << 40, -(std::int64_t{1} << 40), -1, 1.5, "\xc3\xa9",
                           bytes("\0"sv), nil, true, false, array{1}, s}));
  EXPECT_EQ(out,
            "m(\x02\0\0\0u\x01\0\0\0m(\x0b\0\0\0"
            "l\x03\0\0\0\0\0\0\0\0\x04"
            "l\xfd\xff\xff\xff\0\0\0\0\0\x04"
            "i\xff\xff\xff\xff"
            "g\0\0\0\0\0\0\xf8?"
            "u\x02\0\0\0\xc3\xa9"
            "s\x01\0\0\0\0"
            "NTF"
            "[\x01\0\0\0i\x01\0\0\0"
            "{u\x01\0\0\0a[\0\0\0\0"
            "0"sv);
}

TEST(MarshalCall, ADateTimeHasNoMarshalFormAndLeavesTheOutputAsItWas) {
  std::string out = "kept";
  EXPECT_FALSE(append_call(out, "m", {1, array{date_time{}}}));
  EXPECT_EQ(out, "kept");
}

TEST(MarshalAnswer, ReadsWhatPythonsMarshalWrites) {
  EXPECT_EQ(result("ri\x08\0\0\0"sv), value(8));
  // Past 32 bits an integer is an i8, as Python's marshaller writes it.
  EXPECT_EQ(result("rl\x05\0\0\0\xff\x7f\xff\x7f\xff\x7f\xff\x7f\x07\0"sv),
            value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(result("rl\xfb\xff\xff\xff\0\0\0\0\0\0\0\0\x08\0"sv),
            value(std::numeric_limits<std::int64_t>::min()));
  structure s;
  s.try_emplace("a", array{});
  EXPECT_EQ(result("r(\x04\0\0\0u\x02\0\0\0\xc3\xa9s\x01\0\0\0\0N{u\x01\0\0\0a[\0\0\0\0"
                   "0"sv),
            value(array{"\xc3\xa9", bytes("\0"sv), nil, s}));
  const auto f = std::get<fault>(read("f(\x02\0\0\0i\x2a\0\0\0u\x01\0\0\0x"sv));
  EXPECT_EQ(f.code(), 42);
  EXPECT_EQ(f.message(), "x");
}

TEST(MarshalAnswer, WhatXmlRpcHasNoTypeForIsRefusedNotMalformed) {
  for (auto [answer, why] : {
           std::pair{"r<\x01\0\0\0i\x01\0\0\0"sv, "a set"sv},
           {"ry\0\0\0\0\0\0\xf0?\0\0\0\0\0\0\0\0"sv, "a complex number"sv},
           {"rl\x05\0\0\0\0\0\0\0\0\0\0\0\x10\0"sv, "an integer past 64 bits"sv},  // 2^64
           {"rl\x05\0\0\0\0\0\0\0\0\0\0\0\x08\0"sv, "an integer past 64 bits"sv},  // 2^63
           {"r{i\x01\0\0\0i\x02\0\0\0"
            "0"sv,
            "a dict key that is not a string"sv},
           {"ru\x03\0\0\0\xed\xa0\x80"sv,
            "a string that is not valid Unicode (a lone surrogate)"sv},
           {"rg\0\0\0\0\0\0\xf8\x7f"sv, "an infinite or NaN float"sv},
       }) {
    const auto u = refused(answer);
    EXPECT_FALSE(u.malformed) << why;
    EXPECT_EQ(u.why, why);
  }
  EXPECT_EQ(refused("r[\x01\0\0\0[\0\0\0\0"sv, 1).why,
            "arrays and structs nested deeper than the limit");
  EXPECT_EQ(result("r[\x01\0\0\0[\0\0\0\0"sv, 2), value(array{array{}}));
}

TEST(MarshalAnswer, ABrokenFormIsMalformed) {
  for (auto [answer, why] : {
           std::pair{"ri\x08\0\0"sv, "cut short"sv},
           {"ri\x08\0\0\0N"sv, "bytes after the value"sv},
           {"r[\xff\xff\xff\x7f"sv, "a length past the end"sv},
           {"ru\x05\0\0\0ab"sv, "a length past the end"sv},
           {"r?"sv, "an unknown type code"sv},
           {"r\xe9\x01\0\0\0"sv, "an unknown type code"sv},  // a reference (version 3)
           {"rl\x01\0\0\0\0\x80"sv, "a digit out of range in an integer"sv},
           {"r{u\x01\0\0\0aNu\x01\0\0\0aN0"sv, "a dict key twice"sv},
           {"f(\x01\0\0\0i\x01\0\0\0"sv, "a fault that is not a (code, text) pair"sv},
           {"<?xml version='1.0'?>"sv, "not an answer in marshal form"sv},
           {""sv, "not an answer in marshal form"sv},
       }) {
    const auto u = refused(answer);
    EXPECT_TRUE(u.malformed) << why;
    EXPECT_EQ(u.why, why);
  }
}

TEST(MarshalAnswer, ResultsReadAsTheyAreWritten) {
  structure s;
  s.try_emplace("b", bytes("\x01\x02"sv));
  s.try_emplace("i8", std::int64_t{-5'000'000'000});
  const value v = array{nil, true, -0.0, std::int32_t{-7}, "x", s, array{array{}}};
  std::string out(1, result_tag);
  ASSERT_TRUE(append_value(out, v));
  EXPECT_EQ(result(out), v);
}

}  // namespace
}  // namespace rapidrpc::detail::marshal

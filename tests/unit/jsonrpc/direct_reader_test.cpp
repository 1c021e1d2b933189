// The direct JSON reader (src/jsonrpc/scanner.hpp) against Boost.JSON's
// basic_parser alone: the same requests, responses and values, the same
// errors, on hand-picked texts and on random changes of them; and the
// texts it must read itself rather than give up on.
#include "jsonrpc/reader.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace rapidrpc::jsonrpc {
namespace {

using detail::reader;

// A value as text that tells every kind apart (i4 from i8, 0.0 from -0.0,
// a struct's member order).
std::string describe(const value& v) {
  switch (v.type()) {
    case kind::nil:
      return "nil";
    case kind::i4:
      return "i4:" + std::to_string(v.as<std::int32_t>());
    case kind::i8:
      return "i8:" + std::to_string(v.as<std::int64_t>());
    case kind::boolean:
      return v.as<bool>() ? "true" : "false";
    case kind::floating:
      return "double:" + std::to_string(std::bit_cast<std::uint64_t>(v.as<double>()));
    case kind::string:
      return "string:" + std::to_string(v.as<std::string>().size()) + ":" + v.as<std::string>();
    case kind::date_time:
    case kind::binary: {
      std::string out;
      write_value(out, v);
      return std::string(kind_name(v.type())) + ":" + out;
    }
    case kind::array: {
      std::string out = "[";
      for (const auto& item : v.as<array>()) out += describe(item) + ",";
      return out + "]";
    }
    case kind::structure: {
      std::string out = "{";
      for (const auto& [name, member] : v.as<structure>())
        out += std::to_string(name.size()) + ":" + name + "=" + describe(member) + ",";
      return out + "}";
    }
  }
  return "?";
}

std::string describe(const error_reply& e) {
  return "error " + e.id + " " + std::to_string(e.code) + " " + e.detail;
}

std::string describe(const std::variant<message, error_reply>& r) {
  if (const auto* e = std::get_if<error_reply>(&r)) return describe(*e);
  const auto& m = std::get<message>(r);
  std::string out = m.batch ? "batch" : "single";
  for (const auto& entry : m.entries) {
    if (const auto* e = std::get_if<error_reply>(&entry)) {
      out += "; " + describe(*e);
      continue;
    }
    const auto& q = std::get<request>(entry);
    out += "; " + q.method + " id " + q.id + " " + describe(value(q.params));
    if (q.named) out += " named " + describe(value(*q.named));
  }
  return out;
}

std::string describe(const std::variant<response, error_reply>& r) {
  if (const auto* e = std::get_if<error_reply>(&r)) return describe(*e);
  const auto& a = std::get<response>(r);
  if (const auto* f = std::get_if<fault>(&a.outcome))
    return "fault " + a.id + " " + std::to_string(f->code()) + " " + f->message();
  return "result " + a.id + " " + describe(std::get<value>(a.outcome));
}

std::string describe(const std::variant<value, error_reply>& r) {
  if (const auto* e = std::get_if<error_reply>(&r)) return describe(*e);
  return describe(std::get<value>(r));
}

// Every reading of `text` the same both ways, under `lim`.
void expect_same(std::string_view text, const limits& lim = {}) {
  EXPECT_EQ(describe(detail::parse_request(text, lim, reader::direct_first)),
            describe(detail::parse_request(text, lim, reader::boost_only)))
      << text;
  EXPECT_EQ(describe(detail::parse_response(text, lim, reader::direct_first)),
            describe(detail::parse_response(text, lim, reader::boost_only)))
      << text;
  EXPECT_EQ(describe(detail::parse_value(text, lim, reader::direct_first)),
            describe(detail::parse_value(text, lim, reader::boost_only)))
      << text;
}

const std::vector<std::string>& texts() {
  static const std::vector<std::string> all = {
      R"({"jsonrpc":"2.0","method":"sample.add","params":[3,5],"id":1})",
      " {\n\t\"jsonrpc\" : \"2.0\" ,\r\n \"method\":\"m\", \"params\" : [ 1 , [ ] , { } ] , "
      "\"id\" : \"x\" } \n",
      R"([{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b"},3,[]])",
      R"({"jsonrpc":"2.0","method":"m","params":{"b":1,"a":[true,false,null]},"id":null})",
      R"({"jsonrpc":"2.0","method":"m","params":[{"$base64":"AAEC"},{"$datetime":"2024-02-29T12:00:00"}],"id":2})",
      R"({"jsonrpc":"2.0","result":{"x":[1,2.5,"y"]},"id":7})",
      R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"no such method","data":"m"},"id":"q"})",
      // numbers: every shape, both sides of each bound the direct reader has
      R"([0,-0,1,-1,2147483647,2147483648,-2147483648,-2147483649,123456789012345678,
          -123456789012345678,1234567890123456789,9223372036854775807,-9223372036854775808,
          9223372036854775808,18446744073709551616,123456789012345678901234567890])",
      R"([0.5,-0.0,0.0,1.25,12500.03125,0.1,0.30000000000000004,123456789012345.6,
          1234567890123456.7,1e3,1E3,1e+3,1e-3,-2.5e-3,1.7976931348623157e308,1.8e308,
          -1e400,1e-400,5e-324,2.4e-324,1e000000001,1e0000000001,1e2147483647,1e2147483648,
          0.000000000000000000000000001,12345678.12345678,99999999.99999999,0e400,-0E+999,
          0.0e-999])",
      "[0e400,-0E+999,0.0e-999]",  // zeros, whatever the exponent
      "[00e1]",
      R"({"id":1.50,"jsonrpc":"2.0","method":"m"})",
      R"({"id":-0,"jsonrpc":"2.0","method":"m"})",
      R"({"id":1e400,"jsonrpc":"2.0","method":"m"})",
      R"({"id":123456789012345678901234567890,"jsonrpc":"2.0","method":"m"})",
      // strings: escapes, UTF-8, surrogates, raw bytes
      R"(["a\"b\\c\/d\be\ff\ng\rh\ti","\u0041\u00e9\u20ac\ud83d\ude00\u0000x","\uD83D\uDE00"])",
      "[\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\x7F\"]",
      R"(["\ud800"])",
      R"(["\udc00"])",
      R"(["\ud800\u0041"])",
      R"(["\ud800x"])",
      R"(["\u12"])",
      R"(["\x"])",
      "[\"a\tb\"]",
      "[\"\xC3\"]",
      "[\"\xED\xA0\x80\"]",
      "[\"\xC0\xAF\"]",
      "[\"\xF4\x90\x80\x80\"]",
      "\xEF\xBB\xBF{}",
      R"({"jsonrpc":"2.0","method":"m","params":{"a":1,"\u0061":2},"id":1})",
      R"({"jsonrpc":"2.0","jsonrpc":"2.0","method":"m","id":1})",
      R"({"jsonrpc":"2.0","method":"m","params":[1],"extra":1,"id":1})",
      // syntax
      "",
      " ",
      "{",
      "[",
      "[1,]",
      "{\"a\":}",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "{1:2}",
      "01",
      "1.",
      ".5",
      "-",
      "-x",
      "+1",
      "1e",
      "1e+",
      "NaN",
      "[tru]",
      "nul",
      "[1] [2]",
      "{} x",
      "[1]//c",
      "[1]\x00",
      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]"
      "]]"
      "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
      "1",
      "\"x\"",
      "null",
      "true",
      "false",
      "[]",
      "{}",
  };
  return all;
}

TEST(DirectReader, ReadsAsBasicParserReads) {
  const limits small{.max_depth = 3, .max_elements = 12, .max_batch = 2, .max_name_bytes = 4};
  for (const auto& text : texts()) {
    expect_same(text);
    expect_same(text, small);
  }
}

TEST(DirectReader, ReadsLargeArraysAsBasicParserReads) {
  // Past 4,096 items an array grows eight-fold, up to what max_elements
  // leaves: every size around the steps, and limits that cut it short.
  std::string text = R"({"jsonrpc":"2.0","method":"echo","params":[[)";
  for (int i = 0; i < 40000; ++i) {
    if (i != 0) text += ',';
    text += i % 3 == 0   ? std::to_string(i * 7919)
            : i % 3 == 1 ? std::to_string(i) + ".25"
                         : "\"item-" + std::to_string(i) + '"';
  }
  text += R"(]],"id":1})";
  auto m = detail::parse_request(text, {}, reader::direct_first);
  ASSERT_TRUE(std::holds_alternative<message>(m));
  const auto& r = std::get<request>(std::get<message>(m).entries.at(0));
  ASSERT_EQ(r.params.at(0).as<array>().size(), 40000u);
  EXPECT_EQ(r.params[0].as<array>()[39998], value("item-39998"));
  expect_same(text);
  for (std::size_t max : {4096u, 4097u, 4098u, 32768u, 32769u, 39999u, 40001u, 40002u}) {
    const limits lim{.max_elements = max};
    expect_same(text, lim);
  }
}

TEST(DirectReader, ReadsChangedTextsAsBasicParserReads) {
  // Random bytes changed, inserted, removed and repeated in every text:
  // most changes break the text somewhere the direct reader must give up.
  std::mt19937 rng(11);
  const std::string alphabet = "{}[],:\"\\ -+.eE0123456789aeflnrstu\t\n\x01\x7F\xC3\xA9\xED\xF0";
  for (const auto& original : texts()) {
    for (int round = 0; round < 300; ++round) {
      std::string text = original;
      const int changes = 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < changes; ++c) {
        const std::size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
        const char byte = alphabet[rng() % alphabet.size()];
        switch (rng() % 4) {
          case 0:
            if (at < text.size()) text[at] = byte;
            break;
          case 1:
            text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), byte);
            break;
          case 2:
            if (at < text.size()) text.erase(at, 1);
            break;
          default:
            text.insert(at, text.substr(at, rng() % 8));
            break;
        }
      }
      expect_same(text);
      if (HasFailure()) return;
    }
  }
}

TEST(DirectReader, FindsWhereARunOfPlainBytesEndsWhereverItIs) {
  // Plain bytes are skipped 16 and then 64 at a time: a byte that ends the
  // run (the closing quote, an escape, a control byte, UTF-8 valid or not)
  // in every place of a string of 160, each text read as basic_parser reads it.
  for (const char* stop : {"\"", "\\n", "\\", "\n", "\x01", "\xC3\xA9", "\xFF", "\x7F"}) {
    for (std::size_t at = 0; at <= 160; ++at) {
      std::string s(160, 'a');
      s.insert(at, stop);
      expect_same(R"({"jsonrpc":"2.0","method":"echo","params":[")" + s + R"("],"id":1})");
      if (HasFailure()) return;
    }
  }
}

TEST(DirectReader, ReadsTheUsualTextsItself) {
  for (
      const char* text : {
          R"({"jsonrpc":"2.0","method":"sample.add","params":[3,5],"id":1})",
          R"({"jsonrpc": "2.0", "method": "echo", "params": ["caf\u00e9", -2.5e3, {"k": [null, true]}], "id": "x"})",
          R"([{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b","id":2}])",
          R"({"jsonrpc":"2.0","method":"m","params":{"name":"x","n":12500.03125},"id":null})",
      })
    EXPECT_TRUE(detail::reads_directly(text)) << text;
  // What it leaves to basic_parser: errors, and the rare forms.
  for (const char* text : {R"([1,])", R"(["\ud800"])", R"([1234567890123456789])", R"([1e400])",
                           R"([1e0000000001])", "[\"\xC0\xAF\"]"})
    EXPECT_FALSE(detail::reads_directly(text)) << text;
}

}  // namespace
}  // namespace rapidrpc::jsonrpc

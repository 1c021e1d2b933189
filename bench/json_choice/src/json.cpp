#include "json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <system_error>

namespace json_choice::baseline {

using namespace rapidrpc;

namespace {

class reader {
 public:
  explicit reader(std::string_view text) : s_(text) {}

  value document() {
    skip_space();
    value v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw json_error("invalid JSON at offset " + std::to_string(pos_) + ": " + what);
  }

  bool at_end() const noexcept { return pos_ >= s_.size(); }
  char peek() const noexcept { return at_end() ? '\0' : s_[pos_]; }

  void skip_space() noexcept {
    while (!at_end() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  void expect_word(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail("expected '" + std::string(word) + "'");
    pos_ += word.size();
  }

  value parse_value(std::size_t depth) {
    if (at_end()) fail("expected a value, found the end of the text");
    switch (peek()) {
      case '{':
        return parse_object(depth + 1);
      case '[':
        return parse_array(depth + 1);
      case '"':
        return value(parse_string());
      case 't':
        expect_word("true");
        return value(true);
      case 'f':
        expect_word("false");
        return value(false);
      case 'n':
        expect_word("null");
        return value(nil);
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number();
        fail(std::string("unexpected character '") + peek() + "'");
    }
  }

  void check_depth(std::size_t depth) const {
    if (depth > json_max_depth)
      fail("nested deeper than " + std::to_string(json_max_depth) + " levels");
  }

  value parse_object(std::size_t depth) {
    check_depth(depth);
    ++pos_;  // '{'
    structure members;
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return value(std::move(members));
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail("expected a member name in double quotes");
      std::size_t name_at = pos_;
      std::string name = parse_string();
      skip_space();
      if (peek() != ':') fail("expected ':' after a member name");
      ++pos_;
      skip_space();
      value v = parse_value(depth);
      if (!members.emplace(std::move(name), std::move(v)).second) {
        pos_ = name_at;
        fail("repeated member name (an XML-RPC struct's names are unique)");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return value(std::move(members));
      }
      fail("expected ',' or '}' in an object");
    }
  }

  value parse_array(std::size_t depth) {
    check_depth(depth);
    ++pos_;  // '['
    array items;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return value(std::move(items));
    }
    for (;;) {
      skip_space();
      items.push_back(parse_value(depth));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return value(std::move(items));
      }
      fail("expected ',' or ']' in an array");
    }
  }

  unsigned hex4() {
    if (s_.size() - pos_ < 4) fail("a \\u escape needs four hex digits");
    unsigned cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        cp |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        cp |= static_cast<unsigned>(c - 'A' + 10);
      else {
        --pos_;
        fail("a \\u escape needs four hex digits");
      }
    }
    return cp;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Copies one UTF-8 sequence starting at pos_, checking it is well formed
  // (shortest form, no surrogates, at most U+10FFFF).
  void copy_utf8(std::string& out) {
    auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s_[i]); };
    unsigned char b0 = byte(pos_);
    std::size_t len = 0;
    unsigned cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2;
      cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3;
      cp = b0 & 0x0F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4;
      cp = b0 & 0x07;
    } else
      fail("invalid UTF-8");
    if (s_.size() - pos_ < len) fail("invalid UTF-8 (truncated sequence)");
    for (std::size_t i = 1; i < len; ++i) {
      unsigned char b = byte(pos_ + i);
      if ((b & 0xC0) != 0x80) fail("invalid UTF-8");
      cp = (cp << 6) | (b & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      fail("invalid UTF-8");
    out.append(s_.substr(pos_, len));
    pos_ += len;
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("a control character in a string must be escaped");
      if (c >= 0x80) {
        copy_utf8(out);
        continue;
      }
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a low surrogate without a high one");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(pos_, 2) != "\\u") fail("a high surrogate must be followed by a low one");
            pos_ += 2;
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("a high surrogate must be followed by a low one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          put_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  value parse_number() {
    std::size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos_;
    } else {
      fail("a number needs digits");
    }
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("a fraction needs digits");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("an exponent needs digits");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + pos_;
    if (integral) {
      std::int64_t i = 0;
      auto [p, ec] = std::from_chars(first, last, i);
      if (ec != std::errc() || p != last) {
        pos_ = start;
        fail("integer out of the 64-bit range");
      }
      if (i >= std::numeric_limits<std::int32_t>::min() &&
          i <= std::numeric_limits<std::int32_t>::max())
        return value(static_cast<std::int32_t>(i));
      return value(i);
    }
    double d = 0;
    auto [p, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || p != last || !std::isfinite(d)) {
      pos_ = start;
      fail("number out of the double range");
    }
    return value(d);
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

value parse_json(std::string_view text) { return reader(text).document(); }

void append_number(std::string& out, double d) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view text(buf, ec == std::errc() ? static_cast<std::size_t>(p - buf) : 0);
  out += text;
  if (text.find_first_of(".eEn") == std::string_view::npos) out += ".0";
}

}  // namespace json_choice::baseline

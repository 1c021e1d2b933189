// Private: the direct reader of whole JSON texts, in front of Boost.JSON's
// basic_parser (see parser.cpp).
//
// It reads a text the parser would accept and sends the handler the same
// events, in the same order: the first value it cannot be sure of ends the
// scan with scan_end::gave_up, and the text is read again from the start by
// basic_parser, whose verdict and error stand. So it only has to be right
// about what it accepts. It gives up on any syntax error, on a string with
// a raw control byte, invalid UTF-8 or a lone surrogate, on an integer of
// more than 18 digits, on a decimal std::from_chars cannot read into a
// finite double (out of range either way), on an exponent of more than
// nine digits, and on nesting deeper than basic_parser's own max_depth.
// The sizes basic_parser passes to on_object_end and on_array_end are not
// counted (0): the handler does not read them. What it takes in one step
// that basic_parser takes in several: a number's digits are read once,
// eight at a time, straight into the value (basic_parser's double is not
// correctly rounded, so behind it the handler reads the digits a second
// time); a string without escapes is handed over where it lies, its plain
// bytes found 16 at a time, then 64 (string_bytes.hpp).
#pragma once

#include <rapidrpc/literals.hpp>

#include "jsonrpc/string_bytes.hpp"
#include "value/decimal.hpp"
#include "value/text.hpp"

#include <boost/json/string_view.hpp>
#include <boost/system/error_code.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rapidrpc::jsonrpc::detail {

enum class scan_end : std::uint8_t {
  done,     // the whole text was read: the handler has every event
  stopped,  // the handler returned false (a limit): its failure stands
  gave_up,  // read it again with basic_parser, from the start
};

// Events, as basic_parser's handler takes them, plus one of its own:
// on_decimal(d, text, ec), d being the nearest double to the text.
template <class Handler>
class scanner {
 public:
  scanner(Handler& h, std::size_t max_depth) : h_(h), max_depth_(max_depth) {}

  scan_end run(std::string_view text) {
    p_ = reinterpret_cast<const unsigned char*>(text.data());
    end_ = p_ + text.size();
    if (!h_.on_document_begin(ec_)) return scan_end::stopped;
    skip_space();
    // One value per turn of the loop, then what follows it.
    for (;;) {
      if (p_ == end_) return scan_end::gave_up;
      switch (*p_) {
        case '{':
        case '[': {
          if (stack_.size() == max_depth_) return scan_end::gave_up;
          const bool object = *p_++ == '{';
          if (!(object ? h_.on_object_begin(ec_) : h_.on_array_begin(ec_)))
            return scan_end::stopped;
          stack_.push_back(object ? '{' : '[');
          skip_space();
          if (p_ != end_ && *p_ == static_cast<unsigned char>(object ? '}' : ']')) {  // empty
            ++p_;
            if (!close()) return scan_end::stopped;
            break;
          }
          if (object) {
            if (auto e = key(); e != scan_end::done) return e;
          }
          continue;  // its first value
        }
        case '"': {
          std::string_view s;
          if (!string(s)) return scan_end::gave_up;
          if (!h_.on_string({s.data(), s.size()}, s.size(), ec_)) return scan_end::stopped;
          break;
        }
        case 't':
          if (!word("true")) return scan_end::gave_up;
          if (!h_.on_bool(true, ec_)) return scan_end::stopped;
          break;
        case 'f':
          if (!word("false")) return scan_end::gave_up;
          if (!h_.on_bool(false, ec_)) return scan_end::stopped;
          break;
        case 'n':
          if (!word("null")) return scan_end::gave_up;
          if (!h_.on_null(ec_)) return scan_end::stopped;
          break;
        default:
          if (auto e = number(); e != scan_end::done) return e;
          break;
      }
      // After a value: the next one, the end of its container(s), or the
      // end of the text.
      for (;;) {
        skip_space();
        if (stack_.empty()) {
          if (p_ != end_) return scan_end::gave_up;  // text after the value
          if (!h_.on_document_end(ec_)) return scan_end::stopped;
          return scan_end::done;
        }
        if (p_ == end_) return scan_end::gave_up;
        const bool object = stack_.back() == '{';
        if (*p_ == ',') {
          ++p_;
          skip_space();
          if (object) {
            if (auto e = key(); e != scan_end::done) return e;
          }
          break;  // the next value
        }
        if (*p_ != static_cast<unsigned char>(object ? '}' : ']')) return scan_end::gave_up;
        ++p_;
        if (!close()) return scan_end::stopped;
      }
    }
  }

 private:
  // Whitespace: most texts have none between their values, so the first
  // check is inlined and the loop is not.
  void skip_space() noexcept {
    if (p_ != end_ && *p_ <= ' ') [[unlikely]]
      skip_space_run();
  }

  [[gnu::noinline]] void skip_space_run() noexcept {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // The innermost container ends (its closing byte read).
  bool close() {
    const bool object = stack_.back() == '{';
    stack_.pop_back();
    return object ? h_.on_object_end(0, ec_) : h_.on_array_end(0, ec_);
  }

  // A member's name and the colon after it; p_ on its first byte.
  scan_end key() {
    std::string_view s;
    if (p_ == end_ || *p_ != '"' || !string(s)) return scan_end::gave_up;
    if (!h_.on_key({s.data(), s.size()}, s.size(), ec_)) return scan_end::stopped;
    skip_space();
    if (p_ == end_ || *p_ != ':') return scan_end::gave_up;
    ++p_;
    skip_space();
    return scan_end::done;
  }

  bool word(std::string_view w) noexcept {
    if (static_cast<std::size_t>(end_ - p_) < w.size() ||
        std::string_view(reinterpret_cast<const char*>(p_), w.size()) != w)
      return false;
    p_ += w.size();
    return true;
  }

  static int hex(unsigned char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Four hex digits after "\u"; -1 if they are not.
  int code_unit() noexcept {
    if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') return -1;
    int v = 0;
    for (int i = 2; i < 6; ++i) {
      const int h = hex(p_[i]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    p_ += 6;
    return v;
  }

  // A string from its opening quote; `s` is its text, unescaped: where it
  // lies in the input when it has no escape, else in text_.
  bool string(std::string_view& s) {
    const unsigned char* const first = ++p_;
    const unsigned char* run = first;  // not yet copied to text_
    bool escaped = false;
    for (;;) {
      p_ = skip_plain(p_, end_);
      if (p_ == end_) return false;
      const unsigned char c = *p_;
      if (c == '"') break;
      if (c >= 0x80) {
        const std::size_t n = rapidrpc::detail::utf8_sequence_length(p_, end_);
        if (n == 0) return false;
        p_ += n;
        continue;
      }
      if (c != '\\') return false;  // a raw control byte
      if (!escaped) {
        text_.clear();
        escaped = true;
      }
      text_.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p_ - run));
      if (end_ - p_ < 2) return false;
      char out = 0;
      switch (p_[1]) {
        case '"':
          out = '"';
          break;
        case '\\':
          out = '\\';
          break;
        case '/':
          out = '/';
          break;
        case 'b':
          out = '\b';
          break;
        case 'f':
          out = '\f';
          break;
        case 'n':
          out = '\n';
          break;
        case 'r':
          out = '\r';
          break;
        case 't':
          out = '\t';
          break;
        case 'u': {
          int u = code_unit();
          if (u < 0) return false;
          if (u >= 0xDC00 && u <= 0xDFFF) return false;  // a low surrogate first
          std::uint32_t cp = static_cast<std::uint32_t>(u);
          if (u >= 0xD800 && u <= 0xDBFF) {
            const int low = code_unit();
            if (low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + static_cast<std::uint32_t>(low - 0xDC00);
          }
          append_utf8(cp);
          run = p_;
          continue;
        }
        default:
          return false;
      }
      text_.push_back(out);
      p_ += 2;
      run = p_;
    }
    if (!escaped) {
      s = std::string_view(reinterpret_cast<const char*>(first),
                           static_cast<std::size_t>(p_ - first));
    } else {
      text_.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p_ - run));
      s = text_;
    }
    ++p_;  // the closing quote
    return true;
  }

  void append_utf8(std::uint32_t cp) {
    if (cp < 0x80) {
      text_.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      text_.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      text_.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      text_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      text_.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      text_.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      text_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  static bool digit(unsigned char c) noexcept { return static_cast<unsigned>(c - '0') < 10; }

  // The digits from p on, appended to `m` (m * 10^n + their value; wraps
  // past 19 digits), eight at a time while eight bytes are left; returns
  // the first byte that is not a digit.
  static const unsigned char* read_digits(const unsigned char* p, const unsigned char* end,
                                          std::uint64_t& m) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101U;
    static constexpr std::uint64_t powers[] = {1,      10,      100,      1000,     10000,
                                               100000, 1000000, 10000000, 100000000};
    while (end - p >= 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, p, 8);  // the first byte lowest
      // Nonzero in each byte that is not a digit: its high half is not 3,
      // or it is 0x3A..0x3F (+6 carries into the high half). A carry out
      // of a byte that is no digit can only spoil the bytes after it.
      const std::uint64_t other =
          ((w & 0xF0 * ones) ^ 0x30 * ones) | (((w + 0x06 * ones) & 0xF0 * ones) ^ 0x30 * ones);
      const int n = other == 0 ? 8 : std::countr_zero(other) / 8;
      if (n == 0) return p;
      // The n digits' values in the top n bytes, zeros below them (no
      // borrow reaches them: the bytes below n are digits); then pairs,
      // fours and the eight combined, most significant first.
      std::uint64_t v = (w - 0x30 * ones) << (8 * (8 - n));
      v = ((v & 0x0F0F0F0F0F0F0F0FU) * 2561) >> 8;
      v = ((v & 0x00FF00FF00FF00FFU) * 6553601) >> 16;
      v = ((v & 0x0000FFFF0000FFFFU) * 42949672960001U) >> 32;
      m = m * powers[n] + v;
      p += n;
      if (n < 8) return p;
    }
    while (p != end && digit(*p)) m = m * 10 + (*p++ - '0');
    return p;
  }

  // A number, by JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  scan_end number() {
    const unsigned char* const start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !digit(*p_)) return scan_end::gave_up;
    std::uint64_t mantissa = 0;  // wraps past 19 digits; used up to 18
    const unsigned char* const digits_start = p_;
    if (*p_ == '0') {
      ++p_;
      if (p_ != end_ && digit(*p_)) return scan_end::gave_up;  // a leading zero
    } else {
      p_ = read_digits(p_, end_, mantissa);
    }
    std::size_t digits = static_cast<std::size_t>(p_ - digits_start);
    std::size_t fraction_digits = 0;
    bool decimal = false;
    if (p_ != end_ && *p_ == '.') {
      decimal = true;
      const unsigned char* const point = ++p_;
      p_ = read_digits(p_, end_, mantissa);
      fraction_digits = static_cast<std::size_t>(p_ - point);
      if (fraction_digits == 0) return scan_end::gave_up;
      digits += fraction_digits;
    }
    bool exponent = false;
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      decimal = exponent = true;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const unsigned char* const first = p_;
      while (p_ != end_ && digit(*p_)) ++p_;
      if (p_ == first || p_ - first > 9) return scan_end::gave_up;
    }
    const std::string_view text(reinterpret_cast<const char*>(start),
                                static_cast<std::size_t>(p_ - start));
    const boost::json::string_view bj_text(text.data(), text.size());
    if (!decimal) {
      if (digits > 18) return scan_end::gave_up;  // may be past 64 bits
      const auto v = static_cast<std::int64_t>(mantissa);
      return h_.on_int64(negative ? -v : v, bj_text, ec_) ? scan_end::done : scan_end::stopped;
    }
    double d = 0;
    if (!exponent && digits <= rapidrpc::detail::max_short_decimal_digits)
      d = rapidrpc::detail::exact_short_decimal(mantissa, fraction_digits, negative);
    else if (parse_double(text, d) != literal_status::ok)
      return scan_end::gave_up;
    return h_.on_decimal(d, bj_text, ec_) ? scan_end::done : scan_end::stopped;
  }

  Handler& h_;
  std::size_t max_depth_;
  boost::system::error_code ec_;
  const unsigned char* p_ = nullptr;
  const unsigned char* end_ = nullptr;
  std::string stack_;  // '{' or '[' per open container (15 without allocating)
  std::string text_;   // a string with escapes, unescaped
};

}  // namespace rapidrpc::jsonrpc::detail

#include "worker/marshal.hpp"

#include "value/text.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

namespace rapidrpc::detail::marshal {

namespace {

// marshal's type codes (CPython's Python/marshal.c), version 2.
constexpr char type_null = '0';  // ends a dict
constexpr char type_none = 'N';
constexpr char type_false = 'F';
constexpr char type_true = 'T';
constexpr char type_int = 'i';    // 4 bytes, little-endian
constexpr char type_long = 'l';   // a digit count (its sign the number's), 15-bit digits
constexpr char type_float = 'g';  // an IEEE double, little-endian
constexpr char type_unicode = 'u';
constexpr char type_bytes = 's';
constexpr char type_tuple = '(';
constexpr char type_list = '[';
constexpr char type_dict = '{';

// A long's digits carry 15 bits; 64 bits take 5 of them.
constexpr int digit_bits = 15;
constexpr int max_long_digits = 5;

void put_u32(std::string& out, std::uint32_t n) {
  const char b[4] = {static_cast<char>(n), static_cast<char>(n >> 8), static_cast<char>(n >> 16),
                     static_cast<char>(n >> 24)};
  out.append(b, 4);
}

void put_size(std::string& out, char type, std::size_t n) {
  out += type;
  put_u32(out, static_cast<std::uint32_t>(n));
}

void put_int(std::string& out, std::int64_t n) {
  if (n >= std::numeric_limits<std::int32_t>::min() &&
      n <= std::numeric_limits<std::int32_t>::max()) {
    out += type_int;
    put_u32(out, static_cast<std::uint32_t>(n));
    return;
  }
  // The magnitude in 15-bit digits, least significant first; the count's
  // sign is the number's.
  std::uint64_t magnitude =
      n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  std::uint16_t digits[max_long_digits];
  int count = 0;
  for (; magnitude != 0; magnitude >>= digit_bits)
    digits[count++] = static_cast<std::uint16_t>(magnitude & ((1U << digit_bits) - 1));
  out += type_long;
  put_u32(out, static_cast<std::uint32_t>(n < 0 ? -count : count));
  for (int i = 0; i < count; ++i) {
    out += static_cast<char>(digits[i]);
    out += static_cast<char>(digits[i] >> 8);
  }
}

bool put_value(std::string& out, const value& v) {
  switch (v.type()) {
    case kind::nil:
      out += type_none;
      return true;
    case kind::i4:
      put_int(out, v.as<std::int32_t>());
      return true;
    case kind::i8:
      put_int(out, v.as<std::int64_t>());
      return true;
    case kind::boolean:
      out += v.as<bool>() ? type_true : type_false;
      return true;
    case kind::floating: {
      out += type_float;
      const auto bits = std::bit_cast<std::uint64_t>(v.as<double>());
      put_u32(out, static_cast<std::uint32_t>(bits));
      put_u32(out, static_cast<std::uint32_t>(bits >> 32));
      return true;
    }
    case kind::string: {
      const auto& s = v.as<std::string>();
      put_size(out, type_unicode, s.size());
      out += s;
      return true;
    }
    case kind::binary: {
      const auto& b = v.as<bytes>().data;
      put_size(out, type_bytes, b.size());
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
      return true;
    }
    case kind::array: {
      const auto& a = v.as<array>();
      put_size(out, type_list, a.size());
      for (const auto& item : a)
        if (!put_value(out, item)) return false;
      return true;
    }
    case kind::structure: {
      out += type_dict;
      for (const auto& [name, item] : v.as<structure>()) {
        put_size(out, type_unicode, name.size());
        out += name;
        if (!put_value(out, item)) return false;
      }
      out += type_null;
      return true;
    }
    case kind::date_time:
      return false;  // marshal has no date: the call goes as XML-RPC
  }
  return false;
}

// Reads one answer. Every read checks what is left first: a length is
// trusted only as far as the bytes that hold it reach.
class reader {
 public:
  reader(std::string_view in, std::size_t max_depth) : in_(in), max_depth_(max_depth) {}

  bool done() const noexcept { return at_ == in_.size(); }
  const unreadable& failure() const noexcept { return failure_; }

  bool read(value& out, std::size_t depth = 0) {
    char type = 0;
    if (!byte(type)) return false;
    switch (type) {
      case type_none:
        out = nil;
        return true;
      case type_true:
      case type_false:
        out = type == type_true;
        return true;
      case type_int: {
        std::uint32_t n = 0;
        if (!u32(n)) return false;
        out = static_cast<std::int32_t>(n);
        return true;
      }
      case type_long:
        return read_long(out);
      case type_float: {
        std::uint32_t low = 0;
        std::uint32_t high = 0;
        if (!u32(low) || !u32(high)) return false;
        const double d = std::bit_cast<double>((std::uint64_t{high} << 32) | low);
        if (!std::isfinite(d)) return refuse("an infinite or NaN float");
        out = d;
        return true;
      }
      case type_unicode: {
        std::string s;
        if (!text(s)) return false;
        out = std::move(s);
        return true;
      }
      case type_bytes: {
        std::string_view b;
        if (!sized(b)) return false;
        out = bytes(b);
        return true;
      }
      case type_tuple:
      case type_list:
        return read_array(out, depth);
      case type_dict:
        return read_dict(out, depth);
      default:
        return unknown(type);
    }
  }

  bool read_fault(outcome& out) {
    char type = 0;
    std::uint32_t n = 0;
    if (!byte(type) || type != type_tuple || !u32(n) || n != 2)
      return malformed("a fault that is not a (code, text) pair");
    std::uint32_t code = 0;
    std::string message;
    if (!byte(type) || type != type_int || !u32(code)) return malformed("a fault code not an int");
    if (!byte(type) || type != type_unicode || !text(message))
      return malformed("a fault text not a string");
    out = fault(static_cast<std::int32_t>(code), message);
    return true;
  }

  bool malformed(const char* why) {
    if (failure_.why.empty()) failure_ = {true, why};
    return false;
  }

 private:
  bool refuse(const char* why) {
    if (failure_.why.empty()) failure_ = {false, why};
    return false;
  }

  bool unknown(char type) {
    switch (type) {
      case '<':
        return refuse("a set");
      case '>':
        return refuse("a frozenset");
      case 'y':
      case 'x':
        return refuse("a complex number");
      case 'c':
        return refuse("a code object");
      case '.':
        return refuse("Ellipsis");
      case 'S':
        return refuse("StopIteration");
      default:
        return malformed("an unknown type code");
    }
  }

  bool byte(char& c) {
    if (at_ >= in_.size()) return malformed("cut short");
    c = in_[at_++];
    return true;
  }

  bool u32(std::uint32_t& n) {
    if (in_.size() - at_ < 4) return malformed("cut short");
    const auto* p = reinterpret_cast<const unsigned char*>(in_.data() + at_);
    n = std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
        (std::uint32_t{p[3]} << 24);
    at_ += 4;
    return true;
  }

  // A length (at most what is left) and that many bytes.
  bool sized(std::string_view& out) {
    std::uint32_t n = 0;
    if (!u32(n)) return false;
    if (n > in_.size() - at_) return malformed("a length past the end");
    out = in_.substr(at_, n);
    at_ += n;
    return true;
  }

  bool text(std::string& out) {
    std::string_view t;
    if (!sized(t)) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(t.data());
    const auto* end = p + t.size();
    while (p < end) {
      if (*p < 0x80) {
        ++p;
        continue;
      }
      const std::size_t n = utf8_sequence_length(p, end);
      // marshal writes a lone surrogate as UTF-8 would if it could
      // ("surrogatepass"): text no XML-RPC or JSON document can hold.
      if (n == 0) return refuse("a string that is not valid Unicode (a lone surrogate)");
      p += n;
    }
    out.assign(t);
    return true;
  }

  bool read_long(value& out) {
    std::uint32_t raw = 0;
    if (!u32(raw)) return false;
    const auto count = static_cast<std::int32_t>(raw);
    const std::uint32_t digits = count < 0 ? 0U - raw : raw;
    if (digits > max_long_digits) {
      if (in_.size() - at_ < 2 * std::size_t{digits}) return malformed("cut short");
      return refuse("an integer past 64 bits");
    }
    std::uint64_t magnitude = 0;
    for (std::uint32_t i = 0; i < digits; ++i) {
      if (in_.size() - at_ < 2) return malformed("cut short");
      const auto* p = reinterpret_cast<const unsigned char*>(in_.data() + at_);
      const unsigned digit = p[0] | (unsigned{p[1]} << 8);
      at_ += 2;
      if (digit >> digit_bits != 0) return malformed("a digit out of range in an integer");
      if (i == max_long_digits - 1 && digit >> (64 - digit_bits * i) != 0)
        return refuse("an integer past 64 bits");
      magnitude |= std::uint64_t{digit} << (digit_bits * i);
    }
    constexpr auto top = std::uint64_t{1} << 63;
    if (count >= 0 ? magnitude >= top : magnitude > top) return refuse("an integer past 64 bits");
    const std::int64_t n = count >= 0 ? static_cast<std::int64_t>(magnitude)
                                      : static_cast<std::int64_t>(0 - magnitude);
    if (n >= std::numeric_limits<std::int32_t>::min() &&
        n <= std::numeric_limits<std::int32_t>::max())
      out = static_cast<std::int32_t>(n);
    else
      out = n;
    return true;
  }

  bool deeper(std::size_t depth) {
    if (depth >= max_depth_) return refuse("arrays and structs nested deeper than the limit");
    return true;
  }

  bool read_array(value& out, std::size_t depth) {
    std::uint32_t n = 0;
    if (!u32(n)) return false;
    if (!deeper(depth)) return false;
    // Each item takes a byte at least: a count past what is left is a lie,
    // not a reason to reserve.
    if (n > in_.size() - at_) return malformed("a length past the end");
    array items;
    items.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      items.emplace_back();
      if (!read(items.back(), depth + 1)) return false;
    }
    out = std::move(items);
    return true;
  }

  bool read_dict(value& out, std::size_t depth) {
    if (!deeper(depth)) return false;
    structure members;
    for (;;) {
      char type = 0;
      if (!byte(type)) return false;
      if (type == type_null) break;
      if (type != type_unicode) {
        if (type == type_int || type == type_long || type == type_float || type == type_none ||
            type == type_true || type == type_false || type == type_bytes || type == type_tuple)
          return refuse("a dict key that is not a string");
        return unknown(type);
      }
      std::string name;
      if (!text(name)) return false;
      value item;
      if (!read(item, depth + 1)) return false;
      // A dict has each key once: marshal never writes one twice.
      if (!members.try_emplace(std::move(name), std::move(item)).second)
        return malformed("a dict key twice");
    }
    out = std::move(members);
    return true;
  }

  std::string_view in_;
  std::size_t at_ = 1;  // past the frame's tag
  std::size_t max_depth_;
  unreadable failure_;
};

}  // namespace

bool append_value(std::string& out, const value& v) {
  const std::size_t old_size = out.size();
  if (put_value(out, v)) return true;
  out.resize(old_size);
  return false;
}

bool append_call(std::string& out, std::string_view name, const array& params) {
  const std::size_t old_size = out.size();
  out += call_tag;
  put_size(out, type_tuple, 2);
  put_size(out, type_unicode, name.size());
  out += name;
  put_size(out, type_tuple, params.size());
  for (const auto& p : params) {
    if (!put_value(out, p)) {
      out.resize(old_size);
      return false;
    }
  }
  return true;
}

std::variant<outcome, unreadable> read_answer(std::string_view frame, std::size_t max_depth) {
  reader r(frame, max_depth);
  outcome out;
  bool read = false;
  if (frame.empty() || (frame[0] != result_tag && frame[0] != fault_tag)) {
    r.malformed("not an answer in marshal form");
  } else if (frame[0] == fault_tag) {
    read = r.read_fault(out);
  } else {
    value v;
    read = r.read(v);
    if (read) out = std::move(v);
  }
  if (read && !r.done()) read = r.malformed("bytes after the value");
  if (!read) return r.failure();
  return out;
}

}  // namespace rapidrpc::detail::marshal

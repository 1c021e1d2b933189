// The JSON-RPC writers: compact texts appended straight to a string.
#include <rapidrpc/jsonrpc.hpp>

#include <rapidrpc/literals.hpp>

#include "jsonrpc/string_bytes.hpp"
#include "text/text.hpp"
#include "value/base64.hpp"
#include "value/sink.hpp"
#include "value/text.hpp"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace rapidrpc::jsonrpc {
namespace {

using rapidrpc::detail::sink;

using detail::skip_plain;

// Appends `s` quoted, with what JSON requires escaped. Invalid UTF-8 is
// refused or replaced with U+FFFD, as `policy` says.
void append_string(sink& out, std::string_view s, invalid_utf8 policy) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  p = skip_plain(p, end);
  if (p == end) {  // most strings: nothing to escape
    char* at = out.room(s.size() + 2);
    *at = '"';
    if (!s.empty()) std::memcpy(at + 1, s.data(), s.size());  // data() may be null
    at[s.size() + 1] = '"';
    out.advance(at + s.size() + 2);
    return;
  }
  const auto* run = reinterpret_cast<const unsigned char*>(s.data());  // not yet copied
  const auto flush = [&](const unsigned char* upto) {
    out.put(
        std::string_view(reinterpret_cast<const char*>(run), static_cast<std::size_t>(upto - run)));
  };
  out.put('"');
  while (p != end) {
    const unsigned char c = *p;
    if (c >= 0x20 && c < 0x80) {
      if (c != '"' && c != '\\') {
        p = skip_plain(p + 1, end);
        continue;
      }
      flush(p);
      out.put('\\');
      out.put(static_cast<char>(c));
      run = ++p;
      continue;
    }
    if (c < 0x20) {
      flush(p);
      switch (c) {
        case '\n':
          out.put("\\n");
          break;
        case '\r':
          out.put("\\r");
          break;
        case '\t':
          out.put("\\t");
          break;
        case '\b':
          out.put("\\b");
          break;
        case '\f':
          out.put("\\f");
          break;
        default: {
          const char escaped[] = {'\\',
                                  'u',
                                  '0',
                                  '0',
                                  rapidrpc::detail::hex_digits[c >> 4],
                                  rapidrpc::detail::hex_digits[c & 15]};
          out.put(std::string_view(escaped, sizeof escaped));
        }
      }
      run = ++p;
      continue;
    }
    if (std::size_t n = rapidrpc::detail::utf8_sequence_length(p, end)) {
      p += n;
      continue;
    }
    if (policy == invalid_utf8::throw_error)
      throw std::invalid_argument("a string is not valid UTF-8; JSON cannot carry it");
    flush(p);
    out.put("\xEF\xBF\xBD");  // U+FFFD
    run = ++p;
  }
  flush(p);
  out.put('"');
}

void append_string(std::string& out, std::string_view s, invalid_utf8 policy) {
  sink to(out);
  append_string(to, s, policy);
}

// A std::string of at most 15 bytes, none of them to escape, copied with a
// 16-byte load and store (most strings a program sends are short). A
// std::string has at least 16 bytes behind data() whatever its length: its
// own buffer holds 15 and the terminator (libstdc++; libc++'s, 22), and a
// heap block is allocated only past that, with capacity() + 1 bytes. So
// the bytes past its end may be read; only the string's own are looked
// at. false, with nothing written, if one needs an escape.
bool append_short_plain(sink& out, const std::string& s) {
#if defined(__SSE2__)
  const std::size_t n = s.size();
  const auto* const p = reinterpret_cast<const unsigned char*>(s.data());
  const auto stops = static_cast<unsigned>(_mm_movemask_epi8(detail::not_plain(p)));
  if ((stops & ((1U << n) - 1)) != 0) return false;
  char* at = out.room(18);
  *at = '"';
  _mm_storeu_si128(reinterpret_cast<__m128i*>(at + 1),
                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  at[n + 1] = '"';
  out.advance(at + n + 2);
  return true;
#else
  (void)out;
  (void)s;
  return false;
#endif
}

struct value_writer {
  sink& out;

  void operator()(nil_t) const { out.put("null"); }
  void operator()(std::int32_t i) const { integer(i); }
  void operator()(std::int64_t i) const { integer(i); }
  void operator()(bool b) const {
    out.put(b ? std::string_view("true") : std::string_view("false"));
  }
  void operator()(double d) const {
    char* at = out.room(rapidrpc::detail::max_double_chars);
    char* end = rapidrpc::detail::write_double(at, d);
    if (end == nullptr) throw std::invalid_argument("JSON cannot carry an infinite or NaN number");
    out.advance(end);
  }
  void operator()(const std::string& s) const {
    if (s.size() < 16 && append_short_plain(out, s)) return;
    append_string(out, s, invalid_utf8::throw_error);
  }
  void operator()(const date_time& t) const {
    if (!is_valid(t)) throw std::invalid_argument("date_time field out of range");
    out.put("{\"$datetime\":\"");
    char* at = out.room(rapidrpc::detail::max_date_time_chars);
    out.advance(rapidrpc::detail::write_date_time(at, t, date_format::extended));
    out.put("\"}");
  }
  void operator()(const bytes& b) const {
    out.put("{\"$base64\":\"");
    out.with_string([&](std::string& text) { append_base64(text, b.data); },
                    rapidrpc::detail::base64_chars(b.data.size()));
    out.put("\"}");
  }
  void operator()(const array& a) const {
    out.put('[');
    bool first = true;
    for (const value& e : a) {
      if (!first) out.put(',');
      first = false;
      std::visit(*this, e.raw());
    }
    out.put(']');
  }
  void operator()(const structure& s) const {
    out.put('{');
    bool first = true;
    for (const auto& [name, member] : s) {
      if (!first) out.put(',');
      first = false;
      append_string(out, name, invalid_utf8::throw_error);
      out.put(':');
      std::visit(*this, member.raw());
    }
    out.put('}');
  }

  void integer(std::int64_t i) const {
    out.advance(rapidrpc::detail::write_integer(out.room(rapidrpc::detail::max_integer_chars), i));
  }
};

// Write `v` into `out`.
void write_value_to(std::string& out, const value& v) {
  sink to(out);
  std::visit(value_writer{to}, v.raw());
}
void write_value_to(std::string& out, const array& a) {
  sink to(out);
  value_writer{to}(a);
}

}  // namespace

std::string_view standard_message(std::int32_t code) noexcept {
  switch (code) {
    case fault_code::parse_error:
      return "Parse error";
    case fault_code::invalid_request:
      return "Invalid Request";
    case fault_code::method_not_found:
      return "Method not found";
    case fault_code::invalid_params:
      return "Invalid params";
    case fault_code::internal_error:
      return "Internal error";
    default:
      return {};
  }
}

void write_value(std::string& out, const value& v) {
  rapidrpc::detail::append_or_restore(out, [&] { write_value_to(out, v); });
}

void write_string(std::string& out, std::string_view s, invalid_utf8 policy) {
  if (policy == invalid_utf8::replace) return append_string(out, s, policy);
  rapidrpc::detail::append_or_restore(out, [&] { append_string(out, s, policy); });
}

void write_request(std::string& out, std::string_view method, const array& params,
                   std::string_view id) {
  rapidrpc::detail::append_or_restore(out, [&] {
    out += "{\"jsonrpc\":\"2.0\",\"method\":";
    append_string(out, method, invalid_utf8::throw_error);
    out += ",\"params\":";
    write_value_to(out, params);
    if (!id.empty()) {
      out += ",\"id\":";
      out += id;
    }
    out += '}';
  });
}

void write_result(std::string& out, std::string_view id, const value& result) {
  rapidrpc::detail::append_or_restore(out, [&] {
    out += "{\"jsonrpc\":\"2.0\",\"result\":";
    write_value_to(out, result);
    out += ",\"id\":";
    out += id;
    out += '}';
  });
}

void write_error(std::string& out, std::string_view id, std::int32_t code,
                 std::string_view detail) {
  out += "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":";
  char buf[12];
  const auto r = std::to_chars(buf, buf + sizeof buf, code);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
  out += ",\"message\":";
  std::string_view standard = standard_message(code);
  append_string(out, standard.empty() ? detail : standard, invalid_utf8::replace);
  const auto same = [](std::string_view a, std::string_view b) {  // ASCII case aside
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
    return true;
  };
  if (!standard.empty() && !detail.empty() && !same(standard, detail)) {
    out += ",\"data\":";
    append_string(out, detail, invalid_utf8::replace);
  }
  out += "},\"id\":";
  out += id;
  out += '}';
}

}  // namespace rapidrpc::jsonrpc

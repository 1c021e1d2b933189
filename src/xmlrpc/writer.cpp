// The XML-RPC writers: compact documents appended straight to a string.
#include <rapidrpc/xmlrpc.hpp>

#include <rapidrpc/literals.hpp>

#include "value/base64.hpp"
#include "value/sink.hpp"
#include "value/text.hpp"

#include <charconv>
#include <cstring>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rapidrpc::xmlrpc {
namespace {

using rapidrpc::detail::sink;

constexpr std::string_view xml_declaration = "<?xml version=\"1.0\"?>\n";

// What to do with text XML 1.0 cannot carry (invalid UTF-8, control
// characters other than tab/LF/CR, U+FFFE, U+FFFF).
enum class on_invalid : std::uint8_t { throw_error, replace };

// Length of the valid UTF-8 sequence at p that encodes an XML 1.0 Char of
// U+0080 or above; 0 if there is none.
std::size_t xml_char_length(const unsigned char* p, const unsigned char* end) noexcept {
  const std::size_t n = rapidrpc::detail::utf8_sequence_length(p, end);
  if (n == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE) return 0;  // U+FFFE, U+FFFF
  return n;
}

// Bytes that stand for themselves in XML character data: printable ASCII
// but & < >. (Tab and LF do too; they take the slower path.)
constexpr bool plain(unsigned char c) noexcept {
  return c >= 0x20 && c < 0x80 && c != '&' && c != '<' && c != '>';
}

// The first byte in [p, end) that is not plain(), or `end`: sixteen (SSE2)
// or eight bytes at a time while they are all plain.
const unsigned char* skip_plain(const unsigned char* p, const unsigned char* end) noexcept {
#if defined(__SSE2__)
  // As signed bytes, anything below 0x20 and anything from 0x80 up is less
  // than 0x20: one comparison finds both.
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i amp = _mm_set1_epi8('&');
  const __m128i lt = _mm_set1_epi8('<');
  const __m128i gt = _mm_set1_epi8('>');
  while (end - p >= 16) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(w, space), _mm_cmpeq_epi8(w, amp)),
                     _mm_or_si128(_mm_cmpeq_epi8(w, lt), _mm_cmpeq_epi8(w, gt)));
    if (_mm_movemask_epi8(stop) != 0) break;
    p += 16;
  }
#endif
  while (p != end && plain(*p)) ++p;
  return p;
}

// Appends `s` as XML character data: & < > escaped, CR as &#13; so that it
// survives XML's line-end normalization.
void append_text(sink& out, std::string_view s, on_invalid policy) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  p = skip_plain(p, end);
  if (p == end) {  // most text: nothing to escape
    char* at = out.room(s.size());
    if (!s.empty()) std::memcpy(at, s.data(), s.size());  // data() may be null
    out.advance(at + s.size());
    return;
  }
  const auto* run = reinterpret_cast<const unsigned char*>(s.data());  // not yet copied
  const auto flush = [&](const unsigned char* upto) {
    out.put(
        std::string_view(reinterpret_cast<const char*>(run), static_cast<std::size_t>(upto - run)));
  };
  while (p != end) {
    const unsigned char c = *p;
    if (c >= 0x20 && c < 0x80) {
      if (c != '&' && c != '<' && c != '>') {
        p = skip_plain(p + 1, end);
        continue;
      }
      flush(p);
      out.put(c == '&'   ? std::string_view("&amp;")
              : c == '<' ? std::string_view("&lt;")
                         : std::string_view("&gt;"));
      run = ++p;
      continue;
    }
    if (c == '\t' || c == '\n') {
      ++p;
      continue;
    }
    if (c == '\r') {
      flush(p);
      out.put("&#13;");
      run = ++p;
      continue;
    }
    if (c >= 0x80) {
      if (const std::size_t n = xml_char_length(p, end); n != 0) {
        p += n;
        continue;
      }
    }
    if (policy == on_invalid::throw_error) {
      throw std::invalid_argument("string is not valid UTF-8 text that XML 1.0 can carry");
    }
    flush(p);
    out.put("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER, for one bad byte
    run = ++p;
  }
  flush(end);
}

void append_text(std::string& out, std::string_view s, on_invalid policy) {
  sink to(out);
  append_text(to, s, policy);
}

void append_value(sink& out, const value& v);

struct value_writer {
  sink& out;

  void operator()(nil_t) const { out.put("<nil/>"); }
  void operator()(std::int32_t i) const { integer("<int>", i, "</int>"); }
  void operator()(std::int64_t i) const { integer("<i8>", i, "</i8>"); }
  void operator()(bool b) const {
    if (b)
      out.put("<boolean>1</boolean>");
    else
      out.put("<boolean>0</boolean>");
  }
  void operator()(double d) const {
    out.put("<double>");
    char* at = out.room(rapidrpc::detail::max_double_chars);
    char* end = rapidrpc::detail::write_double(at, d);
    if (end == nullptr)
      throw std::invalid_argument("XML-RPC cannot carry an infinite or NaN <double>");
    out.advance(end);
    out.put("</double>");
  }
  void operator()(const std::string& s) const {
    out.put("<string>");
    append_text(out, s, on_invalid::throw_error);
    out.put("</string>");
  }
  void operator()(const date_time& t) const {
    if (!rapidrpc::is_valid(t)) throw std::invalid_argument("date_time field out of range");
    out.put("<dateTime.iso8601>");
    char* at = out.room(rapidrpc::detail::max_date_time_chars);
    out.advance(rapidrpc::detail::write_date_time(at, t, date_format::basic));
    out.put("</dateTime.iso8601>");
  }
  void operator()(const bytes& b) const {
    out.put("<base64>");
    out.with_string([&](std::string& text) { rapidrpc::append_base64(text, b.data); },
                    rapidrpc::detail::base64_chars(b.data.size()));
    out.put("</base64>");
  }
  void operator()(const array& a) const {
    out.put("<array><data>");
    for (const value& e : a) append_value(out, e);
    out.put("</data></array>");
  }
  void operator()(const structure& s) const {
    out.put("<struct>");
    for (const auto& [name, member] : s) {
      out.put("<member><name>");
      append_text(out, name, on_invalid::throw_error);
      out.put("</name>");
      append_value(out, member);
      out.put("</member>");
    }
    out.put("</struct>");
  }

  template <std::size_t Open, std::size_t Close>
  void integer(const char (&open)[Open], std::int64_t i, const char (&close)[Close]) const {
    char* at = out.room(Open - 1 + rapidrpc::detail::max_integer_chars + Close - 1);
    std::memcpy(at, open, Open - 1);
    at = rapidrpc::detail::write_integer(at + Open - 1, i);
    std::memcpy(at, close, Close - 1);
    out.advance(at + Close - 1);
  }
};

void append_value(sink& out, const value& v) {
  out.put("<value>");
  std::visit(value_writer{out}, v.raw());
  out.put("</value>");
}

void append_value(std::string& out, const value& v) {
  sink to(out);
  append_value(to, v);
}

}  // namespace

void write_value(std::string& out, const value& v) {
  rapidrpc::detail::append_or_restore(out, [&] { append_value(out, v); });
}

void write_call(std::string& out, std::string_view method, const array& params) {
  rapidrpc::detail::append_or_restore(out, [&] {
    out += xml_declaration;
    out += "<methodCall><methodName>";
    append_text(out, method, on_invalid::throw_error);
    out += "</methodName><params>";
    for (const value& p : params) {
      out += "<param>";
      append_value(out, p);
      out += "</param>";
    }
    out += "</params></methodCall>";
  });
}

void write_response(std::string& out, const value& result) {
  rapidrpc::detail::append_or_restore(out, [&] {
    out += xml_declaration;
    out += "<methodResponse><params><param>";
    append_value(out, result);
    out += "</param></params></methodResponse>";
  });
}

void write_fault(std::string& out, std::int32_t code, std::string_view message) {
  out += xml_declaration;
  out += "<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>";
  char buf[12];
  const auto r = std::to_chars(buf, buf + sizeof buf, code);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
  out += "</int></value></member><member><name>faultString</name><value><string>";
  append_text(out, message, on_invalid::replace);
  out += "</string></value></member></struct></value></fault></methodResponse>";
}

}  // namespace rapidrpc::xmlrpc

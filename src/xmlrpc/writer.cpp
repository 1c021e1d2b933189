// The XML-RPC writers: compact documents appended straight to a string.
#include <rapidrpc/xmlrpc.hpp>

#include <rapidrpc/literals.hpp>

#include "value/text.hpp"

#include <charconv>
#include <stdexcept>

namespace rapidrpc::xmlrpc {
namespace {

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

// Appends `s` as XML character data: & < > escaped, CR as &#13; so that it
// survives XML's line-end normalization.
void append_text(std::string& out, std::string_view s, on_invalid policy) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  const auto* run = p;  // start of bytes not yet copied
  const auto flush = [&](const unsigned char* upto) {
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(upto - run));
  };
  while (p != end) {
    const unsigned char c = *p;
    if (c >= 0x20 && c < 0x80) {
      if (c != '&' && c != '<' && c != '>') {
        ++p;
        continue;
      }
      flush(p);
      out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : "&gt;";
      run = ++p;
      continue;
    }
    if (c == '\t' || c == '\n') {
      ++p;
      continue;
    }
    if (c == '\r') {
      flush(p);
      out += "&#13;";
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
    out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER, for one bad byte
    run = ++p;
  }
  flush(end);
}

void append_value(std::string& out, const value& v);

struct value_writer {
  std::string& out;

  void operator()(nil_t) const { out += "<nil/>"; }
  void operator()(std::int32_t i) const { integer("<int>", i, "</int>"); }
  void operator()(std::int64_t i) const { integer("<i8>", i, "</i8>"); }
  void operator()(bool b) const { out += b ? "<boolean>1</boolean>" : "<boolean>0</boolean>"; }
  void operator()(double d) const {
    out += "<double>";
    if (!rapidrpc::append_double(out, d)) {
      throw std::invalid_argument("XML-RPC cannot carry an infinite or NaN <double>");
    }
    out += "</double>";
  }
  void operator()(const std::string& s) const {
    out += "<string>";
    append_text(out, s, on_invalid::throw_error);
    out += "</string>";
  }
  void operator()(const date_time& t) const {
    if (!rapidrpc::is_valid(t)) throw std::invalid_argument("date_time field out of range");
    out += "<dateTime.iso8601>";
    rapidrpc::append_date_time(out, t);
    out += "</dateTime.iso8601>";
  }
  void operator()(const bytes& b) const {
    out += "<base64>";
    rapidrpc::append_base64(out, b.data);
    out += "</base64>";
  }
  void operator()(const array& a) const {
    out += "<array><data>";
    for (const value& e : a) append_value(out, e);
    out += "</data></array>";
  }
  void operator()(const structure& s) const {
    out += "<struct>";
    for (const auto& [name, member] : s) {
      out += "<member><name>";
      append_text(out, name, on_invalid::throw_error);
      out += "</name>";
      append_value(out, member);
      out += "</member>";
    }
    out += "</struct>";
  }

  template <class Int>
  void integer(std::string_view open, Int i, std::string_view close) const {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, i);
    out += open;
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
    out += close;
  }
};

void append_value(std::string& out, const value& v) {
  out += "<value>";
  std::visit(value_writer{out}, v.raw());
  out += "</value>";
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

// The JSON-RPC writers: compact texts appended straight to a string.
#include <rapidrpc/jsonrpc.hpp>

#include <rapidrpc/literals.hpp>

#include "value/text.hpp"

#include <charconv>
#include <stdexcept>

namespace rapidrpc::jsonrpc {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

void append_string(std::string& out, std::string_view s, invalid_utf8 policy) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  const auto* run = p;  // start of bytes not yet copied
  const auto flush = [&](const unsigned char* upto) {
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(upto - run));
  };
  out += '"';
  while (p != end) {
    const unsigned char c = *p;
    if (c >= 0x20 && c < 0x80) {
      if (c != '"' && c != '\\') {
        ++p;
        continue;
      }
      flush(p);
      out += '\\';
      out += static_cast<char>(c);
      run = ++p;
      continue;
    }
    if (c < 0x20) {
      flush(p);
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          out += "\\u00";
          out += hex_digits[c >> 4];
          out += hex_digits[c & 15];
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
    out += "\xEF\xBF\xBD";  // U+FFFD
    run = ++p;
  }
  flush(p);
  out += '"';
}

struct value_writer {
  std::string& out;

  void operator()(nil_t) const { out += "null"; }
  void operator()(std::int32_t i) const { integer(i); }
  void operator()(std::int64_t i) const { integer(i); }
  void operator()(bool b) const { out += b ? "true" : "false"; }
  void operator()(double d) const {
    if (!append_double(out, d))
      throw std::invalid_argument("JSON cannot carry an infinite or NaN number");
  }
  void operator()(const std::string& s) const { append_string(out, s, invalid_utf8::throw_error); }
  void operator()(const date_time& t) const {
    if (!is_valid(t)) throw std::invalid_argument("date_time field out of range");
    out += "{\"$datetime\":\"";
    append_date_time(out, t, date_format::extended);
    out += "\"}";
  }
  void operator()(const bytes& b) const {
    out += "{\"$base64\":\"";
    append_base64(out, b.data);
    out += "\"}";
  }
  void operator()(const array& a) const {
    out += '[';
    bool first = true;
    for (const value& e : a) {
      if (!first) out += ',';
      first = false;
      std::visit(*this, e.raw());
    }
    out += ']';
  }
  void operator()(const structure& s) const {
    out += '{';
    bool first = true;
    for (const auto& [name, member] : s) {
      if (!first) out += ',';
      first = false;
      append_string(out, name, invalid_utf8::throw_error);
      out += ':';
      std::visit(*this, member.raw());
    }
    out += '}';
  }

  template <class Int>
  void integer(Int i) const {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, i);
    out.append(buf, r.ptr);
  }
};

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
  rapidrpc::detail::append_or_restore(out, [&] { std::visit(value_writer{out}, v.raw()); });
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
    value_writer{out}(params);
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
    std::visit(value_writer{out}, result.raw());
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
  out.append(buf, r.ptr);
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

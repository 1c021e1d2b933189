#include <rapidrpc/value.hpp>

#include <charconv>
#include <cstdio>

namespace rapidrpc {

std::string_view kind_name(kind k) noexcept {
  switch (k) {
    case kind::nil:
      return "nil";
    case kind::i4:
      return "int";
    case kind::i8:
      return "i8";
    case kind::boolean:
      return "boolean";
    case kind::floating:
      return "double";
    case kind::string:
      return "string";
    case kind::date_time:
      return "dateTime.iso8601";
    case kind::binary:
      return "base64";
    case kind::array:
      return "array";
    case kind::structure:
      return "struct";
  }
  return "unknown";
}

namespace {

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void append_debug(std::string& out, const value& v) {
  struct visitor {
    std::string& out;
    void operator()(nil_t) const { out += "nil"; }
    void operator()(std::int32_t i) const { out += std::to_string(i); }
    void operator()(std::int64_t i) const { out += std::to_string(i) + "L"; }
    void operator()(bool b) const { out += b ? "true" : "false"; }
    void operator()(double d) const {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, d);
      out.append(buf, static_cast<std::size_t>(r.ptr - buf));
    }
    void operator()(const std::string& s) const { append_quoted(out, s); }
    void operator()(const date_time& t) const {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d:%02d:%02d", t.year, t.month, t.day, t.hour,
                    t.minute, t.second);
      out += buf;
      if (t.microsecond != 0) {
        std::snprintf(buf, sizeof buf, ".%06u", static_cast<unsigned>(t.microsecond));
        out += buf;
      }
    }
    void operator()(const bytes& b) const {
      out += "<" + std::to_string(b.data.size()) + " bytes>";
    }
    void operator()(const array& a) const {
      out += '[';
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i) out += ", ";
        append_debug(out, a[i]);
      }
      out += ']';
    }
    void operator()(const structure& s) const {
      out += '{';
      bool first = true;
      for (const auto& [k, m] : s) {
        if (!first) out += ", ";
        first = false;
        append_quoted(out, k);
        out += ": ";
        append_debug(out, m);
      }
      out += '}';
    }
  };
  std::visit(visitor{out}, v.raw());
}

}  // namespace

std::string to_debug_string(const value& v) {
  std::string out;
  append_debug(out, v);
  return out;
}

}  // namespace rapidrpc

#include "output.hpp"

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/literals.hpp>

namespace rapidrpc::cli {

namespace {

void newline(std::string& out, int indent, int level) {
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(level), ' ');
}

// The layout is ours; every scalar and member name is the codec's.
void write_indented(std::string& out, const value& v, int indent, int level) {
  if (const auto* a = v.get_if<array>(); a && !a->empty()) {
    out += '[';
    bool first = true;
    for (const value& item : *a) {
      if (!first) out += ',';
      first = false;
      newline(out, indent, level + 1);
      write_indented(out, item, indent, level + 1);
    }
    newline(out, indent, level);
    out += ']';
  } else if (const auto* s = v.get_if<structure>(); s && !s->empty()) {
    out += '{';
    bool first = true;
    for (const auto& [name, item] : *s) {
      if (!first) out += ',';
      first = false;
      newline(out, indent, level + 1);
      jsonrpc::write_string(out, name);
      out += ": ";
      write_indented(out, item, indent, level + 1);
    }
    newline(out, indent, level);
    out += '}';
  } else {
    jsonrpc::write_value(out, v);
  }
}

}  // namespace

std::string to_json(const value& v) {
  std::string out;
  jsonrpc::write_value(out, v);
  return out;
}

std::string to_indented_json(const value& v, int indent) {
  std::string out;
  write_indented(out, v, indent, 0);
  return out;
}

std::string readable(const value& v) {
  switch (v.type()) {
    case kind::string:
      return v.as<std::string>();
    case kind::nil:
      return "nil";
    case kind::date_time: {
      std::string out;
      append_date_time(out, v.as<date_time>(), date_format::extended);
      return out;
    }
    case kind::binary: {
      std::string out = "base64:";
      append_base64(out, v.as<bytes>().data);
      return out;
    }
    default:
      return to_indented_json(v, 2);
  }
}

}  // namespace rapidrpc::cli

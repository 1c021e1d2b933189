#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace rapidrpc::xmlrpc::test {

std::string describe(const value& v) {
  if (const auto* b = v.get_if<bytes>()) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string s = "bytes(";
    for (std::uint8_t c : b->data) {
      s += hex[c >> 4];
      s += hex[c & 15];
    }
    return s + ")";
  }
  if (const auto* a = v.get_if<array>()) {
    std::string s = "[";
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (i != 0) s += ", ";
      s += describe((*a)[i]);
    }
    return s + "]";
  }
  if (const auto* st = v.get_if<structure>()) {
    std::string s = "{";
    bool first = true;
    for (const auto& [name, member] : *st) {
      if (!first) s += ", ";
      first = false;
      s += to_debug_string(value(name)) + ": " + describe(member);
    }
    return s + "}";
  }
  return to_debug_string(v);
}

std::string outcome(document_type type, parser& p, bool ok) {
  if (!ok) return "error " + std::to_string(p.error().code) + " " + p.error().message;
  if (type == document_type::call) {
    const method_call& c = p.call();
    return "method " + c.method + "\nparams " + describe(value(c.params));
  }
  const rapidrpc::outcome& r = p.response();
  if (const auto* f = std::get_if<fault>(&r)) {
    return "fault " + std::to_string(f->code()) + " " + to_debug_string(value(f->message()));
  }
  return "result " + describe(std::get<value>(r));
}

std::string parse_with_cuts(document_type type, std::string_view doc,
                            const std::vector<std::size_t>& cuts, const limits& lim) {
  parser p(type, lim);
  std::size_t from = 0;
  bool ok = true;
  for (std::size_t cut : cuts) {
    ok = p.feed(doc.substr(from, cut - from));
    from = cut;
    if (!ok) break;
  }
  if (ok) ok = p.feed(doc.substr(from)) && p.finish();
  return outcome(type, p, ok);
}

std::string parse_bytewise(document_type type, std::string_view doc, const limits& lim) {
  parser p(type, lim);
  bool ok = true;
  for (std::size_t i = 0; ok && i < doc.size(); ++i) ok = p.feed(doc.substr(i, 1));
  if (ok) ok = p.finish();
  return outcome(type, p, ok);
}

std::string parse_whole(document_type type, std::string_view doc, const limits& lim) {
  return parse_with_cuts(type, doc, {}, lim);
}

std::string parse_direct(document_type type, std::string_view doc, const limits& lim) {
  parser p(type, lim);
  const bool ok = p.parse(doc);
  return outcome(type, p, ok);
}

std::string parse_every_way(document_type type, std::string_view doc, const limits& lim) {
  std::string whole = parse_whole(type, doc, lim);
  EXPECT_EQ(parse_direct(type, doc, lim), whole) << "read by parse()";
  for (std::size_t cut = 0; cut <= doc.size(); ++cut) {
    EXPECT_EQ(parse_with_cuts(type, doc, {cut}, lim), whole) << "split at byte " << cut;
  }
  EXPECT_EQ(parse_bytewise(type, doc, lim), whole) << "fed byte by byte";
  return whole;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace rapidrpc::xmlrpc::test

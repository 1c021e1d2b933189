#include "charset.hpp"

#include <iconv.h>

#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace rapidrpc::xmlrpc::detail {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `s` without its '-' and '_': "utf8" for UTF-8, utf_8, Utf-8.
std::string compact(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '-' && c != '_') out += c;
  }
  return out;
}

// What iconv said about one name it opened.
struct entry {
  byte_table table;
  std::string refusal;  // non-empty: not readable, and why (after the name)
};

// One byte's character through `cd`: the code point, -1 if iconv says the
// byte is no character, nullopt if the byte is not a whole character on its
// own (the lead byte of a multibyte character, a shift of a stateful set).
std::optional<std::int32_t> convert_byte(iconv_t cd, unsigned char byte) {
  iconv(cd, nullptr, nullptr, nullptr, nullptr);  // the initial shift state
  char in = static_cast<char>(byte);
  char* in_at = &in;
  std::size_t in_left = 1;
  std::array<unsigned char, 16> out{};
  char* out_at = reinterpret_cast<char*>(out.data());
  std::size_t out_left = out.size();
  if (iconv(cd, &in_at, &in_left, &out_at, &out_left) == static_cast<std::size_t>(-1)) {
    if (errno == EILSEQ) return -1;
    return std::nullopt;  // EINVAL: an incomplete sequence
  }
  if (iconv(cd, nullptr, nullptr, &out_at, &out_left) == static_cast<std::size_t>(-1))
    return std::nullopt;
  if (in_left != 0 || out.size() - out_left != 4) return std::nullopt;  // none, or several
  const std::uint32_t c = out[0] | (std::uint32_t{out[1]} << 8) | (std::uint32_t{out[2]} << 16) |
                          (std::uint32_t{out[3]} << 24);
  // A surrogate or a character beyond the BMP from one byte: no real set
  // has one, and expat's tables could not hold it.
  if (c > 0xFFFF || (c >= 0xD800 && c <= 0xDFFF)) return -1;
  return static_cast<std::int32_t>(c);
}

// The table of the character set `cd` converts from, or the reason it is
// not readable byte by byte.
std::unique_ptr<entry> build(iconv_t cd) {
  auto e = std::make_unique<entry>();
  for (int b = 0; b < 256; ++b) {
    const std::optional<std::int32_t> c = convert_byte(cd, static_cast<unsigned char>(b));
    if (!c) {
      e->refusal = " is not read (of the multibyte character sets, only UTF-8 and UTF-16 are read)";
      return e;
    }
    e->table.chars[static_cast<std::size_t>(b)] = *c;
    if (*c < 0) e->table.complete = false;
  }
  // The bytes of XML's markup and of names must be themselves, as in ASCII.
  for (int b = 0; b < 128; ++b) {
    const bool markup = b == '\t' || b == '\n' || b == '\r' || (b >= 0x20 && b < 0x7F);
    if (markup && e->table.chars[static_cast<std::size_t>(b)] != b) {
      e->refusal = " is not read (its ASCII bytes are not ASCII characters)";
      return e;
    }
  }
  return e;
}

struct cache {
  std::mutex lock;
  // By the spelling iconv opened; never erased, so tables stay put. Only
  // names iconv knows get in: the map is as small as glibc's list.
  std::map<std::string, std::unique_ptr<entry>, std::less<>> entries;
};

cache& the_cache() {
  static cache c;
  return c;
}

charset from(const entry& e, std::string_view name) {
  charset c;
  if (!e.refusal.empty()) {
    c.refusal = "encoding " + quoted_encoding(name) + e.refusal;
    return c;
  }
  c.kind = charset_kind::single_byte;
  c.table = &e.table;
  return c;
}

}  // namespace

std::string quoted_encoding(std::string_view name) {
  bool printable = !name.empty() && name.size() <= 32;
  for (char c : name) printable = printable && c > ' ' && c <= '~' && c != '"';
  return printable ? "\"" + std::string(name) + "\"" : "(its name is not shown)";
}

charset find_charset(std::string_view name) {
  // XML's EncName, [A-Za-z] ([A-Za-z0-9._] | '-')*, and nothing iconv would
  // read as an option ("//TRANSLIT").
  bool well_formed = !name.empty() && name.size() <= 64 &&
                     ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'));
  for (char c : name) {
    well_formed = well_formed && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
  }
  if (!well_formed)
    return {charset_kind::unsupported, nullptr, "unsupported encoding " + quoted_encoding(name)};

  const std::string lowered = lower(name);
  const std::string short_name = compact(lowered);
  if (short_name == "utf8") return {charset_kind::utf8, nullptr, {}};
  if (short_name == "utf16" || short_name == "utf16le" || short_name == "utf16be")
    return {charset_kind::utf16, nullptr, {}};

  // Python's spellings (latin_1, iso8859_15, windows_1252) and glibc's
  // (LATIN1, ISO-8859-15, WINDOWS-1252) meet in one of these.
  std::string dashed = lowered;
  for (char& c : dashed) {
    if (c == '_') c = '-';
  }
  const std::array<std::string, 3> spellings = {lowered, dashed, short_name};

  cache& k = the_cache();
  const std::lock_guard<std::mutex> hold(k.lock);
  for (const std::string& s : spellings) {
    if (auto it = k.entries.find(s); it != k.entries.end()) return from(*it->second, name);
  }
  for (const std::string& s : spellings) {
    if (s.empty()) continue;
    iconv_t cd = iconv_open("UTF-32LE", s.c_str());
    if (reinterpret_cast<std::intptr_t>(cd) == -1) continue;  // (iconv_t)-1: not known
    std::unique_ptr<entry> e = build(cd);
    iconv_close(cd);
    const entry& kept = *e;
    k.entries.emplace(s, std::move(e));
    return from(kept, name);
  }
  charset c;
  c.refusal = "unsupported encoding " + quoted_encoding(name);
  return c;
}

}  // namespace rapidrpc::xmlrpc::detail

// The XML-RPC parser: a small state machine over the document's elements,
// driven by one of two readers of the XML.
//
// - A whole document (parser::parse) is first read by a direct scanner of a
//   strict subset of XML: UTF-8, an optional XML declaration, the grammar's
//   own elements without attributes, text with the predefined entities and
//   character references. It gives up on anything else (a comment, a CDATA
//   section, a namespace declaration, an error of any kind), and the
//   document is then read again from the start by expat, whose verdict and
//   error stand. So the scanner only has to be right about what it accepts:
//   the same events, in the same order, that expat would report.
// - Chunks (feed/finish) go to an expat push parser.
//
// Encodings: a document is UTF-8 unless its first bytes say UTF-16 (a byte
// order mark, or a NUL in either of the first two bytes, as expat and XML's
// appendix F read them) or its XML declaration names another encoding. The
// first bytes are held back until that is known (a few dozen at most), so
// the encoding is settled before expat sees a byte: expat reads UTF-8,
// UTF-16, ISO-8859-1 and US-ASCII itself (told which when the declaration
// spells it otherwise, "utf8"), and other single-byte character sets through
// tables built with iconv (charset.hpp). Each byte is checked against the
// encoding before expat reads it, so a byte that is no character of the
// declared encoding is fault -32701 naming the encoding, whatever the rest
// of the document holds after it. The values are UTF-8 either way: expat
// hands on UTF-8. The direct scanner reads UTF-8 only (an XML declaration
// naming "UTF-8" or none) and leaves every other document to expat.
//
// Each open element is a frame on an explicit stack; frames of <value>,
// <array>, <data>, <struct> and <member> point at the value being built, so
// arrays and structs are filled in place as their children arrive. Text of
// the innermost text-holding element goes into one reused buffer.
#include <rapidrpc/xmlrpc.hpp>

#include <rapidrpc/literals.hpp>

#include "charset.hpp"
#include "value/growth.hpp"

#include <expat.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <new>
#include <random>
#include <stdexcept>
#include <utility>

namespace rapidrpc::xmlrpc {
namespace {

// Every element the grammar knows, by its spelling (int and i4, i8 and ex:i8,
// nil and ex:nil are distinct so that messages name what was sent).
enum class tag : std::uint8_t {
  unknown,
  method_call,
  method_name,
  method_response,
  params,
  param,
  fault,
  value,
  array,
  data,
  structure,
  member,
  name,
  int_,
  i4,
  i8,
  ex_i8,
  boolean,
  floating,
  string,
  date_time,
  base64,
  nil,
  ex_nil,
};
constexpr std::size_t tag_count = static_cast<std::size_t>(tag::ex_nil) + 1;

constexpr std::string_view tag_name(tag t) noexcept {
  switch (t) {
    case tag::unknown:
      return "?";
    case tag::method_call:
      return "methodCall";
    case tag::method_name:
      return "methodName";
    case tag::method_response:
      return "methodResponse";
    case tag::params:
      return "params";
    case tag::param:
      return "param";
    case tag::fault:
      return "fault";
    case tag::value:
      return "value";
    case tag::array:
      return "array";
    case tag::data:
      return "data";
    case tag::structure:
      return "struct";
    case tag::member:
      return "member";
    case tag::name:
      return "name";
    case tag::int_:
      return "int";
    case tag::i4:
      return "i4";
    case tag::i8:
      return "i8";
    case tag::ex_i8:
      return "ex:i8";
    case tag::boolean:
      return "boolean";
    case tag::floating:
      return "double";
    case tag::string:
      return "string";
    case tag::date_time:
      return "dateTime.iso8601";
    case tag::base64:
      return "base64";
    case tag::nil:
      return "nil";
    case tag::ex_nil:
      return "ex:nil";
  }
  return "?";
}

tag identify(std::string_view n) noexcept {
  auto is = [n](tag t) { return n == tag_name(t); };
  if (n.empty()) return tag::unknown;
  switch (n[0]) {
    case 'v':
      return is(tag::value) ? tag::value : tag::unknown;
    case 'm':
      if (is(tag::member)) return tag::member;
      if (is(tag::method_name)) return tag::method_name;
      if (is(tag::method_call)) return tag::method_call;
      if (is(tag::method_response)) return tag::method_response;
      return tag::unknown;
    case 'p':
      if (is(tag::param)) return tag::param;
      if (is(tag::params)) return tag::params;
      return tag::unknown;
    case 'n':
      if (is(tag::name)) return tag::name;
      if (is(tag::nil)) return tag::nil;
      return tag::unknown;
    case 's':
      if (is(tag::string)) return tag::string;
      if (is(tag::structure)) return tag::structure;
      return tag::unknown;
    case 'i':
      if (is(tag::int_)) return tag::int_;
      if (is(tag::i4)) return tag::i4;
      if (is(tag::i8)) return tag::i8;
      return tag::unknown;
    case 'a':
      return is(tag::array) ? tag::array : tag::unknown;
    case 'd':
      if (is(tag::data)) return tag::data;
      if (is(tag::floating)) return tag::floating;
      if (is(tag::date_time)) return tag::date_time;
      return tag::unknown;
    case 'b':
      if (is(tag::boolean)) return tag::boolean;
      if (is(tag::base64)) return tag::base64;
      return tag::unknown;
    case 'f':
      return is(tag::fault) ? tag::fault : tag::unknown;
    case 'e':
      if (is(tag::ex_nil)) return tag::ex_nil;
      if (is(tag::ex_i8)) return tag::ex_i8;
      return tag::unknown;
    default:
      return tag::unknown;
  }
}

// Each tag's name as two little-endian words and the masks of its bytes
// (no name is longer than 16 bytes).
struct packed_name {
  std::uint64_t words[2] = {0, 0};
  std::uint64_t masks[2] = {0, 0};
};
constexpr std::array<packed_name, tag_count> packed_names = [] {
  std::array<packed_name, tag_count> t{};
  for (std::size_t i = 0; i < tag_count; ++i) {
    const std::string_view n = tag_name(static_cast<tag>(i));
    for (std::size_t k = 0; k < n.size(); ++k) {
      t[i].words[k / 8] |= std::uint64_t{static_cast<unsigned char>(n[k])} << (8 * (k % 8));
      t[i].masks[k / 8] |= std::uint64_t{0xFF} << (8 * (k % 8));
    }
  }
  return t;
}();

// The element types a <value> may hold.
constexpr bool is_type(tag t) noexcept {
  return t >= tag::array && t != tag::data && t != tag::member && t != tag::name;
}

// Elements whose content is text kept in the text buffer.
constexpr bool holds_text(tag t) noexcept {
  return t == tag::method_name || t == tag::name || (t >= tag::int_ && t <= tag::base64);
}

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool all_space(std::string_view s) noexcept {
  for (char c : s) {
    if (!is_space(c)) return false;
  }
  return true;
}

constexpr bool is_method_name_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == ':' || c == '/';
}

// Whether a name from the input may be echoed in a message: only when short
// and printable ASCII.
bool echoable(std::string_view n) noexcept {
  if (n.empty() || n.size() > 32) return false;
  for (char c : n) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

std::string in(tag t) { return "<" + std::string(tag_name(t)) + ">"; }

// One salt for the whole process: without it expat reads the system's random
// source for every document it parses.
unsigned long process_hash_salt() {
  static const unsigned long salt = [] {
    std::random_device rd;
    unsigned long s = rd();
    if constexpr (sizeof(unsigned long) > 4) s = (s << 32) ^ rd();
    return s != 0 ? s : 1UL;  // 0 would make expat draw its own
  }();
  return salt;
}

// An open element.
struct frame {
  tag t = tag::unknown;
  std::uint8_t state = 0;   // children seen, per element (see start())
  value* target = nullptr;  // the value this element fills, if any
};

}  // namespace

struct parser::impl {
  document_type type;
  limits lim;
  XML_Parser xp = nullptr;

  std::vector<frame> stack;
  std::string text;  // text of the innermost text-holding element
  // The text of a <base64> as the scanner found it, unchecked as text: a
  // view of the document (which outlives the parse), decoded in place
  // instead of copied into `text`. (If the decoder refuses it, the scanner
  // gives up, as on any error, and expat reads the text.)
  std::string_view base64_in_place;
  std::size_t elements = 0;
  std::size_t depth = 0;  // open <array>/<struct>

  // The document's encoding (see the top of this file).
  enum class encoding : std::uint8_t { unknown, utf8, utf16_le, utf16_be, single_byte };
  encoding enc = encoding::unknown;
  std::string head;                           // the first bytes, held until the encoding is known
  std::string declared;                       // the encoding the XML declaration names, as spelled
  bool utf8_mark = false;                     // the document starts with a UTF-8 BOM
  const detail::byte_table* table = nullptr;  // single_byte: for expat (on_unknown_encoding)
  const detail::byte_table* checked_by = nullptr;  // single_byte with bytes that are no character
  std::uint64_t handed_on = 0;                     // bytes given to expat (or refused) so far
  int odd_byte = -1;                               // UTF-16: the first byte of a unit
  std::uint64_t high_surrogate_at = 0;             // UTF-16: where an unpaired high surrogate is
  bool high_surrogate = false;
  bool failed = false;
  bool finished = false;
  bool expat_used = false;  // expat has read part of a document since its reset
  bool in_expat = false;    // inside XML_Parse (a failure stops it)
  bool direct = false;      // the document was read by the scanner
  parse_error error;
  std::string decoded;  // a run of text with its references replaced (the scanner)

  method_call call;   // document_type::call
  value result;       // <params><param><value> of a response
  value fault_value;  // <fault><value> of a response
  outcome response;   // set when </methodResponse> closes

  impl(document_type t, limits l) : type(t), lim(l) {
    xp = XML_ParserCreate(nullptr);
    if (xp == nullptr) throw std::bad_alloc();
    install();
    stack.reserve(16);
  }
  ~impl() { XML_ParserFree(xp); }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  // Handlers, user data and salt: XML_ParserReset clears them all.
  void install() {
    XML_SetUserData(xp, this);
    XML_SetHashSalt(xp, process_hash_salt());
    XML_SetElementHandler(xp, &on_start, &on_end);
    XML_SetCharacterDataHandler(xp, &on_text);
    XML_SetXmlDeclHandler(xp, &on_xml_decl);
    XML_SetStartDoctypeDeclHandler(xp, &on_doctype);
    XML_SetEntityDeclHandler(xp, &on_entity_decl);
    XML_SetUnknownEncodingHandler(xp, &on_unknown_encoding, this);
  }

  void reset() {
    if (expat_used) {
      if (!XML_ParserReset(xp, nullptr)) throw std::bad_alloc();
      install();
      expat_used = false;
    }
    stack.clear();
    base64_in_place = {};
    if (text.capacity() > (std::size_t{1} << 20))
      std::string().swap(text);  // don't pin a huge buffer
    text.clear();
    elements = depth = 0;
    enc = encoding::unknown;
    if (head.capacity() > (std::size_t{1} << 20)) std::string().swap(head);
    head.clear();
    declared.clear();
    utf8_mark = high_surrogate = false;
    table = checked_by = nullptr;
    handed_on = high_surrogate_at = 0;
    odd_byte = -1;
    failed = finished = direct = false;
    error = {};
    if (decoded.capacity() > (std::size_t{1} << 20)) std::string().swap(decoded);
    call.method.clear();
    call.params.clear();
    result = nil;
    fault_value = nil;
    response = value{};
  }

  void fail(std::int32_t code, std::string message) {
    if (failed) return;
    failed = true;
    error = {code, std::move(message)};
    if (in_expat) XML_StopParser(xp, XML_FALSE);
  }
  void invalid(std::string message) { fail(fault_code::invalid_request, std::move(message)); }

  // After XML_Parse failed: keep our own error, else describe expat's.
  bool fail_from_expat() {
    if (failed) return false;
    const XML_Error e = XML_GetErrorCode(xp);
    const std::int32_t code = e == XML_ERROR_UNKNOWN_ENCODING || e == XML_ERROR_INCORRECT_ENCODING
                                  ? fault_code::unsupported_encoding
                                  : fault_code::parse_error;
    fail(code, "XML error at line " + std::to_string(XML_GetCurrentLineNumber(xp)) + ": " +
                   XML_ErrorString(e));
    return false;
  }

  // --- the document's encoding ---------------------------------------------

  enum class sniffed : std::uint8_t { need_more, known, refused };

  // Settles the encoding from the document's first bytes `b` (all of them
  // when `at_end`): need_more until they are enough to know. Tells expat
  // the encoding where the declaration's spelling is not one it knows.
  sniffed sniff(std::string_view b, bool at_end) {
    const auto at = [b](std::size_t i) { return static_cast<unsigned char>(b[i]); };
    if (b.size() < 2) {
      if (!at_end) return sniffed::need_more;
      enc = encoding::utf8;
      return sniffed::known;
    }
    // UTF-16, as expat and XML's appendix F see it: a byte order mark, or
    // a NUL in the first two bytes (every document starts with ASCII).
    if ((at(0) == 0xFE && at(1) == 0xFF) || (at(0) == 0xFF && at(1) == 0xFE) || at(0) == 0 ||
        at(1) == 0) {
      const bool big_endian = at(0) == 0xFE || at(0) == 0;
      const bool marked = at(0) == 0xFE || at(0) == 0xFF;
      enc = big_endian ? encoding::utf16_be : encoding::utf16_le;
      // The declaration's spelling of UTF-16 does not matter (xml_decl()
      // checks it is one).
      tell_expat(marked ? "UTF-16" : big_endian ? "UTF-16BE" : "UTF-16LE");
      return sniffed::known;
    }
    std::size_t start = 0;
    if (at(0) == 0xEF) {
      if (b.size() < 3 && !at_end) return sniffed::need_more;
      if (b.size() >= 3 && at(1) == 0xBB && at(2) == 0xBF) {
        start = 3;
        utf8_mark = true;
      }
    }
    const std::string_view rest = b.substr(start);
    constexpr std::string_view open_decl = "<?xml";
    if (rest.size() <= open_decl.size()) {
      if (!at_end && open_decl.starts_with(rest)) return sniffed::need_more;
      enc = encoding::utf8;
      return sniffed::known;
    }
    if (!rest.starts_with(open_decl) || !is_space(rest[open_decl.size()])) {
      enc = encoding::utf8;  // no declaration: UTF-8
      return sniffed::known;
    }
    const std::size_t close = rest.find('>');
    if (close == std::string_view::npos) {
      if (!at_end) return sniffed::need_more;
      enc = encoding::utf8;  // (not well-formed: expat says so)
      return sniffed::known;
    }
    declared = declared_encoding(rest.substr(0, close));
    if (declared.empty()) {
      enc = encoding::utf8;
      return sniffed::known;
    }
    detail::charset c = detail::find_charset(declared);
    if (utf8_mark && c.kind != detail::charset_kind::utf8) {
      fail(fault_code::unsupported_encoding,
           "the document has a UTF-8 byte order mark but declares encoding " +
               detail::quoted_encoding(declared));
      return sniffed::refused;
    }
    switch (c.kind) {
      case detail::charset_kind::utf8:
        enc = encoding::utf8;
        if (!same_ignoring_case(declared, "UTF-8")) tell_expat("UTF-8");
        return sniffed::known;
      case detail::charset_kind::utf16:
        fail(fault_code::unsupported_encoding,
             "the document declares encoding " + detail::quoted_encoding(declared) +
                 " but is not UTF-16 (it starts with neither a byte order mark nor a NUL byte)");
        return sniffed::refused;
      case detail::charset_kind::single_byte:
        // expat reads ISO-8859-1 and US-ASCII itself; it asks
        // on_unknown_encoding() for the table of any other name.
        enc = encoding::single_byte;
        table = c.table;
        checked_by = c.table->complete ? nullptr : c.table;
        return sniffed::known;
      case detail::charset_kind::unsupported:
        break;
    }
    fail(fault_code::unsupported_encoding, std::move(c.refusal));
    return sniffed::refused;
  }

  // The value of the encoding pseudo-attribute in `decl` ("<?xml ..." up to
  // its '>'), or "" (none, or not read: expat then says what it is).
  static std::string declared_encoding(std::string_view decl) {
    constexpr std::string_view word = "encoding";
    for (std::size_t at = decl.find(word); at != std::string_view::npos;
         at = decl.find(word, at + 1)) {
      if (!is_space(decl[at - 1])) continue;  // ("<?xml" is before it)
      const char* p = decl.data() + at + word.size();
      std::string_view v;
      if (scan_attribute_value(p, decl.data() + decl.size(), v)) return std::string(v);
      return {};
    }
    return {};
  }

  static bool same_ignoring_case(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      char c = a[i];
      char d = b[i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (d >= 'a' && d <= 'z') d = static_cast<char>(d - 'a' + 'A');
      if (c != d) return false;
    }
    return true;
  }

  // Before expat's first byte: read the document as `name` whatever its
  // declaration says.
  void tell_expat(const char* name) {
    expat_used = true;  // reset() must clear it even if no byte follows
    XML_SetEncoding(xp, name);
  }

  // Gives `bytes` (the next of the document) to expat after checking them
  // against the encoding: expat reads the bytes before one that is no
  // character of it (its error there stands), then the encoding's fault.
  bool hand_on(std::string_view bytes) {
    std::size_t good = bytes.size();
    std::string why;
    if (checked_by != nullptr) {
      good = first_undefined(bytes);
      if (good != bytes.size()) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(bytes[good]));
        why = std::string("byte ") + hex + " at offset " + std::to_string(handed_on + good);
      }
    } else if (enc == encoding::utf16_le || enc == encoding::utf16_be) {
      good = check_utf16(bytes, why);
    }
    if (good != 0 && !parse(bytes.data(), good, false)) return false;
    handed_on += good;
    if (why.empty()) return true;
    return not_valid(why);
  }

  bool not_valid(const std::string& why) {
    const std::string name = checked_by != nullptr ? detail::quoted_encoding(declared) : "UTF-16";
    fail(fault_code::unsupported_encoding, "the document is not valid " + name + " (" + why + ")");
    return false;
  }

  // The offset in `bytes` of the first that the single-byte encoding leaves
  // undefined, or bytes.size().
  std::size_t first_undefined(std::string_view bytes) const noexcept {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (checked_by->chars[static_cast<unsigned char>(bytes[i])] < 0) return i;
    }
    return bytes.size();
  }

  // UTF-16: surrogates come in pairs, high then low. Returns how many of
  // `bytes` come before the unit where a pair is broken (all of them if
  // none is), with `why` set when one is. A unit may be split across
  // calls.
  std::size_t check_utf16(std::string_view bytes, std::string& why) {
    const bool big = enc == encoding::utf16_be;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const auto b = static_cast<unsigned char>(bytes[i]);
      if (odd_byte < 0) {
        odd_byte = b;
        continue;
      }
      const unsigned unit = big ? (static_cast<unsigned>(odd_byte) << 8) | b
                                : (static_cast<unsigned>(b) << 8) | static_cast<unsigned>(odd_byte);
      odd_byte = -1;
      const std::uint64_t unit_at = handed_on + i - 1;  // (may be in the previous call's bytes)
      const std::size_t unit_start = i == 0 ? 0 : i - 1;
      const bool low = unit >= 0xDC00 && unit <= 0xDFFF;
      if (high_surrogate) {
        high_surrogate = false;
        if (!low) {
          why = "unpaired surrogate at offset " + std::to_string(high_surrogate_at);
          return unit_start;
        }
      } else if (low) {
        why = "unpaired surrogate at offset " + std::to_string(unit_at);
        return unit_start;
      } else if (unit >= 0xD800 && unit <= 0xDBFF) {
        high_surrogate = true;
        high_surrogate_at = unit_at;
      }
    }
    return bytes.size();
  }

  // At the end of the document: no UTF-16 unit or pair left half read.
  bool check_end() {
    if (enc != encoding::utf16_le && enc != encoding::utf16_be) return true;
    if (odd_byte >= 0) return not_valid("an odd number of bytes");
    if (high_surrogate) {
      return not_valid("unpaired surrogate at offset " + std::to_string(high_surrogate_at));
    }
    return true;
  }

  bool parse(const char* data, std::size_t size, bool final) {
    expat_used = in_expat = true;
    const bool ok = expat_parse(data, size, final);
    in_expat = false;
    return ok;
  }

  bool expat_parse(const char* data, std::size_t size, bool final) {
    while (size > static_cast<std::size_t>(INT_MAX)) {
      if (XML_Parse(xp, data, INT_MAX, XML_FALSE) != XML_STATUS_OK) return fail_from_expat();
      data += INT_MAX;
      size -= INT_MAX;
    }
    if (XML_Parse(xp, data, static_cast<int>(size), final ? XML_TRUE : XML_FALSE) !=
        XML_STATUS_OK) {
      return fail_from_expat();
    }
    return !failed;
  }

  // --- expat callbacks -----------------------------------------------------
  //
  // No exception may unwind through expat's C frames: one thrown while
  // building values (only std::bad_alloc can be) ends the parse instead.

  template <class Handler>
  static void guarded(void* self, Handler handler) noexcept {
    auto& m = *static_cast<impl*>(self);
    try {
      handler(m);
    } catch (...) {
      if (m.failed) return;
      m.failed = true;
      m.error.code = fault_code::internal_error;
      m.error.message.assign("out of memory");  // fits the small-string buffer: no allocation
      if (m.in_expat) XML_StopParser(m.xp, XML_FALSE);
    }
  }

  static void XMLCALL on_start(void* self, const XML_Char* n, const XML_Char** atts) {
    guarded(self, [&](impl& m) { m.start(n, atts); });
  }
  static void XMLCALL on_end(void* self, const XML_Char*) {
    guarded(self, [](impl& m) { m.end_element(); });
  }
  static void XMLCALL on_text(void* self, const XML_Char* s, int len) {
    guarded(self,
            [&](impl& m) { m.characters(std::string_view(s, static_cast<std::size_t>(len))); });
  }
  static void XMLCALL on_xml_decl(void* self, const XML_Char*, const XML_Char* encoding, int) {
    guarded(self, [&](impl& m) { m.xml_decl(encoding); });
  }
  // expat's question about an encoding it does not know: the table sniff()
  // found for the declaration (expat asks only about that name).
  static int XMLCALL on_unknown_encoding(void* self, const XML_Char* name, XML_Encoding* info) {
    const auto& m = *static_cast<impl*>(self);
    if (m.table == nullptr || name == nullptr || m.declared != name) return XML_STATUS_ERROR;
    for (std::size_t i = 0; i < 256; ++i) info->map[i] = m.table->chars[i];
    info->data = nullptr;
    info->convert = nullptr;
    info->release = nullptr;
    return XML_STATUS_OK;
  }
  static void XMLCALL on_doctype(void* self, const XML_Char*, const XML_Char*, const XML_Char*,
                                 int) {
    guarded(self, [](impl& m) { m.fail(fault_code::parse_error, "a DOCTYPE is not allowed"); });
  }
  static void XMLCALL on_entity_decl(void* self, const XML_Char*, int, const XML_Char*, int,
                                     const XML_Char*, const XML_Char*, const XML_Char*,
                                     const XML_Char*) {
    guarded(self, [](impl& m) {
      m.fail(fault_code::parse_error, "entity declarations are not allowed");
    });
  }

  // The declaration as expat read it: what sniff() read, or, in a UTF-16
  // document (where sniff() reads no declaration), a spelling of UTF-16.
  void xml_decl(const char* encoding_name) {
    if (failed) return;
    const std::string_view name = encoding_name != nullptr ? encoding_name : "";
    if (enc == encoding::utf16_le || enc == encoding::utf16_be) {
      if (!name.empty() && detail::find_charset(name).kind != detail::charset_kind::utf16) {
        fail(fault_code::unsupported_encoding,
             "the document is UTF-16 but declares encoding " + detail::quoted_encoding(name));
      }
      return;
    }
    if (name != declared) fail(fault_code::parse_error, "the XML declaration could not be read");
  }

  void characters(std::string_view s) {
    if (failed) return;
    if (stack.empty()) return;  // expat reports text only inside the root; be safe
    frame& f = stack.back();
    if (holds_text(f.t) || (f.t == tag::value && f.state == 0)) {
      text.append(s);
      if (f.t == tag::method_name && text.size() > lim.max_name_bytes) {
        invalid("method name is longer than " + std::to_string(lim.max_name_bytes) + " bytes");
      }
      return;
    }
    if (!all_space(s)) invalid("text is not allowed in " + in(f.t));
  }

  void start(const char* raw_name, const char** atts) {
    if (failed) return;
    if (++elements > lim.max_elements) {
      return invalid("more than " + std::to_string(lim.max_elements) + " XML elements");
    }
    const std::string_view n(raw_name);
    const tag t = identify(n);
    if (t == tag::unknown) {
      return invalid(echoable(n) ? "unknown element <" + std::string(n) + ">" : "unknown element");
    }
    for (; *atts != nullptr; atts += 2) {
      // Namespace declarations (xmlns:ex="..." of the Apache extensions) are
      // the only attributes; XML-RPC itself has none.
      const std::string_view a(*atts);
      if (a != "xmlns" && !a.starts_with("xmlns:")) return invalid("attributes are not allowed");
    }
    open(t);
  }

  // A start tag of element `t` (counted, known, its attributes allowed).
  void open(tag t) {
    if (stack.empty()) {
      const tag root = type == document_type::call ? tag::method_call : tag::method_response;
      if (t != root) return invalid("the root element must be " + in(root));
      stack.push_back({t, 0, nullptr});
      return;
    }

    frame& parent = stack.back();
    const auto unexpected = [&] { invalid("unexpected " + in(t) + " in " + in(parent.t)); };
    value* target = nullptr;
    switch (parent.t) {
      case tag::method_call:  // <methodName> then optional <params>
        if (parent.state == 0 && t == tag::method_name) {
          parent.state = 1;
        } else if (parent.state == 1 && t == tag::params) {
          parent.state = 2;
        } else if (parent.state == 0 && t == tag::params) {
          return invalid("<methodName> must come first in <methodCall>");
        } else {
          return unexpected();
        }
        break;
      case tag::method_response:  // <params> or <fault>
        if (t != tag::params && t != tag::fault) return unexpected();
        if (parent.state != 0)
          return invalid("<methodResponse> must hold one <params> or one <fault>");
        parent.state = t == tag::params ? 1 : 2;
        break;
      case tag::params:  // <param>*; exactly one in a response
        if (t != tag::param) return unexpected();
        if (type == document_type::response && parent.state != 0) {
          return invalid("<methodResponse> must hold exactly one <param>");
        }
        parent.state = 1;
        break;
      case tag::param:  // one <value>
      case tag::fault:
        if (t != tag::value) return unexpected();
        if (parent.state != 0) return invalid(in(parent.t) + " must hold exactly one <value>");
        parent.state = 1;
        // Room for the first four parameters at once (most calls have no
        // more): one allocation instead of one per doubling.
        if (type == document_type::call && call.params.capacity() == 0) call.params.reserve(4);
        target = parent.t == tag::fault            ? &fault_value
                 : type == document_type::response ? &result
                                                   : &call.params.emplace_back();
        break;
      case tag::value:  // text, or one typed element
        if (!is_type(t)) return unexpected();
        if (parent.state != 0) return invalid("<value> must hold only one element");
        if (!all_space(text)) return invalid("<value> must not mix text and an element");
        parent.state = 1;
        target = parent.target;
        if (t == tag::array || t == tag::structure) {
          if (++depth > lim.max_depth) {
            return invalid("nesting deeper than " + std::to_string(lim.max_depth));
          }
          if (t == tag::array) {
            target->raw().emplace<array>();
          } else {
            target->raw().emplace<structure>();
          }
        }
        break;
      case tag::array:  // one <data>
        if (t != tag::data) return unexpected();
        if (parent.state != 0) return invalid("<array> must hold exactly one <data>");
        parent.state = 1;
        target = parent.target;
        break;
      case tag::data:  // <value>*
        if (t != tag::value) return unexpected();
        target = &rapidrpc::detail::room_for_one_more(*std::get_if<array>(&parent.target->raw()),
                                                      elements, lim.max_elements)
                      .emplace_back();
        break;
      case tag::structure:  // <member>*
        if (t != tag::member) return unexpected();
        target = parent.target;
        break;
      case tag::member:  // <name> then <value>
        if (parent.state == 0 && t == tag::name) {
          parent.state = 1;
        } else if (parent.state == 1 && t == tag::value) {
          parent.state = 2;
          auto& members = *std::get_if<structure>(&parent.target->raw());
          auto [it, inserted] = members.try_emplace(text);  // text holds the name
          if (!inserted) {
            return invalid(echoable(text) ? "duplicate member \"" + text + "\" in <struct>"
                                          : "duplicate member name in <struct>");
          }
          target = &it->second;
        } else {
          return invalid("<member> must hold <name> then <value>");
        }
        break;
      default:  // text-only and empty elements
        return invalid(in(parent.t) + " must not contain elements");
    }
    if (holds_text(t) || t == tag::value) text.clear();
    stack.push_back({t, 0, target});
  }

  void end_element() {
    if (failed) return;
    const frame f = stack.back();
    stack.pop_back();
    switch (f.t) {
      case tag::method_call:
        if (f.state == 0) invalid("<methodCall> has no <methodName>");
        break;
      case tag::method_name:
        end_method_name();
        break;
      case tag::method_response:
        end_response(f.state);
        break;
      case tag::params:
        if (type == document_type::response && f.state == 0) {
          invalid("<methodResponse> must hold exactly one <param>");
        }
        break;
      case tag::param:
      case tag::fault:
        if (f.state == 0) invalid(in(f.t) + " must hold exactly one <value>");
        break;
      case tag::value:
        if (f.state == 0) end_string(*f.target);  // no type element: a string
        break;
      case tag::array:
        if (f.state == 0) invalid("<array> must hold exactly one <data>");
        --depth;
        break;
      case tag::structure:
        --depth;
        break;
      case tag::member:
        if (f.state != 2) invalid("<member> must hold <name> then <value>");
        break;
      case tag::int_:
      case tag::i4:
        end_integer<std::int32_t>(f);
        break;
      case tag::i8:
      case tag::ex_i8:
        end_integer<std::int64_t>(f);
        break;
      case tag::boolean: {
        if (text != "0" && text != "1") return invalid("<boolean> value must be 0 or 1");
        f.target->raw().emplace<bool>(text == "1");
        break;
      }
      case tag::floating: {
        double d = 0;
        switch (rapidrpc::parse_double(text, d)) {
          case rapidrpc::literal_status::ok:
            f.target->raw().emplace<double>(d);
            break;
          case rapidrpc::literal_status::out_of_range:
            return invalid("<double> value out of range");
          case rapidrpc::literal_status::malformed:
            return invalid("<double> value is not a finite decimal number");
        }
        break;
      }
      case tag::string:
        end_string(*f.target);
        break;
      case tag::date_time: {
        rapidrpc::date_time t;
        if (!rapidrpc::parse_date_time(text, t)) {
          return invalid("<dateTime.iso8601> value is not a valid YYYYMMDDTHH:MM:SS date");
        }
        f.target->raw().emplace<rapidrpc::date_time>(t);
        break;
      }
      case tag::base64: {
        auto& b = f.target->raw().emplace<bytes>();
        const std::string_view encoded = base64_in_place.data() != nullptr ? base64_in_place : text;
        base64_in_place = {};
        if (!rapidrpc::decode_base64(encoded, b.data))
          return invalid("<base64> value is not valid base64");
        break;
      }
      case tag::nil:
      case tag::ex_nil:
        f.target->raw().emplace<nil_t>();
        break;
      case tag::data:
      case tag::name:  // the name stays in `text` for the member's <value>
      case tag::unknown:
        break;
    }
  }

  template <class Int>
  void end_integer(const frame& f) {
    Int i = 0;
    switch (rapidrpc::parse_integer(text, i)) {
      case rapidrpc::literal_status::ok:
        f.target->raw().template emplace<Int>(i);
        return;
      case rapidrpc::literal_status::out_of_range:
        return invalid(in(f.t) + " value out of range");
      case rapidrpc::literal_status::malformed:
        return invalid(in(f.t) + " value is not an integer");
    }
  }

  void end_string(value& target) {
    // Short strings are copied (no allocation, the buffer stays); long ones
    // are moved rather than copied.
    if (text.size() > 4096) {
      target.raw().emplace<std::string>(std::move(text));
      text = std::string();
    } else {
      target.raw().emplace<std::string>(text);
    }
  }

  void end_method_name() {
    if (text.empty()) return invalid("method name is empty");
    for (char c : text) {
      if (!is_method_name_char(c)) {
        return invalid("method name may only hold the characters A-Z a-z 0-9 _ . : /");
      }
    }
    call.method.assign(text);
  }

  void end_response(std::uint8_t state) {
    if (state == 0) return invalid("<methodResponse> must hold one <params> or one <fault>");
    if (state == 1) {
      response.emplace<value>(std::move(result));
      return;
    }
    const auto* members = fault_value.get_if<structure>();
    const value* code = nullptr;
    const value* message = nullptr;
    if (members != nullptr && members->size() == 2) {
      if (auto it = members->find("faultCode"); it != members->end()) code = &it->second;
      if (auto it = members->find("faultString"); it != members->end()) message = &it->second;
    }
    if (code == nullptr || message == nullptr || !code->is<std::int32_t>() ||
        !message->is<std::string>()) {
      return invalid("<fault> must hold a struct of faultCode (int) and faultString (string)");
    }
    response.emplace<fault>(code->as<std::int32_t>(), message->as<std::string>());
  }

  // --- the scanner (see the top of this file) ------------------------------
  //
  // Each step returns false to give up: on anything outside its subset, on
  // anything not well-formed, and on the grammar's own errors (expat then
  // reports those too, at the same element, with its line number).

  // Reads the whole document; true if it was accepted, with `call` or
  // `response` set as expat's events would have set them.
  bool scan(std::string_view doc) {
    const char* p = doc.data();
    const char* const end = p + doc.size();
    if (doc.starts_with("<?xml") && !scan_xml_decl(p, end)) return false;
    skip_space(p, end);
    if (p == end || *p != '<') return false;
    for (;;) {
      ++p;  // past '<'
      if (p == end) return false;
      if (*p == '/') {
        if (!scan_end_tag(++p, end)) return false;
      } else if (!scan_start_tag(p, end)) {
        return false;
      }
      if (stack.empty()) break;  // the root element is closed
      const char* lt = find_lt(p, end);
      if (lt == nullptr) return false;
      if (lt != p && !scan_text(p, lt)) return false;
      p = lt;
    }
    skip_space(p, end);
    return p == end;
  }

  // The next '<' in [p, end), or nullptr: the first sixteen bytes, where a
  // tag usually is, without a call; memchr beyond them.
  static const char* find_lt(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
    if (end - p >= 16) {
      const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const int hits = _mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_set1_epi8('<')));
      if (hits != 0) return p + std::countr_zero(static_cast<unsigned>(hits));
      p += 16;
    }
#endif
    return static_cast<const char*>(std::memchr(p, '<', static_cast<std::size_t>(end - p)));
  }

  static void skip_space(const char*& p, const char* end) noexcept {
    while (p != end && is_space(*p)) ++p;
  }

  static bool skip(const char*& p, const char* end, std::string_view word) noexcept {
    if (static_cast<std::size_t>(end - p) < word.size() ||
        std::memcmp(p, word.data(), word.size()) != 0)
      return false;
    p += word.size();
    return true;
  }

  // `S? '=' S? quote`, then the value up to the same quote: false unless
  // it is there.
  static bool scan_attribute_value(const char*& p, const char* end, std::string_view& out) {
    skip_space(p, end);
    if (!skip(p, end, "=")) return false;
    skip_space(p, end);
    if (p == end || (*p != '"' && *p != '\'')) return false;
    const char quote = *p++;
    const char* start = p;
    while (p != end && *p != quote) {
      if (*p == '<' || *p == '&') return false;
      ++p;
    }
    if (p == end) return false;
    out = std::string_view(start, static_cast<std::size_t>(p - start));
    ++p;
    return true;
  }

  // `<?xml version="1.0" [encoding="UTF-8"] [standalone="yes|no"] ?>`.
  // Any other encoding (US-ASCII included: its documents must hold no byte
  // over 127, which this scanner does not check) is left to expat.
  bool scan_xml_decl(const char*& p, const char* end) {
    p += 5;  // "<?xml"
    const char* before = p;
    skip_space(p, end);
    if (p == before || !skip(p, end, "version")) return false;
    std::string_view v;
    if (!scan_attribute_value(p, end, v) || v != "1.0") return false;
    before = p;
    skip_space(p, end);
    if (p != before && skip(p, end, "encoding")) {
      if (!scan_attribute_value(p, end, v) || v.size() != 5) return false;
      for (std::size_t i = 0; i < 5; ++i) {
        char c = v[i];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        if (c != "UTF-8"[i]) return false;
      }
      before = p;
      skip_space(p, end);
    }
    if (p != before && skip(p, end, "standalone")) {
      if (!scan_attribute_value(p, end, v) || (v != "yes" && v != "no")) return false;
      skip_space(p, end);
    }
    return skip(p, end, "?>");
  }

  // The ASCII bytes an element name may hold (any other is left to expat).
  static constexpr std::array<bool, 256> name_chars = [] {
    std::array<bool, 256> t{};
    for (int c = 0; c < 256; ++c)
      t[static_cast<std::size_t>(c)] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                       (c >= '0' && c <= '9') || c == '.' || c == ':' || c == '-' ||
                                       c == '_';
    return t;
  }();

  // Where the element name at p ends. Where 16 bytes are left, the name is
  // taken up to the first '>', '/', space or control byte, or byte from 0x80
  // up, found in one SSE2 step: it may then hold other bytes that cannot be
  // in a name, but no such name is a tag identify() knows, so what is
  // accepted is the same.
  static const char* name_end(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
    if (end - p >= 16) {
      const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i stop =
          _mm_or_si128(_mm_cmplt_epi8(w, _mm_set1_epi8(0x21)),  // signed: 0x80 up too
                       _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('>')),
                                    _mm_cmpeq_epi8(w, _mm_set1_epi8('/'))));
      if (const int hits = _mm_movemask_epi8(stop); hits != 0)
        return p + std::countr_zero(static_cast<unsigned>(hits));
    }
#endif
    while (p != end && name_chars[static_cast<unsigned char>(*p)]) ++p;
    return p;
  }

  // After '<': a start tag or an empty-element tag, without attributes.
  bool scan_start_tag(const char*& p, const char* end) {
    const char* name = p;
    p = name_end(p, end);
    const tag t = identify(std::string_view(name, static_cast<std::size_t>(p - name)));
    if (t == tag::unknown) return false;
    skip_space(p, end);
    bool empty = false;
    if (p != end && *p == '/') {
      empty = true;
      ++p;
    }
    if (p == end || *p != '>') return false;
    ++p;
    if (++elements > lim.max_elements) return false;
    open(t);
    if (failed) return false;
    if (empty) {
      end_element();
      if (failed) return false;
    } else if (t == tag::value) {
      scan_scalar_value(p, end);
    } else if (t == tag::data) {
      scan_array_items(p, end);
    } else if (t == tag::structure) {
      scan_struct_members(p, end);
    }
    return true;
  }

  // After a <value> start tag: the whole of a typed scalar in its most
  // common spelling, `<int>42</int></value>` (or i4, i8, ex:i8, double,
  // string), with plain text, taken in one step: no frame for the type
  // element, its text read where it lies. The events are those of the
  // general steps, which read anything else (space around the element,
  // references, an empty element, a malformed number) from p as it was:
  // nothing is changed unless the whole of it is here and accepted.
  void scan_scalar_value(const char*& p, const char* end) {
    if (!room_for(1)) return;  // the type element
    scalar s;
    const char* const after = match_scalar(p, end, s);
    if (after == nullptr) return;
    set_scalar(*stack.back().target, s);
    ++elements;
    stack.pop_back();
    p = after;
  }

  // After a <data> start tag: its items while each is a scalar that
  // scan_scalar_value() would take, each made where it is kept, white space
  // between them skipped (the general steps let it pass too). Stops before
  // anything else, which the general steps read.
  void scan_array_items(const char*& p, const char* end) {
    array& items = *std::get_if<array>(&stack.back().target->raw());
    for (;;) {
      skip_space(p, end);
      if (!room_for(2)) return;  // <value> and the type element
      const char* q = p;
      if (!skip(q, end, "<value>")) return;
      scalar s;
      const char* const after = match_scalar(q, end, s);
      if (after == nullptr) return;
      ++elements;  // <value>, counted before its room is made, as open() does
      array& room = rapidrpc::detail::room_for_one_more(items, elements, lim.max_elements);
      put_scalar(s, [&](auto, auto x) { room.emplace_back(x); });
      ++elements;  // the type element
      p = after;
    }
  }

  // After a <struct> start tag: its members while each is a plain name and
  // a scalar that scan_scalar_value() would take,
  // `<member><name>k</name><value><int>1</int></value></member>`, white
  // space allowed between the elements (the general steps let it pass
  // too). Stops before anything else, a repeated name included, which the
  // general steps read.
  void scan_struct_members(const char*& p, const char* end) {
    structure& members = *std::get_if<structure>(&stack.back().target->raw());
    for (;;) {
      skip_space(p, end);
      if (!room_for(4)) return;  // <member>, <name>, <value> and the type element
      const char* q = p;
      if (!skip(q, end, "<member>")) return;
      skip_space(q, end);
      if (!skip(q, end, "<name>")) return;
      const char* const name = q;
      const char* const lt = find_lt(q, end);
      if (lt == nullptr || skip_plain(name, lt) != lt) return;
      q = lt;
      if (!skip(q, end, "</name>")) return;
      skip_space(q, end);
      if (!skip(q, end, "<value>")) return;
      scalar s;
      q = match_scalar(q, end, s);
      if (q == nullptr) return;
      skip_space(q, end);
      if (!skip(q, end, "</member>")) return;
      const auto [it, inserted] =
          members.try_emplace(std::string_view(name, static_cast<std::size_t>(lt - name)));
      if (!inserted) return;
      set_scalar(it->second, s);
      elements += 4;
      p = q;
    }
  }

  // A scalar match_scalar() read: its type element and its value.
  struct scalar {
    tag t = tag::unknown;
    std::string_view text;  // tag::string
    std::int64_t i = 0;     // the integer types (an int or i4 within 32 bits)
    double d = 0;           // tag::floating
  };

  // `<T>text</T></value>` at q, T a scalar type, the text plain and its
  // value valid: where it ends, with `out` saying what it is; or nullptr.
  static const char* match_scalar(const char* q, const char* end, scalar& out) {
    if (end - q < 2 || *q != '<') return nullptr;
    const char* const name = ++q;
    q = name_end(q, end);
    const tag t = identify(std::string_view(name, static_cast<std::size_t>(q - name)));
    if (t < tag::int_ || t > tag::string || t == tag::boolean) return nullptr;
    if (q == end || *q != '>') return nullptr;
    const char* const from = ++q;
    const char* const lt = find_lt(q, end);
    if (lt == nullptr || skip_plain(from, lt) != lt) return nullptr;
    q = lt + 1;
    if (q == end || *q++ != '/' || !skip_name(q, end, t) || q == end || *q++ != '>') return nullptr;
    if (end - q < 2 || *q++ != '<' || *q++ != '/' || !skip_name(q, end, tag::value) || q == end ||
        *q++ != '>')
      return nullptr;
    const std::string_view text(from, static_cast<std::size_t>(lt - from));
    out.t = t;
    if (t == tag::string) {
      out.text = text;
    } else if (t == tag::floating) {
      if (rapidrpc::parse_double(text, out.d) != rapidrpc::literal_status::ok) return nullptr;
    } else if (t == tag::int_ || t == tag::i4) {
      std::int32_t i = 0;
      if (rapidrpc::parse_integer(text, i) != rapidrpc::literal_status::ok) return nullptr;
      out.i = i;
    } else if (rapidrpc::parse_integer(text, out.i) != rapidrpc::literal_status::ok) {
      return nullptr;
    }
    return q;
  }

  // Whether `n` more elements are within the element limit.
  bool room_for(std::size_t n) const noexcept {
    return lim.max_elements - std::min(elements, lim.max_elements) >= n;
  }

  // Makes `target` the scalar.
  static void set_scalar(value& target, const scalar& s) {
    put_scalar(s, [&]<class T>(std::in_place_type_t<T>, auto v) { target.raw().emplace<T>(v); });
  }

  // Calls put(std::in_place_type<T>, v): the scalar as the value type T
  // it is read as.
  template <class Put>
  static void put_scalar(const scalar& s, Put&& put) {
    switch (s.t) {
      case tag::string:
        return put(std::in_place_type<std::string>, s.text);
      case tag::floating:
        return put(std::in_place_type<double>, s.d);
      case tag::int_:
      case tag::i4:
        return put(std::in_place_type<std::int32_t>, static_cast<std::int32_t>(s.i));
      default:
        return put(std::in_place_type<std::int64_t>, s.i);
    }
  }

  // Skips `t`'s name at p if it is there: two word comparisons where 16
  // bytes are left (on a little-endian machine), a memcmp elsewhere.
  static bool skip_name(const char*& p, const char* end, tag t) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
      if (end - p >= 16) {
        const packed_name& n = packed_names[static_cast<std::size_t>(t)];
        std::uint64_t w[2];
        std::memcpy(w, p, 16);
        if ((((w[0] ^ n.words[0]) & n.masks[0]) | ((w[1] ^ n.words[1]) & n.masks[1])) != 0)
          return false;
        p += tag_name(t).size();
        return true;
      }
    }
    return skip(p, end, tag_name(t));
  }

  // After "</": the end tag of the open element.
  bool scan_end_tag(const char*& p, const char* end) {
    if (stack.empty() || !skip_name(p, end, stack.back().t)) return false;
    skip_space(p, end);
    if (p == end || *p != '>') return false;
    ++p;
    end_element();
    return !failed;
  }

  // Text, [from, to): handed on as expat would, with references replaced
  // and line ends normalized (CR LF and CR to LF). Gives up on a byte XML
  // does not allow, bad UTF-8, "]]>", and any other reference.
  bool scan_text(const char* from, const char* to) {
    if (!stack.empty() && stack.back().t == tag::base64 && text.empty()) {
      // The only text the element has (its end comes next), not checked
      // as text here: the decoder accepts nothing but the alphabet and
      // XML's white space, all of which stand for themselves (a CR, which
      // XML makes an LF, is white space to the decoder either way), and
      // the text it refuses fails the scan.
      base64_in_place = std::string_view(from, static_cast<std::size_t>(to - from));
      return !failed;
    }
    const char* p = skip_plain(from, to);
    if (p == to) {
      characters(std::string_view(from, static_cast<std::size_t>(to - from)));
      return !failed;
    }
    decoded.assign(from, p);
    while (p != to) {
      const char* run = p;
      p = skip_plain(p, to);
      decoded.append(run, p);
      if (p == to) break;
      const auto c = static_cast<unsigned char>(*p);
      if (c == '&') {
        if (!scan_reference(p, to)) return false;
      } else if (c == '\r') {
        decoded += '\n';
        ++p;
        if (p != to && *p == '\n') ++p;
      } else if (c == ']') {
        if (to - p >= 3 && p[1] == ']' && p[2] == '>') return false;
        decoded += ']';
        ++p;
      } else if (c >= 0x80) {
        const std::size_t n = utf8_length(p, to);
        if (n == 0) return false;
        decoded.append(p, n);
        p += n;
      } else {
        return false;  // a control character
      }
    }
    characters(decoded);
    return !failed;
  }

  // The first byte in [p, to) that is not plain(), or `to`: sixteen (SSE2)
  // or eight bytes at a time while they are all plain (long strings and
  // base64 are).
  static const char* skip_plain(const char* p, const char* to) noexcept {
#if defined(__SSE2__)
    // As signed bytes, anything below 0x20 and anything from 0x80 up is
    // less than 0x20: one comparison finds both.
    const __m128i space = _mm_set1_epi8(0x20);
    const __m128i amp = _mm_set1_epi8('&');
    const __m128i bracket = _mm_set1_epi8(']');
    while (to - p >= 16) {
      const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i stop =
          _mm_or_si128(_mm_cmplt_epi8(w, space),
                       _mm_or_si128(_mm_cmpeq_epi8(w, amp), _mm_cmpeq_epi8(w, bracket)));
      if (_mm_movemask_epi8(stop) != 0) break;
      p += 16;
    }
#endif
    constexpr std::uint64_t ones = 0x0101010101010101U;
    constexpr std::uint64_t highs = 0x8080808080808080U;
    // Whether a byte of x is zero (exact when no byte has its high bit set).
    const auto has_zero = [](std::uint64_t x) { return ((x - ones) & ~x & highs) != 0; };
    while (to - p >= 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, p, 8);
      if ((w & highs) != 0) break;                    // non-ASCII
      if ((((w - 0x20 * ones) & ~w & highs) != 0) ||  // a byte < 0x20
          has_zero(w ^ ('&' * ones)) || has_zero(w ^ (']' * ones)))
        break;
      p += 8;
    }
    while (p != to && plain(*p)) ++p;
    return p;
  }

  // Bytes of text that stand for themselves.
  static constexpr bool plain(char ch) noexcept {
    const auto c = static_cast<unsigned char>(ch);
    return c >= 0x20 ? c < 0x80 && c != '&' && c != ']' : c == '\t' || c == '\n';
  }

  // The length of the UTF-8 sequence at p (of a character XML allows), or 0.
  static std::size_t utf8_length(const char* p, const char* to) noexcept {
    const auto at = [p](std::size_t i) { return static_cast<unsigned char>(p[i]); };
    const auto tail = [&](std::size_t i) { return (at(i) & 0xC0) == 0x80; };
    const std::size_t room = static_cast<std::size_t>(to - p);
    const unsigned char b = at(0);
    if (b >= 0xC2 && b <= 0xDF) return room >= 2 && tail(1) ? 2 : 0;
    if (b >= 0xE0 && b <= 0xEF) {
      if (room < 3 || !tail(1) || !tail(2)) return 0;
      if (b == 0xE0 && at(1) < 0xA0) return 0;                   // overlong
      if (b == 0xED && at(1) > 0x9F) return 0;                   // a surrogate
      if (b == 0xEF && at(1) == 0xBF && at(2) > 0xBD) return 0;  // U+FFFE, U+FFFF
      return 3;
    }
    if (b >= 0xF0 && b <= 0xF4) {
      if (room < 4 || !tail(1) || !tail(2) || !tail(3)) return 0;
      if (b == 0xF0 && at(1) < 0x90) return 0;  // overlong
      if (b == 0xF4 && at(1) > 0x8F) return 0;  // past U+10FFFF
      return 4;
    }
    return 0;
  }

  // At '&': one of the five predefined entities or a character reference,
  // appended to `decoded`.
  bool scan_reference(const char*& p, const char* to) {
    const auto* semi =
        static_cast<const char*>(std::memchr(p, ';', std::min<std::size_t>(to - p, 12)));
    if (semi == nullptr) return false;
    const std::string_view ref(p + 1, static_cast<std::size_t>(semi - p - 1));
    p = semi + 1;
    if (ref == "lt") {
      decoded += '<';
    } else if (ref == "gt") {
      decoded += '>';
    } else if (ref == "amp") {
      decoded += '&';
    } else if (ref == "quot") {
      decoded += '"';
    } else if (ref == "apos") {
      decoded += '\'';
    } else {
      return scan_character_reference(ref);
    }
    return true;
  }

  // "#123" or "#x7B": a character XML allows, appended as UTF-8.
  bool scan_character_reference(std::string_view ref) {
    if (ref.size() < 2 || ref[0] != '#') return false;
    const bool hex = ref[1] == 'x';
    const std::string_view digits = ref.substr(hex ? 2 : 1);
    if (digits.empty() || digits.size() > 8) return false;
    std::uint32_t c = 0;
    for (char d : digits) {
      std::uint32_t n = 0;
      if (d >= '0' && d <= '9') {
        n = static_cast<std::uint32_t>(d - '0');
      } else if (hex && d >= 'a' && d <= 'f') {
        n = static_cast<std::uint32_t>(d - 'a' + 10);
      } else if (hex && d >= 'A' && d <= 'F') {
        n = static_cast<std::uint32_t>(d - 'A' + 10);
      } else {
        return false;
      }
      c = c * (hex ? 16 : 10) + n;
    }
    const bool allowed = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
                         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
    if (!allowed) return false;
    const auto byte = [](std::uint32_t b) { return static_cast<char>(b); };
    if (c < 0x80) {
      decoded += byte(c);
    } else if (c < 0x800) {
      decoded += byte(0xC0 | (c >> 6));
      decoded += byte(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      decoded += byte(0xE0 | (c >> 12));
      decoded += byte(0x80 | ((c >> 6) & 0x3F));
      decoded += byte(0x80 | (c & 0x3F));
    } else {
      decoded += byte(0xF0 | (c >> 18));
      decoded += byte(0x80 | ((c >> 12) & 0x3F));
      decoded += byte(0x80 | ((c >> 6) & 0x3F));
      decoded += byte(0x80 | (c & 0x3F));
    }
    return true;
  }
};

parser::parser(document_type type, limits lim) : impl_(std::make_unique<impl>(type, lim)) {}
parser::~parser() = default;
parser::parser(parser&&) noexcept = default;
parser& parser::operator=(parser&&) noexcept = default;

bool parser::feed(std::string_view chunk) {
  impl& m = *impl_;
  if (m.failed) return false;
  if (m.finished) {
    m.failed = true;
    m.error = {fault_code::parse_error, "data after the end of the document"};
    return false;
  }
  if (m.enc != impl::encoding::unknown) return m.hand_on(chunk);
  // The first bytes: held until they say the encoding.
  std::string_view first = chunk;
  if (!m.head.empty()) {
    m.head.append(chunk);
    first = m.head;
  }
  switch (m.sniff(first, false)) {
    case impl::sniffed::need_more:
      if (m.head.empty()) m.head.assign(chunk);
      return true;
    case impl::sniffed::refused:
      return false;
    case impl::sniffed::known:
      break;
  }
  if (m.head.empty()) return m.hand_on(chunk);
  const std::string held = std::move(m.head);
  m.head.clear();
  return m.hand_on(held);
}

bool parser::parse(std::string_view document) {
  impl& m = *impl_;
  if (!m.failed && !m.finished && !m.expat_used && m.elements == 0 && m.head.empty()) {
    bool accepted = false;
    try {
      accepted = m.scan(document);
    } catch (const std::bad_alloc&) {  // expat's run below says what it says
    }
    if (accepted) {
      m.finished = m.direct = true;
      return true;
    }
    m.reset();  // (expat is untouched: only the grammar's state)
  }
  if (!m.failed && !m.finished && m.enc == impl::encoding::unknown && m.head.empty()) {
    // The whole document is here: its encoding is known without holding
    // (copying) its first bytes.
    if (m.sniff(document, true) == impl::sniffed::refused) return false;
    return m.hand_on(document) && finish();
  }
  return feed(document) && finish();
}

bool parser::finish() {
  impl& m = *impl_;
  if (m.failed) return false;
  if (m.finished) return true;
  if (m.enc == impl::encoding::unknown) {  // a document too short to say
    if (m.sniff(m.head, true) == impl::sniffed::refused) return false;
    const std::string held = std::move(m.head);
    m.head.clear();
    if (!m.hand_on(held)) return false;
  }
  if (!m.check_end()) return false;
  if (!m.parse(nullptr, 0, true)) return false;
  m.finished = true;
  return true;
}

method_call& parser::call() {
  if (!impl_->finished || impl_->failed || impl_->type != document_type::call) {
    throw std::logic_error("xmlrpc::parser::call() without a successfully parsed methodCall");
  }
  return impl_->call;
}

outcome& parser::response() {
  if (!impl_->finished || impl_->failed || impl_->type != document_type::response) {
    throw std::logic_error(
        "xmlrpc::parser::response() without a successfully parsed methodResponse");
  }
  return impl_->response;
}

const parse_error& parser::error() const { return impl_->error; }

bool parser::read_directly() const noexcept { return impl_->direct; }

void parser::reset() { impl_->reset(); }

namespace {

// One parser per thread and document type, kept between calls: reusing the
// expat parser and the buffers is much cheaper than building new ones.
parser& thread_parser(document_type type, const limits& lim) {
  struct slot {
    std::unique_ptr<parser> p;
    limits lim;
  };
  thread_local slot slots[2];
  slot& s = slots[static_cast<std::size_t>(type)];
  if (!s.p || s.lim.max_depth != lim.max_depth || s.lim.max_elements != lim.max_elements ||
      s.lim.max_name_bytes != lim.max_name_bytes) {
    s.p = std::make_unique<parser>(type, lim);
    s.lim = lim;
  } else {
    s.p->reset();
  }
  return *s.p;
}

}  // namespace

std::variant<method_call, parse_error> parse_call(std::string_view document, const limits& lim) {
  parser& p = thread_parser(document_type::call, lim);
  if (!p.parse(document)) return p.error();
  return std::move(p.call());
}

std::variant<outcome, parse_error> parse_response(std::string_view document, const limits& lim) {
  parser& p = thread_parser(document_type::response, lim);
  if (!p.parse(document)) return p.error();
  return std::move(p.response());
}

}  // namespace rapidrpc::xmlrpc

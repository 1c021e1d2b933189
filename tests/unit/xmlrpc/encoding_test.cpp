// Documents in encodings other than UTF-8: every encoding Python's
// xmlrpc.server reads, under each usual spelling, read to the same UTF-8
// values; bytes that are no character of the declared encoding, and names
// nothing can read, are fault -32701 naming the encoding. Each document is
// read every way (whole, split at every byte, byte by byte, by parse()).
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace rapidrpc::xmlrpc {
namespace {

using test::parse_every_way;

constexpr auto call_doc = document_type::call;
constexpr auto response_doc = document_type::response;

std::string declaration(std::string_view encoding) {
  return "<?xml version=\"1.0\" encoding=\"" + std::string(encoding) + "\"?>\n";
}

// A call of "echo" with one string, `text` as bytes of the encoding.
std::string echo_call(std::string_view encoding, std::string_view text) {
  return declaration(encoding) + "<methodCall><methodName>echo</methodName><params><param><value>" +
         std::string(text) + "</value></param></params></methodCall>";
}

std::string echoed(std::string_view utf8) {
  return "method echo\nparams [\"" + std::string(utf8) + "\"]";
}

// UTF-8 text (ASCII markup and BMP characters, surrogate pairs for the
// rest) as UTF-16 in the given byte order.
std::string utf16(std::string_view utf8, bool big_endian) {
  std::string out;
  const auto unit = [&](std::uint32_t u) {
    const char hi = static_cast<char>(u >> 8);
    const char lo = static_cast<char>(u & 0xFF);
    out += big_endian ? hi : lo;
    out += big_endian ? lo : hi;
  };
  for (std::size_t i = 0; i < utf8.size();) {
    const auto b = static_cast<unsigned char>(utf8[i]);
    std::uint32_t c = b;
    std::size_t n = 1;
    if (b >= 0xF0) {
      c = b & 0x07U;
      n = 4;
    } else if (b >= 0xE0) {
      c = b & 0x0FU;
      n = 3;
    } else if (b >= 0xC0) {
      c = b & 0x1FU;
      n = 2;
    }
    for (std::size_t k = 1; k < n; ++k)
      c = (c << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3FU);
    i += n;
    if (c >= 0x10000) {
      unit(0xD800 + ((c - 0x10000) >> 10));
      unit(0xDC00 + ((c - 0x10000) & 0x3FF));
    } else {
      unit(c);
    }
  }
  return out;
}

std::string error(std::int32_t code, std::string_view message) {
  return "error " + std::to_string(code) + " " + std::string(message);
}
std::string encoding_fails(std::string_view m) {
  return error(fault_code::unsupported_encoding, m);
}

bool read_directly(document_type type, std::string_view doc) {
  parser p(type);
  return p.parse(doc) && p.read_directly();
}

struct spelled {
  std::vector<std::string> names;  // the same encoding, spelled as clients do
  std::string bytes;               // text in that encoding
  std::string utf8;                // the same text
};

std::vector<spelled> single_byte_encodings() {
  return {
      // PHP's xmlrpc extension declares "iso-8859-1"; Python's codecs
      // spell it latin-1, latin_1, iso8859_1, l1.
      {{"ISO-8859-1", "iso-8859-1", "latin1", "latin-1", "LATIN_1", "iso8859_1", "ISO_8859-1", "l1",
        "cp819"},
       "caf\xe9 \xa4\xbf\x80\xff",
       "caf\xc3\xa9 \xc2\xa4\xc2\xbf\xc2\x80\xc3\xbf"},
      {{"windows-1252", "WINDOWS-1252", "cp1252", "CP1252", "windows_1252"},
       "\x80\x82\x85\x9c\x9f\xe9",
       "\xe2\x82\xac\xe2\x80\x9a\xe2\x80\xa6\xc5\x93\xc5\xb8\xc3\xa9"},
      {{"iso-8859-15", "ISO-8859-15", "iso8859_15", "ISO8859-15", "latin-9", "latin9"},
       "\xa4\xa6\xbd",
       "\xe2\x82\xac\xc5\xa0\xc5\x93"},
      {{"koi8-r", "KOI8-R", "koi8_r"},
       "\xf0\xd2\xc9\xd7\xc5\xd4",
       "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82"},
      // US-ASCII carries the rest as character references (Python's
      // "xmlcharrefreplace").
      {{"US-ASCII", "us-ascii", "ascii", "ASCII", "us", "ANSI_X3.4-1968"},
       "caf&#233; &#x1F600;",
       "caf\xc3\xa9 \xf0\x9f\x98\x80"},
      {{"UTF-8", "utf-8", "utf8", "UTF8", "utf_8", "Utf-8"},
       "caf\xc3\xa9 \xf0\x9f\x98\x80",
       "caf\xc3\xa9 \xf0\x9f\x98\x80"},
  };
}

TEST(XmlrpcEncodings, ReadsEverySpellingOfTheSingleByteEncodingsAndUtf8) {
  for (const spelled& e : single_byte_encodings()) {
    for (const std::string& name : e.names) {
      SCOPED_TRACE(name);
      EXPECT_EQ(parse_every_way(call_doc, echo_call(name, e.bytes)), echoed(e.utf8));
    }
  }
}

TEST(XmlrpcEncodings, ResponsesAreReadTheSameWay) {
  for (const spelled& e : single_byte_encodings()) {
    const std::string& name = e.names.front();
    SCOPED_TRACE(name);
    const std::string doc = declaration(name) + "<methodResponse><params><param><value><string>" +
                            e.bytes + "</string></value></param></params></methodResponse>";
    EXPECT_EQ(parse_every_way(response_doc, doc), "result \"" + e.utf8 + "\"");
    const std::string fault_doc =
        declaration(name) +
        "<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>1</int>"
        "</value></member><member><name>faultString</name><value>" +
        e.bytes + "</value></member></struct></value></fault></methodResponse>";
    EXPECT_EQ(parse_every_way(response_doc, fault_doc), "fault 1 \"" + e.utf8 + "\"");
    const auto r = parse_response(doc);
    ASSERT_TRUE(std::holds_alternative<outcome>(r));
    EXPECT_EQ(std::get<value>(std::get<outcome>(r)).as<std::string>(), e.utf8);
  }
}

TEST(XmlrpcEncodings, NamesOfMembersAreDecodedToo) {
  const std::string doc =
      echo_call("iso-8859-1",
                "<struct><member><name>cl\xe9</name><value>d\xe9j\xe0</value></member></struct>");
  EXPECT_EQ(parse_every_way(call_doc, doc),
            "method echo\nparams [{\"cl\xc3\xa9\": \"d\xc3\xa9j\xc3\xa0\"}]");
}

// The method name rule (A-Z a-z 0-9 _ . : /) is the same in every
// encoding: a Latin-1 name is refused as its UTF-8 spelling is, not as
// an encoding error.
TEST(XmlrpcEncodings, ALatin1MethodNameIsJudgedAsItsUtf8Spelling) {
  const std::string latin1 =
      declaration("iso-8859-1") + "<methodCall><methodName>caf\xe9</methodName></methodCall>";
  const std::string utf8 =
      declaration("UTF-8") + "<methodCall><methodName>caf\xc3\xa9</methodName></methodCall>";
  EXPECT_EQ(parse_every_way(call_doc, latin1), parse_every_way(call_doc, utf8));
  EXPECT_EQ(parse_every_way(call_doc, latin1),
            error(fault_code::invalid_request,
                  "method name may only hold the characters A-Z a-z 0-9 _ . : /"));
}

TEST(XmlrpcEncodings, ReadsUtf16InBothByteOrdersWithAndWithoutAMark) {
  const std::string text = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80";
  struct form {
    bool big_endian;
    bool mark;
    const char* declared;  // nullptr: no XML declaration
  };
  const std::vector<form> forms = {
      {false, true, "utf-16"},  // Python's ServerProxy(encoding="utf-16")
      {true, true, "UTF-16"},     {false, false, "utf-16-le"}, {true, false, "utf-16-be"},
      {false, false, "UTF-16LE"}, {true, false, "UTF-16BE"},   {false, true, "UTF16"},
      {true, false, "utf_16"},    {false, true, nullptr},      {true, true, nullptr},
      {false, false, nullptr},    {true, false, nullptr},
  };
  for (const form& f : forms) {
    SCOPED_TRACE(std::string(f.big_endian ? "BE" : "LE") + (f.mark ? " marked " : " ") +
                 (f.declared != nullptr ? f.declared : "(no declaration)"));
    const std::string body = "<methodCall><methodName>echo</methodName><params><param><value>" +
                             text + "</value></param></params></methodCall>";
    const std::string utf8 = (f.declared != nullptr ? declaration(f.declared) : "") + body;
    const std::string doc =
        (f.mark ? utf16("\xef\xbb\xbf", f.big_endian) : "") + utf16(utf8, f.big_endian);
    EXPECT_EQ(parse_every_way(call_doc, doc), echoed(text));
    EXPECT_FALSE(read_directly(call_doc, doc));
  }
  const std::string response =
      utf16("\xef\xbb\xbf" + declaration("utf-16") + "<methodResponse><params><param><value>" +
                text + "</value></param></params></methodResponse>",
            false);
  EXPECT_EQ(parse_every_way(response_doc, response), "result \"" + text + "\"");
}

TEST(XmlrpcEncodings, OtherEncodingsAreLeftToExpatUtf8IsReadDirectly) {
  for (const spelled& e : single_byte_encodings()) {
    for (const std::string& name : e.names) {
      SCOPED_TRACE(name);
      const bool utf8_as_the_scanner_knows_it = name.size() == 5 && (name[3] == '-');
      EXPECT_EQ(read_directly(call_doc, echo_call(name, e.bytes)), utf8_as_the_scanner_knows_it);
    }
  }
}

struct refused {
  const char* what;
  std::string doc;
  std::string expected;
};

std::string offset_of(const std::string& doc, std::string_view bytes) {
  return std::to_string(doc.find(bytes));
}

std::vector<refused> refused_documents() {
  std::vector<refused> r;
  const auto add = [&r](const char* what, const std::string& doc, const std::string& message) {
    r.push_back({what, doc, encoding_fails(message)});
  };
  add("a name nothing reads", echo_call("x-nonsense", "a"), "unsupported encoding \"x-nonsense\"");
  add("an iconv option in the name", echo_call("utf-8//TRANSLIT", "a"),
      "unsupported encoding \"utf-8//TRANSLIT\"");
  add("a name too long to show", echo_call(std::string(40, 'x'), "a"),
      "unsupported encoding (its name is not shown)");
  add("a multibyte set", echo_call("Shift_JIS", "a"),
      "encoding \"Shift_JIS\" is not read (of the multibyte character sets, only UTF-8 and UTF-16 "
      "are read)");
  add("UTF-32", echo_call("utf-32", "a"),
      "encoding \"utf-32\" is not read (of the multibyte character sets, only UTF-8 and UTF-16 are "
      "read)");
  add("EBCDIC", echo_call("cp037", "a"),
      "encoding \"cp037\" is not read (its ASCII bytes are not ASCII characters)");

  std::string doc = echo_call("US-ASCII", "caf\xe9");
  add("a byte over 127 in US-ASCII", doc,
      "the document is not valid \"US-ASCII\" (byte \\xe9 at offset " + offset_of(doc, "\xe9") +
          ")");
  doc = echo_call("ascii", "ok</value></param><param><value>\x80");
  add("a byte over 127 in ascii", doc,
      "the document is not valid \"ascii\" (byte \\x80 at offset " + offset_of(doc, "\x80") + ")");
  doc = echo_call("windows-1252", "a\x81z");
  add("0x81 in windows-1252", doc,
      "the document is not valid \"windows-1252\" (byte \\x81 at offset " + offset_of(doc, "\x81") +
          ")");
  doc = echo_call("cp1252", "\x9d");
  add("0x9D in cp1252", doc,
      "the document is not valid \"cp1252\" (byte \\x9d at offset " + offset_of(doc, "\x9d") + ")");

  add("UTF-16 declared, ASCII bytes", echo_call("UTF-16", "a"),
      "the document declares encoding \"UTF-16\" but is not UTF-16 (it starts with neither a byte "
      "order mark nor a NUL byte)");
  add("a UTF-8 mark and another encoding", "\xef\xbb\xbf" + echo_call("iso-8859-1", "a"),
      "the document has a UTF-8 byte order mark but declares encoding \"iso-8859-1\"");
  add("UTF-16 declaring Latin-1", utf16(echo_call("iso-8859-1", "a"), false),
      "the document is UTF-16 but declares encoding \"iso-8859-1\"");

  // Broken UTF-16: a low surrogate alone, a high one followed by another
  // character, a high one at the end, an odd number of bytes.
  const std::string head = utf16(echo_call("utf-16", "a"), false);
  const std::string before = head.substr(0, head.find(utf16("a", false)));
  const std::string after = head.substr(before.size() + 2);
  add("UTF-16 lone low surrogate", before + std::string("\x00\xdc", 2) + after,
      "the document is not valid UTF-16 (unpaired surrogate at offset " +
          std::to_string(before.size()) + ")");
  add("UTF-16 high surrogate without its low", before + std::string("\x00\xd8", 2) + after,
      "the document is not valid UTF-16 (unpaired surrogate at offset " +
          std::to_string(before.size()) + ")");
  add("UTF-16 high surrogate at the end", head + std::string("\x00\xd8", 2),
      "the document is not valid UTF-16 (unpaired surrogate at offset " +
          std::to_string(head.size()) + ")");
  add("UTF-16 odd number of bytes", head + "\n",
      "the document is not valid UTF-16 (an odd number of bytes)");
  add("UTF-16BE lone low surrogate", utf16("<methodCall>", true) + std::string("\xdc\x00", 2),
      "the document is not valid UTF-16 (unpaired surrogate at offset 24)");
  return r;
}

TEST(XmlrpcEncodings, RefusesWhatTheDeclaredEncodingCannotReadNamingIt) {
  for (const refused& b : refused_documents()) {
    SCOPED_TRACE(b.what);
    EXPECT_EQ(parse_every_way(call_doc, b.doc), b.expected);
  }
}

TEST(XmlrpcEncodings, AnXmlErrorBeforeABadByteStands) {
  // expat reads the bytes before the first that is no character of the
  // encoding, and its error there is the document's.
  const std::string doc = echo_call("US-ASCII", "<bad></value>\xe9");
  EXPECT_EQ(parse_every_way(call_doc, doc),
            error(fault_code::invalid_request, "unknown element <bad>"));
  const std::string broken = declaration("windows-1252") + "<methodCall><</methodCall>\x81";
  EXPECT_EQ(parse_every_way(call_doc, broken),
            error(fault_code::parse_error, "XML error at line 2: not well-formed (invalid token)"));
}

TEST(XmlrpcEncodings, AReusedParserForgetsTheLastDocumentsEncoding) {
  const std::vector<std::string> docs = {
      echo_call("iso-8859-1", "\xe9"),
      utf16("\xef\xbb\xbf" + echo_call("utf-16", "\xc3\xa9"), true),
      echo_call("UTF-8", "\xc3\xa9"),
      echo_call("windows-1252", "\x81"),
      echo_call("koi8-r", "\xf0"),
      echo_call("utf8", "\xc3\xa9"),
      utf16(echo_call("utf-16le", "\xc3\xa9"), false),
      echo_call("x-nonsense", "a"),
      "<methodCall><methodName>m</methodName></methodCall>",
      "\xe9",
  };
  parser p(call_doc);
  for (int round = 0; round < 2; ++round) {
    for (const std::string& doc : docs) {
      SCOPED_TRACE(doc);
      p.reset();
      const bool ok = p.parse(doc);
      EXPECT_EQ(test::outcome(call_doc, p, ok), test::parse_whole(call_doc, doc));
      p.reset();
      const bool fed = p.feed(doc) && p.finish();
      EXPECT_EQ(test::outcome(call_doc, p, fed), test::parse_whole(call_doc, doc));
    }
  }
}

TEST(XmlrpcEncodings, ManyThreadsMayAskForTheSameCharsetAtOnce) {
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (std::size_t t = 0; t < wrong.size(); ++t) {
    threads.emplace_back([t, &wrong] {
      const char* const names[] = {"iso-8859-2", "ISO-8859-2", "latin2", "cp1251"};
      for (int i = 0; i < 50; ++i) {
        const std::string name = names[(t + static_cast<std::size_t>(i)) % 4];
        const auto r = parse_call(echo_call(name, "a"));
        if (!std::holds_alternative<method_call>(r)) ++wrong[t];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int w : wrong) EXPECT_EQ(w, 0);
}

}  // namespace
}  // namespace rapidrpc::xmlrpc

// The parser: what it rejects and with which fault, its limits, incremental
// feeding and reuse. Accepted documents are mostly in data_files_test.cpp.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace rapidrpc::xmlrpc {
namespace {

using test::parse_every_way;
using test::parse_whole;

constexpr auto call_doc = document_type::call;
constexpr auto response_doc = document_type::response;

// A methodCall "m" whose only <param> holds `param_content`.
std::string call_with(std::string_view param_content) {
  return "<?xml version=\"1.0\"?><methodCall><methodName>m</methodName><params><param>" +
         std::string(param_content) + "</param></params></methodCall>";
}

// A methodCall "m" with one parameter <value><T>text</T></value>.
std::string typed(std::string_view type, std::string_view text) {
  return call_with("<value><" + std::string(type) + ">" + std::string(text) + "</" +
                   std::string(type) + "></value>");
}

std::string response_with(std::string_view body) {
  return "<?xml version=\"1.0\"?><methodResponse>" + std::string(body) + "</methodResponse>";
}

std::string fault_with(std::string_view members) {
  return response_with("<fault><value><struct>" + std::string(members) +
                       "</struct></value></fault>");
}

std::string member(std::string_view name, std::string_view value) {
  return "<member><name>" + std::string(name) + "</name><value>" + std::string(value) +
         "</value></member>";
}

struct bad_case {
  const char* what;
  document_type type;
  std::string doc;
  std::string expected;  // "error CODE message"
};

std::string error(std::int32_t code, std::string_view message) {
  return "error " + std::to_string(code) + " " + std::string(message);
}
std::string parse_fails(std::string_view m) { return error(fault_code::parse_error, m); }
std::string encoding_fails(std::string_view m) {
  return error(fault_code::unsupported_encoding, m);
}
std::string invalid(std::string_view m) { return error(fault_code::invalid_request, m); }

std::vector<bad_case> bad_cases() {
  const std::string name_chars = "method name may only hold the characters A-Z a-z 0-9 _ . : /";
  std::vector<bad_case> c = {
      // Not well-formed XML: parse_error.
      {"empty document", call_doc, "", parse_fails("XML error at line 1: no element found")},
      {"only a declaration", call_doc, "<?xml version=\"1.0\"?>\n",
       parse_fails("XML error at line 2: no element found")},
      {"unclosed root", call_doc, "<methodCall><methodName>m</methodName>",
       parse_fails("XML error at line 1: no element found")},
      {"mismatched tag", call_doc, "<methodCall><methodName>m</methodCall>",
       parse_fails("XML error at line 1: mismatched tag")},
      {"invalid UTF-8 byte", call_doc, call_with("<value>\xff</value>"),
       parse_fails("XML error at line 1: not well-formed (invalid token)")},
      {"overlong UTF-8", call_doc, call_with("<value>\xc0\xaf</value>"),
       parse_fails("XML error at line 1: not well-formed (invalid token)")},
      {"UTF-8 encoded surrogate", call_doc, call_with("<value>\xed\xa0\x80</value>"),
       parse_fails("XML error at line 1: not well-formed (invalid token)")},
      {"truncated UTF-8", call_doc, call_with("<value>\xe2\x82</value>"),
       parse_fails("XML error at line 1: not well-formed (invalid token)")},
      {"raw control character", call_doc, call_with("<value>a\x01</value>"),
       parse_fails("XML error at line 1: not well-formed (invalid token)")},
      {"NUL byte", call_doc, call_with(std::string("<value>a\0b</value>", 18)),
       parse_fails("XML error at line 1: not well-formed (invalid token)")},
      {"reference to NUL", call_doc, call_with("<value>&#0;</value>"),
       parse_fails("XML error at line 1: reference to invalid character number")},
      {"reference to a control character", call_doc, call_with("<value>&#x1;</value>"),
       parse_fails("XML error at line 1: reference to invalid character number")},
      {"reference to U+FFFE", call_doc, call_with("<value>&#xFFFE;</value>"),
       parse_fails("XML error at line 1: reference to invalid character number")},
      {"reference to a surrogate", call_doc, call_with("<value>&#xD800;</value>"),
       parse_fails("XML error at line 1: reference to invalid character number")},
      {"undefined entity", call_doc, call_with("<value>&nbsp;</value>"),
       parse_fails("XML error at line 1: undefined entity")},
      {"DOCTYPE", call_doc,
       "<?xml version=\"1.0\"?>\n<!DOCTYPE "
       "methodCall>\n<methodCall><methodName>m</methodName></methodCall>",
       parse_fails("a DOCTYPE is not allowed")},
      {"DOCTYPE with entities (billion laughs)", call_doc,
       "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 "
       "\"&lol;&lol;&lol;&lol;\">]><methodCall><methodName>&lol2;</methodName></methodCall>",
       parse_fails("a DOCTYPE is not allowed")},
      {"external entity", call_doc,
       "<!DOCTYPE m [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><methodCall><methodName>&x;"
       "</methodName></methodCall>",
       parse_fails("a DOCTYPE is not allowed")},
      {"second root element", call_doc,
       "<methodCall><methodName>m</methodName></methodCall><methodCall/>",
       parse_fails("XML error at line 1: junk after document element")},
      {"text after the root", call_doc, "<methodCall><methodName>m</methodName></methodCall>x",
       parse_fails("XML error at line 1: junk after document element")},
      {"text before the root", call_doc, "x<methodCall/>",
       parse_fails("XML error at line 1: not well-formed (invalid token)")},
      {"error line is counted", call_doc, "<methodCall>\n<methodName>m</methodName>\n<params>&bad;",
       parse_fails("XML error at line 3: undefined entity")},

      // Encodings (more in encoding_test.cpp): UTF-16 is read, by its byte
      // order mark or the NUL of its first character; a declaration of UTF-16
      // in a document that is not is unsupported_encoding.
      {"declared UTF-16", call_doc,
       "<?xml version=\"1.0\" "
       "encoding=\"UTF-16\"?><methodCall><methodName>m</methodName></methodCall>",
       encoding_fails("the document declares encoding \"UTF-16\" but is not UTF-16 (it starts "
                      "with neither a byte order mark nor a NUL byte)")},
      {"UTF-16LE with byte order mark", call_doc, std::string("\xff\xfe<\0m\0/\0>\0", 10),
       invalid("unknown element <m>")},
      {"UTF-16BE with byte order mark", call_doc, std::string("\xfe\xff\0<\0m\0/\0>", 10),
       invalid("unknown element <m>")},
      {"UTF-16LE without byte order mark", call_doc, std::string("<\0m\0/\0>\0", 8),
       invalid("unknown element <m>")},
      {"UTF-16BE without byte order mark", call_doc, std::string("\0<\0m\0/\0>", 8),
       invalid("unknown element <m>")},

      // Well-formed, but not a methodCall: invalid_request.
      {"response to a call parser", call_doc, response_with("<params/>"),
       invalid("the root element must be <methodCall>")},
      {"call to a response parser", response_doc, call_with("<value/>"),
       invalid("the root element must be <methodResponse>")},
      {"unknown root", call_doc, "<html/>", invalid("unknown element <html>")},
      {"unknown element", call_doc, call_with("<foo/>"), invalid("unknown element <foo>")},
      {"unknown type", call_doc, call_with("<value><float>1</float></value>"),
       invalid("unknown element <float>")},
      {"other extension prefix", call_doc, call_with("<value><x:nil/></value>"),
       invalid("unknown element <x:nil>")},
      {"long unknown names are not echoed", call_doc, call_with("<" + std::string(100, 'a') + "/>"),
       invalid("unknown element")},
      {"attribute", call_doc, call_with("<value type=\"int\">1</value>"),
       invalid("attributes are not allowed")},
      {"no methodName", call_doc, "<methodCall><params/></methodCall>",
       invalid("<methodName> must come first in <methodCall>")},
      {"empty methodCall", call_doc, "<methodCall/>", invalid("<methodCall> has no <methodName>")},
      {"two methodNames", call_doc,
       "<methodCall><methodName>a</methodName><methodName>b</methodName></methodCall>",
       invalid("unexpected <methodName> in <methodCall>")},
      {"two params", call_doc,
       "<methodCall><methodName>a</methodName><params/><params/></methodCall>",
       invalid("unexpected <params> in <methodCall>")},
      {"empty method name", call_doc, "<methodCall><methodName></methodName></methodCall>",
       invalid("method name is empty")},
      {"space in method name", call_doc, "<methodCall><methodName> m</methodName></methodCall>",
       invalid(name_chars)},
      {"dash in method name", call_doc, "<methodCall><methodName>get-x</methodName></methodCall>",
       invalid(name_chars)},
      {"control character in method name", call_doc,
       "<methodCall><methodName>a&#9;b</methodName></methodCall>", invalid(name_chars)},
      {"non-ASCII method name", call_doc,
       "<methodCall><methodName>caf\xc3\xa9</methodName></methodCall>", invalid(name_chars)},
      {"element in method name", call_doc,
       "<methodCall><methodName>a<value/></methodName></methodCall>",
       invalid("<methodName> must not contain elements")},
      {"text in methodCall", call_doc, "<methodCall>x<methodName>m</methodName></methodCall>",
       invalid("text is not allowed in <methodCall>")},
      {"text in params", call_doc,
       "<methodCall><methodName>m</methodName><params>x</params></methodCall>",
       invalid("text is not allowed in <params>")},
      {"value directly in params", call_doc,
       "<methodCall><methodName>m</methodName><params><value/></params></methodCall>",
       invalid("unexpected <value> in <params>")},
      {"param without value", call_doc, call_with(""),
       invalid("<param> must hold exactly one <value>")},
      {"param with two values", call_doc, call_with("<value/><value/>"),
       invalid("<param> must hold exactly one <value>")},
      {"text in param", call_doc, call_with("x<value/>"),
       invalid("text is not allowed in <param>")},
      {"two types in a value", call_doc, call_with("<value><int>1</int><int>2</int></value>"),
       invalid("<value> must hold only one element")},
      {"text before a type", call_doc, call_with("<value>x<int>1</int></value>"),
       invalid("<value> must not mix text and an element")},
      {"text after a type", call_doc, call_with("<value><int>1</int>x</value>"),
       invalid("text is not allowed in <value>")},
      {"value in value", call_doc, call_with("<value><value/></value>"),
       invalid("unexpected <value> in <value>")},
      {"element in a string", call_doc, typed("string", "<int>1</int>"),
       invalid("<string> must not contain elements")},
      {"text in nil", call_doc, call_with("<value><nil>x</nil></value>"),
       invalid("text is not allowed in <nil>")},
      {"element in nil", call_doc, call_with("<value><nil><int>1</int></nil></value>"),
       invalid("<nil> must not contain elements")},
      {"array without data", call_doc, call_with("<value><array></array></value>"),
       invalid("<array> must hold exactly one <data>")},
      {"array with two data", call_doc, call_with("<value><array><data/><data/></array></value>"),
       invalid("<array> must hold exactly one <data>")},
      {"text in array", call_doc, call_with("<value><array>x<data/></array></value>"),
       invalid("text is not allowed in <array>")},
      {"text in data", call_doc, call_with("<value><array><data>x</data></array></value>"),
       invalid("text is not allowed in <data>")},
      {"param in data", call_doc, call_with("<value><array><data><param/></data></array></value>"),
       invalid("unexpected <param> in <data>")},
      {"text in struct", call_doc, call_with("<value><struct>x</struct></value>"),
       invalid("text is not allowed in <struct>")},
      {"value in struct", call_doc, call_with("<value><struct><value/></struct></value>"),
       invalid("unexpected <value> in <struct>")},
      {"member without name", call_doc,
       call_with("<value><struct><member><value/></member></struct></value>"),
       invalid("<member> must hold <name> then <value>")},
      {"member without value", call_doc,
       call_with("<value><struct><member><name>a</name></member></struct></value>"),
       invalid("<member> must hold <name> then <value>")},
      {"member with value first", call_doc,
       call_with("<value><struct><member><value/><name>a</name></member></struct></value>"),
       invalid("<member> must hold <name> then <value>")},
      {"member with two names", call_doc,
       call_with(
           "<value><struct><member><name>a</name><name>b</name><value/></member></struct></value>"),
       invalid("<member> must hold <name> then <value>")},
      {"member with two values", call_doc,
       call_with("<value><struct><member><name>a</name><value/><value/></member></struct></value>"),
       invalid("<member> must hold <name> then <value>")},
      {"text in member", call_doc,
       call_with("<value><struct><member>x<name>a</name><value/></member></struct></value>"),
       invalid("text is not allowed in <member>")},
      {"element in a member name", call_doc,
       call_with("<value><struct><member><name><string/></name><value/></member></struct></value>"),
       invalid("<name> must not contain elements")},
      {"duplicate member", call_doc,
       call_with("<value><struct>" + member("a", "1") + member("b", "2") + member("a", "3") +
                 "</struct></value>"),
       invalid("duplicate member \"a\" in <struct>")},
      {"duplicate member with a long name", call_doc,
       call_with("<value><struct>" + member(std::string(40, 'n'), "1") +
                 member(std::string(40, 'n'), "1") + "</struct></value>"),
       invalid("duplicate member name in <struct>")},
      {"duplicate empty member names", call_doc,
       call_with("<value><struct>" + member("", "1") + member("", "2") + "</struct></value>"),
       invalid("duplicate member name in <struct>")},

      // Responses.
      {"empty methodResponse", response_doc, response_with(""),
       invalid("<methodResponse> must hold one <params> or one <fault>")},
      {"response without param", response_doc, response_with("<params></params>"),
       invalid("<methodResponse> must hold exactly one <param>")},
      {"response with two params", response_doc,
       response_with("<params><param><value/></param><param><value/></param></params>"),
       invalid("<methodResponse> must hold exactly one <param>")},
      {"params and fault", response_doc,
       response_with("<params><param><value/></param></params><fault><value/></fault>"),
       invalid("<methodResponse> must hold one <params> or one <fault>")},
      {"methodName in a response", response_doc, response_with("<methodName>m</methodName>"),
       invalid("unexpected <methodName> in <methodResponse>")},
      {"fault without value", response_doc, response_with("<fault></fault>"),
       invalid("<fault> must hold exactly one <value>")},
      {"fault holding a string", response_doc, response_with("<fault><value>oops</value></fault>"),
       invalid("<fault> must hold a struct of faultCode (int) and faultString (string)")},
      {"fault without faultString", response_doc, fault_with(member("faultCode", "<int>1</int>")),
       invalid("<fault> must hold a struct of faultCode (int) and faultString (string)")},
      {"fault with an extra member", response_doc,
       fault_with(member("faultCode", "<int>1</int>") + member("faultString", "x") +
                  member("detail", "y")),
       invalid("<fault> must hold a struct of faultCode (int) and faultString (string)")},
      {"fault with a misnamed member", response_doc,
       fault_with(member("faultCode", "<int>1</int>") + member("faultstring", "x")),
       invalid("<fault> must hold a struct of faultCode (int) and faultString (string)")},
      {"fault code as a string", response_doc,
       fault_with(member("faultCode", "1") + member("faultString", "x")),
       invalid("<fault> must hold a struct of faultCode (int) and faultString (string)")},
      {"fault code as an i8", response_doc,
       fault_with(member("faultCode", "<i8>1</i8>") + member("faultString", "x")),
       invalid("<fault> must hold a struct of faultCode (int) and faultString (string)")},
      {"fault string as an int", response_doc,
       fault_with(member("faultCode", "<int>1</int>") + member("faultString", "<int>2</int>")),
       invalid("<fault> must hold a struct of faultCode (int) and faultString (string)")},
      {"bad literal inside a fault", response_doc,
       fault_with(member("faultCode", "<int>x</int>") + member("faultString", "x")),
       invalid("<int> value is not an integer")},
  };
  // Literals, each inside its element of a methodCall.
  struct literal {
    const char* type;
    const char* text;
    const char* message;
  };
  const char* const bad_date = "<dateTime.iso8601> value is not a valid YYYYMMDDTHH:MM:SS date";
  const char* const bad_double = "<double> value is not a finite decimal number";
  const char* const bad_base64 = "<base64> value is not valid base64";
  const char* const bad_boolean = "<boolean> value must be 0 or 1";
  const literal literals[] = {
      {"int", "", "<int> value is not an integer"},
      {"int", " 5", "<int> value is not an integer"},
      {"int", "5 ", "<int> value is not an integer"},
      {"int", "\n5\n", "<int> value is not an integer"},
      {"int", "0x10", "<int> value is not an integer"},
      {"int", "1.0", "<int> value is not an integer"},
      {"int", "1e3", "<int> value is not an integer"},
      {"int", "+", "<int> value is not an integer"},
      {"int", "-", "<int> value is not an integer"},
      {"int", "+-5", "<int> value is not an integer"},
      {"int", "--5", "<int> value is not an integer"},
      {"int", "5a", "<int> value is not an integer"},
      {"int", "1 000", "<int> value is not an integer"},
      {"int", "\xd9\xa1", "<int> value is not an integer"},  // ARABIC-INDIC DIGIT ONE
      {"int", "2147483648", "<int> value out of range"},
      {"int", "-2147483649", "<int> value out of range"},
      {"int", "99999999999999999999999", "<int> value out of range"},
      {"i4", "2147483648", "<i4> value out of range"},
      {"i4", "x", "<i4> value is not an integer"},
      {"i8", "9223372036854775808", "<i8> value out of range"},
      {"i8", "-9223372036854775809", "<i8> value out of range"},
      {"i8", "", "<i8> value is not an integer"},
      {"ex:i8", "1.5", "<ex:i8> value is not an integer"},
      {"boolean", "", bad_boolean},
      {"boolean", "true", bad_boolean},
      {"boolean", "2", bad_boolean},
      {"boolean", " 1", bad_boolean},
      {"boolean", "01", bad_boolean},
      {"boolean", "-0", bad_boolean},
      {"double", "", bad_double},
      {"double", "inf", bad_double},
      {"double", "-inf", bad_double},
      {"double", "nan", bad_double},
      {"double", "Infinity", bad_double},
      {"double", ".", bad_double},
      {"double", "-.", bad_double},
      {"double", "1e", bad_double},
      {"double", "1e+", bad_double},
      {"double", "e5", bad_double},
      {"double", " 1.5", bad_double},
      {"double", "1.5 ", bad_double},
      {"double", "1,5", bad_double},
      {"double", "1.5.2", bad_double},
      {"double", "0x1p3", bad_double},
      {"double", "--1", bad_double},
      {"double", "1e400", "<double> value out of range"},
      {"double", "-1e400", "<double> value out of range"},
      {"double", "1e-400", "<double> value out of range"},
      {"dateTime.iso8601", "", bad_date},
      {"dateTime.iso8601", "20240230T00:00:00", bad_date},
      {"dateTime.iso8601", "20230229T00:00:00", bad_date},
      {"dateTime.iso8601", "19000229T00:00:00", bad_date},
      {"dateTime.iso8601", "20240431T00:00:00", bad_date},
      {"dateTime.iso8601", "20241301T00:00:00", bad_date},
      {"dateTime.iso8601", "20240001T00:00:00", bad_date},
      {"dateTime.iso8601", "20240100T00:00:00", bad_date},
      {"dateTime.iso8601", "20240101T24:00:00", bad_date},
      {"dateTime.iso8601", "20240101T00:60:00", bad_date},
      {"dateTime.iso8601", "20240101T00:00:61", bad_date},
      {"dateTime.iso8601", "20240101T00:00:00Z", bad_date},
      {"dateTime.iso8601", "20240101T00:00:00+01:00", bad_date},
      {"dateTime.iso8601", "20240101T00:00:00.5Z", bad_date},
      {"dateTime.iso8601", "20240101T00:00:00.1234567", bad_date},
      {"dateTime.iso8601", "20240101T00:00:00.", bad_date},
      {"dateTime.iso8601", "2024-01-01 00:00:00", bad_date},
      {"dateTime.iso8601", "20240230T000000", bad_date},    // basic form, no such day
      {"dateTime.iso8601", "20240101T240000", bad_date},    // basic form, hour 24
      {"dateTime.iso8601", "20240101T00000Z", bad_date},    // basic form, a zone
      {"dateTime.iso8601", "2024-01-01T000000", bad_date},  // separators of two forms
      {"dateTime.iso8601", "20240101T00:0000", bad_date},
      {"dateTime.iso8601", "20240101T0000:00", bad_date},
      {"dateTime.iso8601", "2024-01-01T00:00", bad_date},
      {"dateTime.iso8601", "2024-01-0100:00:00", bad_date},
      {"dateTime.iso8601", "2024-01-01t00:00:00", bad_date},
      {"dateTime.iso8601", "2024-0101T00:00:00", bad_date},
      {"dateTime.iso8601", " 20240101T00:00:00", bad_date},
      {"dateTime.iso8601", "2024010AT00:00:00", bad_date},
      {"base64", "aGVsbG8", bad_base64},    // missing padding
      {"base64", "aGVsbG8==", bad_base64},  // too much padding
      {"base64", "aGVsbA===", bad_base64},
      {"base64", "=aGV", bad_base64},
      {"base64", "a===", bad_base64},
      {"base64", "aGVs=bG8=", bad_base64},  // data after padding
      {"base64", "aGVsbG8=aGVs", bad_base64},
      {"base64", "aGVs*G8=", bad_base64},
      {"base64", "aGV-bG8_", bad_base64},  // URL-safe alphabet
      {"base64", "aGVsbG9=", bad_base64},  // non-zero unused bits
      {"base64", "aB==", bad_base64},
      {"base64", "a", bad_base64},
  };
  for (const literal& l : literals) {
    c.push_back({l.type, call_doc, typed(l.type, l.text), invalid(l.message)});
  }
  return c;
}

TEST(XmlrpcParser, RejectsEveryMalformedFormWithTheRightFault) {
  for (const bad_case& b : bad_cases()) {
    SCOPED_TRACE(std::string(b.what) + ": " + b.doc);
    EXPECT_EQ(parse_every_way(b.type, b.doc), b.expected);
  }
}

TEST(XmlrpcParser, ErrorsDoNotEchoTheMethodName) {
  const std::string secret = "drop table;<script>";
  const std::string doc = "<methodCall><methodName>" + std::string("drop table;&lt;script&gt;") +
                          "</methodName></methodCall>";
  const auto r = parse_call(doc);
  ASSERT_TRUE(std::holds_alternative<parse_error>(r));
  EXPECT_EQ(std::get<parse_error>(r).code, fault_code::invalid_request);
  EXPECT_EQ(std::get<parse_error>(r).message.find("drop"), std::string::npos);
}

// --- limits -----------------------------------------------------------------

// n arrays (or structs, or alternating) nested in the one parameter.
std::string nested(std::size_t n, char shape) {
  std::string open, close;
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_array = shape == 'a' || (shape == 'm' && i % 2 == 0);
    if (is_array) {
      open += "<value><array><data>";
      close.insert(0, "</data></array></value>");
    } else {
      open += "<value><struct><member><name>k</name>";
      close.insert(0, "</member></struct></value>");
    }
  }
  return call_with(open + "<value><int>1</int></value>" + close);
}

TEST(XmlrpcLimits, NestingUpToMaxDepthIsAcceptedOneMoreIsNot) {
  for (char shape : {'a', 's', 'm'}) {
    SCOPED_TRACE(shape);
    EXPECT_TRUE(parse_whole(call_doc, nested(64, shape)).starts_with("method m"));
    EXPECT_EQ(parse_whole(call_doc, nested(65, shape)), invalid("nesting deeper than 64"));
    EXPECT_EQ(parse_every_way(call_doc, nested(65, shape)), invalid("nesting deeper than 64"));
  }
}

TEST(XmlrpcLimits, NestingLimitIsConfigurable) {
  limits lim;
  lim.max_depth = 2;
  EXPECT_TRUE(parse_whole(call_doc, nested(2, 'm'), lim).starts_with("method m"));
  EXPECT_EQ(parse_whole(call_doc, nested(3, 'm'), lim), invalid("nesting deeper than 2"));
  lim.max_depth = 0;
  EXPECT_TRUE(parse_whole(call_doc, typed("int", "1"), lim).starts_with("method m"));
  EXPECT_EQ(parse_whole(call_doc, nested(1, 'a'), lim), invalid("nesting deeper than 0"));
}

TEST(XmlrpcLimits, DepthIsCountedPerPathNotInTotal) {
  // 64 sibling arrays at depth 1: the depth goes back down as they close.
  std::string values;
  for (int i = 0; i < 100; ++i) values += "<value><array><data></data></array></value>";
  EXPECT_TRUE(
      parse_whole(call_doc, call_with("<value><array><data>" + values + "</data></array></value>"))
          .starts_with("method m"));
}

TEST(XmlrpcLimits, NestingLimitAppliesToResponsesAndFaults) {
  std::string deep = "<int>1</int>";
  for (int i = 0; i < 65; ++i) {
    deep.insert(0, "<array><data><value>");
    deep += "</value></data></array>";
  }
  EXPECT_EQ(parse_whole(response_doc, response_with("<params><param><value>" + deep +
                                                    "</value></param></params>")),
            invalid("nesting deeper than 64"));
  EXPECT_EQ(parse_whole(response_doc, fault_with(member("faultCode", deep))),
            invalid("nesting deeper than 64"));
}

// A call with n <int> parameters has 3 + 3n elements.
std::string call_with_ints(std::size_t n) {
  std::string doc = "<methodCall><methodName>m</methodName><params>";
  for (std::size_t i = 0; i < n; ++i) doc += "<param><value><int>1</int></value></param>";
  return doc + "</params></methodCall>";
}

TEST(XmlrpcLimits, ElementCountUpToTheLimitIsAcceptedOneMoreIsNot) {
  limits lim;
  lim.max_elements = 3 + 3 * 10;
  EXPECT_TRUE(parse_every_way(call_doc, call_with_ints(10), lim).starts_with("method m"));
  lim.max_elements -= 1;
  EXPECT_EQ(parse_every_way(call_doc, call_with_ints(10), lim),
            invalid("more than 32 XML elements"));
}

TEST(XmlrpcLimits, DefaultElementLimitIsOneMillion) {
  const std::size_t n = (1'000'000 - 3) / 3;  // 999'999 elements
  EXPECT_TRUE(parse_whole(call_doc, call_with_ints(n)).starts_with("method m"));
  EXPECT_EQ(parse_whole(call_doc, call_with_ints(n + 1)),
            invalid("more than 1000000 XML elements"));
}

TEST(XmlrpcLimits, MethodNameUpToTheLimitIsAcceptedOneMoreByteIsNot) {
  auto named = [](std::size_t n) {
    return "<methodCall><methodName>" + std::string(n, 'x') + "</methodName></methodCall>";
  };
  EXPECT_EQ(parse_whole(call_doc, named(256)), "method " + std::string(256, 'x') + "\nparams []");
  EXPECT_EQ(parse_every_way(call_doc, named(257)), invalid("method name is longer than 256 bytes"));
  limits lim;
  lim.max_name_bytes = 4;
  EXPECT_EQ(parse_whole(call_doc, named(4), lim), "method xxxx\nparams []");
  EXPECT_EQ(parse_whole(call_doc, named(5), lim), invalid("method name is longer than 4 bytes"));
}

// --- reuse and the object's contract --------------------------------------

TEST(XmlrpcParser, ResetReusesTheParserAcrossGoodAndBadDocuments) {
  const std::vector<std::string> docs = {
      typed("int", "1"),
      typed("int", "x"),                 // invalid request
      call_with("<value>\xff</value>"),  // not well-formed
      "<!DOCTYPE x><methodCall/>",       // stopped in a handler
      "<?xml version=\"1.0\" encoding=\"latin1\"?><methodCall/>",
      std::string("\xff\xfe<\0", 4),  // refused before expat
      nested(64, 'm'),
      nested(65, 'a'),
      typed("string", "after all that"),
  };
  parser p(call_doc);
  for (int round = 0; round < 3; ++round) {
    for (const std::string& doc : docs) {
      SCOPED_TRACE(doc);
      p.reset();
      const bool ok = p.feed(doc) && p.finish();
      EXPECT_EQ(test::outcome(call_doc, p, ok), parse_whole(call_doc, doc));
    }
  }
}

TEST(XmlrpcParser, ResetInTheMiddleOfADocumentStartsAfresh) {
  parser p(call_doc);
  const std::string doc = typed("int", "7");
  EXPECT_TRUE(p.feed(doc.substr(0, doc.size() / 2)));
  p.reset();
  ASSERT_TRUE(p.feed(doc) && p.finish());
  EXPECT_EQ(p.call().params, array{7});
}

TEST(XmlrpcParser, ResponseParserIsReusableToo) {
  parser p(response_doc);
  for (int i = 0; i < 3; ++i) {
    p.reset();
    ASSERT_TRUE(p.feed(response_with("<params><param><value><i4>5</i4></value></param></params>")));
    ASSERT_TRUE(p.finish());
    EXPECT_EQ(std::get<value>(p.response()), value(5));
    p.reset();
    ASSERT_TRUE(
        p.feed(fault_with(member("faultCode", "<int>3</int>") + member("faultString", "no"))));
    ASSERT_TRUE(p.finish());
    EXPECT_EQ(std::get<fault>(p.response()).code(), 3);
    EXPECT_EQ(std::get<fault>(p.response()).message(), "no");
  }
}

TEST(XmlrpcParser, FeedAfterAnErrorKeepsTheFirstError) {
  parser p(call_doc);
  EXPECT_FALSE(p.feed("<html>"));
  EXPECT_FALSE(p.feed("<methodCall>"));
  EXPECT_FALSE(p.finish());
  EXPECT_EQ(p.error().code, fault_code::invalid_request);
  EXPECT_EQ(p.error().message, "unknown element <html>");
}

TEST(XmlrpcParser, FeedAfterFinishIsAnError) {
  parser p(call_doc);
  ASSERT_TRUE(p.feed(typed("int", "1")) && p.finish());
  EXPECT_TRUE(p.finish());  // finishing twice is harmless
  EXPECT_FALSE(p.feed(" "));
  EXPECT_EQ(p.error().code, fault_code::parse_error);
}

TEST(XmlrpcParser, ResultsAreOnlyAvailableAfterASuccessfulFinish) {
  parser p(call_doc);
  EXPECT_THROW(p.call(), std::logic_error);
  ASSERT_TRUE(p.feed(typed("int", "1")));
  EXPECT_THROW(p.call(), std::logic_error);
  ASSERT_TRUE(p.finish());
  EXPECT_NO_THROW(p.call());
  EXPECT_THROW(p.response(), std::logic_error);  // a call parser has no response
  p.reset();
  EXPECT_FALSE(p.feed("<x/>"));
  EXPECT_THROW(p.call(), std::logic_error);
}

TEST(XmlrpcParser, IsMovable) {
  parser a(call_doc);
  parser b = std::move(a);
  ASSERT_TRUE(b.feed(typed("i8", "5")) && b.finish());
  EXPECT_EQ(b.call().params, array{std::int64_t{5}});
  parser c(response_doc);
  c = std::move(b);
  c.reset();
  ASSERT_TRUE(c.feed(typed("int", "6")) && c.finish());  // still a call parser
  EXPECT_EQ(c.call().params, array{6});
}

TEST(XmlrpcParser, EmptyChunksAreHarmless) {
  parser p(call_doc);
  const std::string doc = typed("boolean", "1");
  EXPECT_TRUE(p.feed(""));
  EXPECT_TRUE(p.feed(doc.substr(0, 10)));
  EXPECT_TRUE(p.feed(""));
  EXPECT_TRUE(p.feed(doc.substr(10)));
  EXPECT_TRUE(p.feed(""));
  ASSERT_TRUE(p.finish());
  EXPECT_EQ(p.call().params, array{true});
}

TEST(XmlrpcParser, LongStringsArriveIntact) {
  std::string text;
  for (int i = 0; i < 100'000; ++i) text += static_cast<char>('a' + i % 26);
  const auto r = parse_call(typed("string", text));
  ASSERT_TRUE(std::holds_alternative<method_call>(r));
  EXPECT_EQ(std::get<method_call>(r).params, array{text});
  // And the parser is fine for the next, small one.
  const auto r2 = parse_call(call_with("<value>short</value>"));
  ASSERT_TRUE(std::holds_alternative<method_call>(r2));
  EXPECT_EQ(std::get<method_call>(r2).params, array{"short"});
}

TEST(XmlrpcParser, LargeArraysGrowEightFoldWithinTheElementLimit) {
  // Past 4,096 items an array grows eight-fold rather than two-fold (each
  // growth moves every item so far), but never takes room for more items
  // than the element limit leaves: each item is at least one element.
  // Read by the direct scanner and by expat alike, at every size around
  // the steps and with limits that cut the array short.
  const auto doc = [](int items) {
    std::string values;
    for (int i = 0; i < items; ++i) values += "<value><int>" + std::to_string(i) + "</int></value>";
    return call_with("<value><array><data>" + values + "</data></array></value>");
  };
  const auto room = [](const std::string& text, const limits& lim) -> std::size_t {
    parser p(call_doc, lim);
    if (!p.parse(text)) return 0;
    return p.call().params.at(0).as<array>().capacity();
  };
  for (int items : {4096, 4097, 5000, 32768, 32769, 40000}) {
    SCOPED_TRACE(items);
    const std::string text = doc(items);
    EXPECT_EQ(test::parse_direct(call_doc, text), parse_whole(call_doc, text));
    const auto r = parse_call(text);
    ASSERT_TRUE(std::holds_alternative<method_call>(r));
    const auto& got = std::get<method_call>(r).params.at(0).as<array>();
    ASSERT_EQ(got.size(), static_cast<std::size_t>(items));
    EXPECT_EQ(got.back(), value(items - 1));
    // The envelope is 7 elements, each item 2.
    for (std::size_t max : {7u + 2 * 4096, 8u + 2 * 4096, 7u + 2 * 4097 + 1, 7u + 2 * 32768,
                            7u + 2 * 32769, 7u + 2 * 40000, 8u + 2 * 40000}) {
      SCOPED_TRACE(max);
      const limits lim{.max_elements = max};
      EXPECT_EQ(test::parse_direct(call_doc, text, lim), parse_whole(call_doc, text, lim));
      EXPECT_LE(room(text, lim), max);
    }
  }
  EXPECT_EQ(room(doc(5000), {}), 8u * 4096);
  EXPECT_EQ(room(doc(40000), {}), 8u * 8 * 4096);
}

// --- parse(): the direct scanner and its way back to expat -----------------

// Whether parse() read `doc` without expat, after checking that its outcome
// is the one every way of feeding expat gives.
bool read_directly(document_type type, const std::string& doc) {
  const std::string expected = parse_every_way(type, doc);
  parser p(type);
  const bool ok = p.parse(doc);
  EXPECT_EQ(test::outcome(type, p, ok), expected);
  return p.read_directly();
}

TEST(XmlrpcDirectScanner, ReadsTheDocumentsClientsSend) {
  const std::vector<std::string> calls = {
      "<?xml version=\"1.0\"?><methodCall><methodName>sample.add</methodName><params><param>"
      "<value><i4>3</i4></value></param><param><value><i4>5</i4></value></param></params>"
      "</methodCall>",
      "<?xml version='1.0' encoding='utf-8' standalone = \"yes\" ?>\r\n<methodCall>\r\n"
      "<methodName>m</methodName>\r\n<params/>\r\n</methodCall>\r\n",
      "\n  <methodCall><methodName>m</methodName></methodCall>\n",
      call_with("<value>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; ]] ]&gt;</value>"),
      call_with("<value>&#65;&#x42;&#x00063;&#233;&#x20AC;&#x1F600;&#13;&#9;</value>"),
      call_with("<value>line\r\nnext\rlast\n</value>"),
      call_with("<value>caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbd \xc2\x80</value>"),
      call_with("<value><struct><member><name>k &amp; v</name><value><array><data>"
                "<value><int>-7</int></value><value><boolean>1</boolean></value>"
                "<value><double>-2.5e3</double></value><value><nil/></value>"
                "<value><ex:i8>9007199254740993</ex:i8></value>"
                "<value><dateTime.iso8601>20240229T23:59:59</dateTime.iso8601></value>"
                "<value><base64>aGVsbG8=</base64></value><value/><value><string/></value>"
                "</data></array></value></member></struct></value>"),
      call_with("<value  ><string >x</string\n></value\t>"),
      "<methodCall><methodName>m</methodName ></methodCall >",
  };
  for (const auto& doc : calls) {
    SCOPED_TRACE(doc);
    EXPECT_TRUE(read_directly(call_doc, doc));
  }
  EXPECT_TRUE(read_directly(response_doc, response_with("<params><param><value>ok</value>"
                                                        "</param></params>")));
  EXPECT_TRUE(read_directly(
      response_doc, fault_with(member("faultCode", "<int>4</int>") + member("faultString", "no"))));
}

TEST(XmlrpcDirectScanner, LeavesAnythingElseToExpat) {
  const std::vector<std::string> calls = {
      // Well-formed, outside the scanner's subset: expat reads them.
      "\xef\xbb\xbf<methodCall><methodName>m</methodName></methodCall>",
      "<?xml version=\"1.0\" encoding=\"US-ASCII\"?><methodCall><methodName>m</methodName>"
      "</methodCall>",
      "<?xml version=\"1.0\"?><!-- hi --><methodCall><methodName>m</methodName></methodCall>",
      "<?xml version=\"1.0\"?><?pi x?><methodCall><methodName>m</methodName></methodCall>",
      call_with("<value><![CDATA[<x>]]></value>"),
      call_with("<value xmlns:ex=\"http://ws.apache.org/xmlrpc/namespaces/extensions\">"
                "<ex:nil/></value>"),
      call_with("<value>&#0000000065;</value>"),
      // Not well-formed, or refused: expat's error stands.
      "",
      " ",
      "<?xml version=\"1.1\"?><methodCall><methodName>m</methodName></methodCall>",
      "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><methodCall/>",
      " <?xml version=\"1.0\"?><methodCall><methodName>m</methodName></methodCall>",
      "<?xml version=\"1.0\"?><!DOCTYPE methodCall><methodCall/>",
      "</methodCall>",
      "<methodCall><methodName>m</methodName></methodCall><methodCall/>",
      "<methodCall><methodName>m</methodName></methodCall>x",
      "<methodCall><methodName>m</methodName>",
      "<methodCall><methodName>m</methodName></methodCall",
      "<methodCall><methodName>m</methodname></methodCall>",
      "<methodCall><methodName>m</methodName/></methodCall>",
      "< methodCall><methodName>m</methodName></methodCall>",
      "<methodCall><methodName>m</methodName><params/ ></methodCall>",
      "<methodCall><methodName a='1'>m</methodName></methodCall>",
      "<methodCall><methodNamex>m</methodNamex></methodCall>",
      call_with("<value>]]></value>"),
      call_with("<value>&nbsp;</value>"),
      call_with("<value>&#x;</value>"),
      call_with("<value>&#X41;</value>"),
      call_with("<value>&#xD800;</value>"),
      call_with("<value>&#1114112;</value>"),
      call_with("<value>&amp</value>"),
      call_with("<value>\xc0\xaf</value>"),
      call_with("<value>\xed\xa0\x80</value>"),
      call_with("<value>\xef\xbf\xbe</value>"),
      call_with("<value>\xf4\x90\x80\x80</value>"),
      call_with("<value>\xe2\x82</value>"),
      call_with("<value>a\x01</value>"),
      call_with(std::string("<value>a\0b</value>", 18)),
      call_with("<value><int>x</int></value>"),
      call_with("<value><bogus/></value>"),
  };
  for (const auto& doc : calls) {
    SCOPED_TRACE(doc);
    EXPECT_FALSE(read_directly(call_doc, doc));
  }
}

// `<value><int>42</int></value>` and its kin are read in one step (an
// array's run of them in one loop). Every variation around that spelling
// gives what expat gives, whether the step takes it or leaves it to the
// element-by-element reading.
TEST(XmlrpcDirectScanner, ReadsATypedScalarInOneStepAsExpatWould) {
  const std::vector<std::pair<std::string, std::string>> typed_texts = {
      {"int", "42"},
      {"int", "-2147483648"},
      {"int", "2147483648"},
      {"i4", "+7"},
      {"i4", " 7"},
      {"i4", "x"},
      {"i4", ""},
      {"i8", "-9223372036854775808"},
      {"i8", "9223372036854775808"},
      {"ex:i8", "9007199254740993"},
      {"double", "-2.5e3"},
      {"double", "1e400"},
      {"double", "nan"},
      {"double", ".5"},
      {"string", ""},
      {"string", "plain text"},
      {"string", "a &amp; b"},
      {"string", "caf\xc3\xa9"},
      {"string", "]]>"},
      {"string", "line\r\nnext"},
      {"boolean", "1"},
      {"boolean", "2"},
      {"dateTime.iso8601", "20240229T23:59:59"},
      {"base64", "aGVsbG8="},
  };
  // T stands for the type's name, X for the text.
  const std::vector<std::string> spellings = {
      "<value><T>X</T></value>",  "<value><T>X</T> </value>",        "<value> <T>X</T></value>",
      "<value><T >X</T></value>", "<value><T>X</T ></value>",        "<value><T>X</T></value >",
      "<value><T>X</T></valuex>", "<value><T>X</T></value",          "<value><T>X</T>",
      "<value><T>X</i4></value>", "<value><T>X</string></value>",    "<value><T>X<T/></T></value>",
      "<value><T/></value>",      "<value><T>X</T><T>X</T></value>",
  };
  const auto fill = [](const std::string& spelling, const std::string& type,
                       const std::string& text) {
    std::string out;
    for (char c : spelling) out += c == 'T' ? type : c == 'X' ? text : std::string(1, c);
    return out;
  };
  std::size_t direct = 0;
  for (const auto& [type, text] : typed_texts) {
    for (const auto& spelling : spellings) {
      const std::string v = fill(spelling, type, text);
      SCOPED_TRACE(v);
      const std::vector<std::pair<document_type, std::string>> docs = {
          {call_doc, call_with(v)},
          {call_doc, call_with("<value><array><data>" + v + v + "</data></array></value>")},
          {call_doc, call_with("<value><array><data>\n" + v + "\n\t " + v +
                               "\n<value><int>1</int>"
                               "</value></data></array></value>")},
          {call_doc,
           call_with("<value><struct><member><name>k</name>" + v + "</member></struct></value>")},
          {response_doc, response_with("<params><param>" + v + "</param></params>")}};
      for (const auto& [type_of, doc] : docs) direct += read_directly(type_of, doc) ? 1 : 0;
    }
  }
  EXPECT_GT(direct, 0u);
  // At the element limit: the type element is one more element.
  const std::string doc = call_with(
      "<value><array><data><value><int>1</int></value>"
      "<value><string>s</string></value></data></array></value>");
  for (std::size_t max = 8; max <= 13; ++max) {
    SCOPED_TRACE(max);
    const limits lim{.max_elements = max};
    EXPECT_EQ(test::parse_direct(call_doc, doc, lim), parse_whole(call_doc, doc, lim));
  }
}

// A struct's run of members, each a plain name and a one-step scalar, is
// read in one loop; anything around it as expat reads it.
TEST(XmlrpcDirectScanner, ReadsAStructsPlainMembersAsExpatWould) {
  const auto m = [](std::string_view name, std::string_view v) {
    return "<member><name>" + std::string(name) + "</name><value>" + std::string(v) +
           "</value></member>";
  };
  const std::vector<std::string> structs = {
      m("a", "<int>1</int>") + m("b", "<string>x</string>") + m("c", "<double>2.5</double>"),
      "\n<member>\n<name>a</name>\n<value><int>1</int></value>\n</member>\n"
      "<member> <name>b</name> <value><i8>2</i8></value> </member>\r\n",
      m("a", "<int>1</int>") + m("a", "<int>2</int>"),
      m("a", "<int>1</int>") + m("b", "<int>2</int>") + m("a", "<int>3</int>"),
      m("", "<int>1</int>") + m("", "<int>2</int>"),
      m("a &amp; b", "<int>1</int>") + m("c", "<int>2</int>"),
      m("caf\xc3\xa9", "<int>1</int>") + m("c", "<int>2</int>"),
      m("a", "<int>x</int>") + m("b", "<int>2</int>"),
      m("a", "<struct>" + m("in", "<int>1</int>") + "</struct>") + m("b", "<int>2</int>"),
      m("a", "<boolean>1</boolean>") + m("b", "<int>2</int>"),
      m("a", "<int>1</int>") + "<member><name>b</name></member>",
      m("a", "<int>1</int>") + "<member><value><int>1</int></value></member>",
      m("a", "<int>1</int>") + "<member><name>b</name><value><int>2</int></value>",
      m("a", "<int>1</int>") + "<member ><name>b</name><value><int>2</int></value></member>",
      m("a", "<int>1</int>") + "<member><name>b</name ><value><int>2</int></value></member>",
      m("a", "<int>1</int>") + "<member><name>b</name><value><int>2</int></value></member >",
      m("a", "<int>1</int>") + "<member><name>b</name><value><int>2</int></value><x/></member>",
      m("a", "<int>1</int>") + "text",
  };
  for (const auto& inner : structs) {
    SCOPED_TRACE(::testing::PrintToString(inner));
    const std::string doc = call_with("<value><struct>" + inner + "</struct></value>");
    read_directly(call_doc, doc);
    read_directly(response_doc, response_with("<params><param><value><struct>" + inner +
                                              "</struct></value></param></params>"));
  }
  for (const std::size_t i : {0, 1}) {
    EXPECT_TRUE(
        read_directly(call_doc, call_with("<value><struct>" + structs[i] + "</struct></value>")));
  }
  // At the element limit: each member is four elements.
  const std::string doc = call_with("<value><struct>" + structs[0] + "</struct></value>");
  for (std::size_t max = 7 + 4; max <= 7 + 4 * 3 + 2; ++max) {
    SCOPED_TRACE(max);
    const limits lim{.max_elements = max};
    EXPECT_EQ(test::parse_direct(call_doc, doc, lim), parse_whole(call_doc, doc, lim));
  }
}

// A <base64>'s text is decoded where it lies, unchecked as XML text: what
// the decoder takes is the alphabet and white space, and on anything else
// the scanner gives up and expat's reading stands.
TEST(XmlrpcDirectScanner, DecodesBase64WhereItLiesOrLeavesItToExpat) {
  const std::vector<std::string> direct = {
      "aGVsbG8=", "aGVs\nbG8=", "aGVs\r\nbG8=", "aGVs\rbG8=", " aGVs bG8= ", "\taGVsbG8=\n", "",
  };
  for (const auto& text : direct) {
    SCOPED_TRACE(::testing::PrintToString(text));
    EXPECT_TRUE(read_directly(call_doc, typed("base64", text)));
    EXPECT_TRUE(read_directly(call_doc, call_with("<value><array><data><value><base64>" + text +
                                                  "</base64></value><value><int>1</int></value>"
                                                  "</data></array></value>")));
  }
  const std::vector<std::string> to_expat = {
      "aGVs&#98;G8=",
      "aGVs&amp;bG8=",
      "aGVs\x01"
      "bG8=",
      "aGVs\x0c"
      "bG8=",
      "aGVs\xc3\xa9"
      "bG8=",
      "aGVs]]>bG8=",
      "aGVs*bG8=",
      "aGVsbG8",
      "aGVsbG8=x",
      "aGVsbG8=\xff",
      std::string("aGVs\0bG8=", 9),
  };
  for (const auto& text : to_expat) {
    SCOPED_TRACE(::testing::PrintToString(text));
    EXPECT_FALSE(read_directly(call_doc, typed("base64", text)));
  }
}

// Text is checked eight bytes at a time: whatever is special in it must be
// seen at any place in a word, and in the bytes after the last whole word.
TEST(XmlrpcDirectScanner, SeesSpecialBytesAtEveryOffset) {
  const std::vector<std::string> specials = {
      "\x01",      "\x7f", "\t",  "\n",       "\r",   "\r\n",         "&amp;",
      "&#x1F600;", "]",    "]]>", "\xc3\xa9", "\xff", "\xed\xa0\x80", std::string(1, '\0')};
  for (const std::string& special : specials) {
    for (std::size_t at = 0; at <= 19; ++at) {
      std::string text(19, 'x');
      text.insert(at, special);
      SCOPED_TRACE("special " + ::testing::PrintToString(special) + " at " + std::to_string(at));
      read_directly(call_doc, call_with("<value>" + text + "</value>"));
    }
  }
}

TEST(XmlrpcDirectScanner, GivesUpAtTheLimitsAndExpatSaysWhy) {
  limits lim;
  lim.max_elements = 5;
  const std::string doc = call_with("<value><int>1</int></value>");  // 6 elements
  parser p(call_doc, lim);
  EXPECT_FALSE(p.parse(doc));
  EXPECT_FALSE(p.read_directly());
  EXPECT_EQ(p.error().message, "more than 5 XML elements");
  p.reset();
  EXPECT_TRUE(p.parse("<methodCall><methodName>m</methodName></methodCall>"));
  EXPECT_TRUE(p.read_directly());
  // Once fed, a parser's document goes on through expat.
  p.reset();
  EXPECT_TRUE(p.feed("<methodCall><methodName>m</meth"));
  EXPECT_TRUE(p.parse("odName></methodCall>"));
  EXPECT_FALSE(p.read_directly());
  EXPECT_EQ(p.call().method, "m");
}

TEST(XmlrpcParseFunctions, ParseWholeDocumentsAndHonourLimits) {
  const auto call = parse_call(typed("int", "3"));
  ASSERT_TRUE(std::holds_alternative<method_call>(call));
  EXPECT_EQ(std::get<method_call>(call).method, "m");
  limits lim;
  lim.max_depth = 0;
  const auto limited = parse_call(nested(1, 'a'), lim);
  ASSERT_TRUE(std::holds_alternative<parse_error>(limited));
  EXPECT_EQ(std::get<parse_error>(limited).message, "nesting deeper than 0");
  EXPECT_TRUE(std::holds_alternative<method_call>(parse_call(nested(1, 'a'))));  // default again

  const auto response =
      parse_response(response_with("<params><param><value>x</value></param></params>"));
  ASSERT_TRUE(std::holds_alternative<outcome>(response));
  EXPECT_EQ(std::get<value>(std::get<outcome>(response)), value("x"));
  const auto bad = parse_response("<methodResponse/>");
  ASSERT_TRUE(std::holds_alternative<parse_error>(bad));
  EXPECT_EQ(std::get<parse_error>(bad).code, fault_code::invalid_request);
}

TEST(XmlrpcParseFunctions, MayBeCalledFromManyThreadsAtOnce) {
  std::vector<std::thread> threads;
  threads.reserve(8);
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 500; ++i) {
        const int n = t * 1000 + i;
        const auto r = parse_call(typed("int", std::to_string(n)));
        const auto* c = std::get_if<method_call>(&r);
        if (c == nullptr || c->params != array{n}) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace rapidrpc::xmlrpc

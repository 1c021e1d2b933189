"""Hostile XML-RPC documents: DTDs and entities, nesting, long tokens, bad
characters, bad literals, unknown types, hostile method names, multicall
amplification. Each answer is a fault (HTTP 200) without internal detail;
after each test a normal call on a new connection succeeds within 1 s."""

import time

import hostile
from hostile import HostileTestCase, call_body, raw_call_body

# Fault codes (docs/design.md, Errors).
PARSE_ERROR = -32700
UNSUPPORTED_ENCODING = -32701
INVALID_REQUEST = -32600
NO_METHOD = -32601
INVALID_PARAMS = -32602


def echo_value(value_xml):
    """A call of echo with one hand-written <value>."""
    return raw_call_body("echo", value_xml)


def nested_arrays(depth):
    return ("<value><array><data>" * depth + "<value><int>1</int></value>" +
            "</data></array></value>" * depth)


def nested_list(depth):
    out = 1
    for _ in range(depth):
        out = [out]
    return out


class DtdAndEntities(HostileTestCase):

    def test_every_doctype_is_refused(self):
        call = (b"<methodCall><methodName>echo</methodName><params><param><value>"
                b"<int>1</int></value></param></params></methodCall>")
        for doctype in (b"<!DOCTYPE methodCall>",
                        b"<!DOCTYPE methodCall []>",
                        b'<!DOCTYPE methodCall PUBLIC "-//x//y" "http://127.0.0.1:1/x.dtd">',
                        b'<!DOCTYPE methodCall [<!ELEMENT methodCall ANY>]>',
                        b'<!DOCTYPE methodCall [<!ATTLIST methodCall a CDATA "d">]>'):
            with self.subTest(doctype=doctype):
                self.assert_fault(b'<?xml version="1.0"?>\n' + doctype + b"\n" + call,
                                  PARSE_ERROR)

    def test_entity_expansion_is_refused_quickly(self):
        # "Billion laughs" and the quadratic blow-up (one large entity used
        # many times): refused at the DOCTYPE, never expanded.
        ents = ['<!ENTITY l0 "lollollollollollollollollollol">']
        for i in range(1, 10):
            ents.append(f'<!ENTITY l{i} "' + f"&l{i - 1};" * 10 + '">')
        laughs = (f'<?xml version="1.0"?>\n<!DOCTYPE methodCall [{"".join(ents)}]>\n'
                  "<methodCall><methodName>echo</methodName><params><param><value><string>"
                  "&l9;</string></value></param></params></methodCall>").encode()
        quadratic = ('<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY a "' + "x" * 50000 + '">]>\n'
                     "<methodCall><methodName>echo</methodName><params><param><value><string>" +
                     "&a;" * 10000 + "</string></value></param></params></methodCall>").encode()
        for body in (laughs, quadratic):
            t0 = time.monotonic()
            self.assert_fault(body, PARSE_ERROR)
            self.assertLess(time.monotonic() - t0, 2.0)

    def test_external_entities_are_refused(self):
        for decl, use in (
                (b'<!ENTITY xxe SYSTEM "file:///etc/passwd">', b"&xxe;"),
                (b'<!ENTITY xxe PUBLIC "-//x" "http://127.0.0.1:1/">', b"&xxe;"),
                (b'<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;', b"x"),
                (b'<!ENTITY u SYSTEM "x" NDATA n>', b"x")):
            body = (b'<?xml version="1.0"?>\n<!DOCTYPE methodCall [' + decl + b"]>\n"
                    b"<methodCall><methodName>echo</methodName><params><param><value><string>" +
                    use + b"</string></value></param></params></methodCall>")
            with self.subTest(decl=decl):
                fault = self.assert_fault(body, PARSE_ERROR)
                self.assertNotIn("root:", fault.faultString)
        # An external DTD is never fetched either.
        self.assert_fault(b'<!DOCTYPE methodCall SYSTEM "file:///etc/passwd"><methodCall>'
                          b"<methodName>echo</methodName></methodCall>", PARSE_ERROR)

    def test_undeclared_entity_is_a_parse_error(self):
        self.assert_fault(echo_value("<value><string>&undefined;</string></value>"), PARSE_ERROR)


class Nesting(HostileTestCase):

    def test_depth_64_is_served_and_65_is_a_fault(self):
        self.assert_result(echo_value(nested_arrays(64)), nested_list(64))
        self.assert_fault(echo_value(nested_arrays(65)), INVALID_REQUEST)

    def test_very_deep_nesting_is_a_fault_not_a_crash(self):
        depth = 50000
        structs = ("<value><struct><member><name>a</name>" * depth + "<value>x</value>" +
                   "</member></struct></value>" * depth)
        # Well-formed, past the depth limit: not a valid call (docs/limits.md).
        self.assert_fault(echo_value(structs), INVALID_REQUEST)
        # Deep nesting of elements that are not values at all: unknown elements.
        self.assert_fault(b"<methodCall>" + b"<a>" * 100000 + b"</a>" * 100000 + b"</methodCall>",
                          INVALID_REQUEST)


class LongTokensAndAttributes(HostileTestCase):

    def test_long_names_are_refused_and_not_echoed(self):
        name = "n" * 1_000_000
        self.assert_fault(f"<methodCall><{name}/></methodCall>".encode(),
                          (INVALID_REQUEST, PARSE_ERROR), must_not_echo=("n" * 33,))
        member = "m" * 100_000
        fault = self.call_raw(echo_value(f"<value><struct><member><name>{member}</name>"
                                         "<value>1</value></member></struct></value>"))
        # A long member name is legal: it comes back, in the result, not a fault.
        self.assertEqual(hostile.parse_result(fault.decoded_body()), {member: "1"})

    def test_long_attribute_values_and_many_attributes_are_refused(self):
        self.assert_fault(b'<methodCall a="' + b"v" * 1_000_000 + b'"><methodName>echo'
                          b"</methodName></methodCall>", INVALID_REQUEST, must_not_echo=("v" * 33,))
        attrs = " ".join(f'a{i}="{i}"' for i in range(20000)).encode()
        t0 = time.monotonic()
        self.assert_fault(b"<methodCall " + attrs + b"><methodName>echo</methodName></methodCall>",
                          INVALID_REQUEST)
        self.assertLess(time.monotonic() - t0, 2.0)
        # Repeated attribute names are not well-formed.
        self.assert_fault(b'<methodCall a="1" a="2"><methodName>echo</methodName></methodCall>',
                          PARSE_ERROR)

    def test_long_comments_and_instructions_are_harmless(self):
        body = (b"<methodCall><!--" + b"c" * 1_000_000 + b"--><?pi " + b"p" * 1_000_000 +
                b"?><methodName>echo</methodName><params><param><value><int>7</int></value>"
                b"</param></params></methodCall>")
        self.assert_result(body, 7)

    def test_long_string_within_the_body_limit_is_served(self):
        self.assert_result(call_body("echo", "s" * 4_000_000), "s" * 4_000_000)


class ElementLimit(HostileTestCase):
    daemon_args = ("--max-elements", "1000")

    def test_elements_past_the_limit_are_a_fault(self):
        ok = "<value><array><data>" + "<value><int>1</int></value>" * 300 + "</data></array></value>"
        self.assert_result(echo_value(ok), [1] * 300)
        many = "<value><array><data>" + "<value><int>1</int></value>" * 600 + "</data></array></value>"
        self.assert_fault(echo_value(many), INVALID_REQUEST)
        # Elements other than values count too.
        self.assert_fault(b"<methodCall><methodName>echo</methodName><params>" +
                          b"<param><value><nil/></value></param>" * 400 + b"</params></methodCall>",
                          INVALID_REQUEST)


class BadCharacters(HostileTestCase):

    def test_invalid_utf8_is_a_parse_error(self):
        for bad in (b"\xff", b"\xfe\xff", b"\xc3(", b"\xc0\xaf", b"\xe0\x80\xaf",
                    b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\x80"):
            with self.subTest(bytes=bad):
                body = echo_value("<value><string>aXb</string></value>").replace(b"X", bad)
                self.assert_fault(body, PARSE_ERROR)
        # In the method name too.
        self.assert_fault(raw_call_body("ec\xff", "<value><int>1</int></value>")
                          .replace("ec\xff".encode(), b"ec\xff"), PARSE_ERROR)

    def test_nul_bytes_are_refused(self):
        self.assert_fault(echo_value("<value><string>aXb</string></value>").replace(b"X", b"\0"),
                          PARSE_ERROR)
        # A NUL in the first two bytes means UTF-16 (XML's appendix F), read
        # as such: a UTF-16 document without its methodName is not a call,
        # and an odd run of bytes after a NUL is not well-formed.
        self.assert_fault("<methodCall/>".encode("utf-16-le"), INVALID_REQUEST)
        self.assert_fault(b"\0<methodCall/>", PARSE_ERROR)

    def test_forbidden_character_references_are_refused(self):
        for ref in ("&#0;", "&#x0;", "&#1;", "&#x1F;", "&#xFFFE;", "&#xFFFF;", "&#xD800;",
                    "&#xDFFF;", "&#x110000;", "&#99999999999;", "&#-1;", "&#x;"):
            with self.subTest(ref=ref):
                self.assert_fault(echo_value(f"<value><string>a{ref}b</string></value>"),
                                  PARSE_ERROR)
        # Those XML allows come through.
        self.assert_result(echo_value("<value><string>&#9;&#xA;&#13;&#x1F600;&lt;</string></value>"),
                           "\t\n\r\U0001F600<")

    def test_other_encodings_are_read(self):
        self.assert_result(b'<?xml version="1.0" encoding="ISO-8859-1"?><methodCall><methodName>'
                           b"echo</methodName><params><param><value>caf\xe9</value></param>"
                           b"</params></methodCall>", "caf\u00e9")

    def test_bytes_invalid_in_the_declared_encoding_are_refused_naming_it(self):
        def declared(encoding, text):
            return (b'<?xml version="1.0" encoding="' + encoding + b'"?><methodCall><methodName>'
                    b"echo</methodName><params><param><value>" + text +
                    b"</value></param></params></methodCall>")
        utf16 = declared(b"UTF-16", b"X").decode().encode("utf-16")
        cases = [
            (declared(b"US-ASCII", b"caf\xe9"), '"US-ASCII"', "\\xe9"),
            (declared(b"ascii", b"\x80"), '"ascii"', "\\x80"),
            (declared(b"windows-1252", b"a\x81"), '"windows-1252"', "\\x81"),
            (declared(b"cp1252", b"\x8d\x8f\x90"), '"cp1252"', "\\x8d"),
            # A lone low surrogate, an unpaired high one, an odd length.
            (utf16.replace("X".encode("utf-16-le"), b"\x00\xdc"), "UTF-16", "unpaired surrogate"),
            (utf16.replace("X".encode("utf-16-le"), b"\x00\xd8"), "UTF-16", "unpaired surrogate"),
            (utf16 + b"\n", "UTF-16", "odd number of bytes"),
        ]
        for body, name, detail in cases:
            with self.subTest(name=name, detail=detail):
                fault = self.assert_fault(body, UNSUPPORTED_ENCODING)
                self.assertIn("not valid " + name, fault.faultString)
                self.assertIn(detail, fault.faultString)

    def test_encoding_names_nothing_reads_are_refused_naming_them(self):
        def declared(encoding):
            return (b'<?xml version="1.0" encoding="' + encoding + b'"?><methodCall><methodName>'
                    b"echo</methodName></methodCall>")
        for name in (b"x-nonsense", b"UTF-8//TRANSLIT", b"Shift_JIS", b"utf-32", b"cp037"):
            with self.subTest(name=name):
                fault = self.assert_fault(declared(name), UNSUPPORTED_ENCODING)
                self.assertIn('"' + name.decode() + '"', fault.faultString)
        # A long name is not echoed; a burst of distinct names (each one
        # asked of iconv) is answered as quickly and leaves nothing behind.
        long_name = b"x" + b"-y" * 200
        self.assert_fault(declared(long_name), UNSUPPORTED_ENCODING,
                          must_not_echo=(long_name.decode()[:40],))
        for i in range(300):
            self.assert_fault(declared(b"x-probe-%d" % i), UNSUPPORTED_ENCODING)


class BadLiterals(HostileTestCase):

    def assert_all_faults(self, tag, literals):
        for text in literals:
            with self.subTest(tag=tag, text=text):
                self.assert_fault(echo_value(f"<value><{tag}>{text}</{tag}></value>"),
                                  INVALID_REQUEST)

    def test_integers_past_their_range(self):
        self.assert_result(echo_value("<value><i4>2147483647</i4></value>"), 2147483647)
        self.assert_result(echo_value("<value><int>-2147483648</int></value>"), -2147483648)
        self.assert_all_faults("int", ("2147483648", "-2147483649", "99999999999999999999999"))
        self.assert_all_faults("i4", ("2147483648", "-2147483649"))
        self.assert_result(echo_value("<value><i8>9223372036854775807</i8></value>"),
                           9223372036854775807)
        self.assert_result(echo_value("<value><i8>-9223372036854775808</i8></value>"),
                           -9223372036854775808)
        self.assert_all_faults("i8", ("9223372036854775808", "-9223372036854775809",
                                      "1" + "0" * 1000))

    def test_signs_and_spaces_in_numbers(self):
        self.assert_result(echo_value("<value><int>+0042</int></value>"), 42)
        self.assert_all_faults("int", ("", " 1", "1 ", "1 2", "+ 1", "--1", "+-1", "1_000",
                                       "0x10", "1e3", "1.0", "١", "abc", "&#32;1"))
        self.assert_all_faults("i8", (" 1", "--1", "0x10", ""))
        self.assert_all_faults("double", (" 1.0", "1.0 ", "1 .0", "--1.0", "1.5e", ".", "+",
                                          "0x1p3", "1,5", "1.5.2", ""))

    def test_non_finite_doubles(self):
        self.assert_result(echo_value("<value><double>-1.5e3</double></value>"), -1500.0)
        self.assert_all_faults("double", ("nan", "NaN", "inf", "-inf", "Infinity", "1e999",
                                          "-1e999", "1e-999"))

    def test_bad_booleans(self):
        self.assert_result(echo_value("<value><boolean>1</boolean></value>"), True)
        self.assert_all_faults("boolean", ("2", "-1", "true", "false", "01", " 1", "", "yes"))

    def test_malformed_base64(self):
        self.assert_result(echo_value("<value><base64>AAEC\n/w==</base64></value>"),
                           bytes([0, 1, 2, 255]))
        self.assert_all_faults("base64", ("!!!!", "QQ=", "Q", "QR==", "QQ==QQ==", "QQ=a",
                                          "Q===", "QUJD-A==", "\u00e9\u00e9\u00e9\u00e9"))

    def test_malformed_datetime(self):
        self.assert_all_faults("dateTime.iso8601", (
            "2024-13-01T00:00:00", "20230229T00:00:00", "20240431T00:00:00",
            "20240101T24:00:00", "20240101T00:60:00", "20240101T00:00:61",
            "20240101T00:00:00Z", "20240101T00:00:00+01:00", "20240101T00:00:00.5Z",
            "20240101T00:00:00.5+01:00", "20240101T00:00:00.1234567", "20240101T00:00:00.",
            "2024-01-01 00:00:00", "20240101", "", " 20240101T00:00:00", "99999999T00:00:00x"))

    def test_fractional_seconds_are_kept_to_the_microsecond(self):
        # As xmlrpc-c writes them; echoed with six digits.
        for text, echoed in (("19980717T14:08:55.123456", b"19980717T14:08:55.123456"),
                             ("1998-07-17T14:08:55.5", b"19980717T14:08:55.500000"),
                             ("19980717T14:08:55.000000", b"19980717T14:08:55<")):
            with self.subTest(text=text):
                resp = self.call_raw(echo_value(
                    f"<value><dateTime.iso8601>{text}</dateTime.iso8601></value>"))
                self.assertEqual(resp.status, 200, resp)
                self.assertIn(b"<dateTime.iso8601>" + echoed, resp.decoded_body())

    def test_unknown_type_tags(self):
        for v in ("<value><unknowntype>1</unknowntype></value>", "<value><i16>1</i16></value>",
                  "<value><integer>1</integer></value>", "<value><ex:float>1</ex:float></value>",
                  "<value><value>1</value></value>", "<value><int>1</int><int>2</int></value>",
                  "<value><struct><member><value><int>1</int></value></member></struct></value>",
                  "<value><array><value><int>1</int></value></array></value>",
                  "<value><nil>x</nil></value>"):
            with self.subTest(value=v):
                self.assert_fault(echo_value(v), INVALID_REQUEST)


class HostileMethodNames(HostileTestCase):

    def test_huge_method_name_is_refused_without_echo(self):
        for n in (257, 100_000, 4_000_000):
            with self.subTest(length=n):
                self.assert_fault(call_body("a" * n), INVALID_REQUEST, must_not_echo=("a" * 33,))
        self.assert_fault(call_body("a" * 256), NO_METHOD, must_not_echo=("a" * 33,))

    def test_control_characters_are_refused(self):
        # Characters XML 1.0 does not allow are not well-formed (-32700);
        # the others make a well-formed document with a bad name (-32600).
        for name, code in (("echo\x01", PARSE_ERROR), ("ec&#1;ho", PARSE_ERROR),
                           ("echo&#10;", INVALID_REQUEST), ("echo\t", INVALID_REQUEST),
                           ("ec ho", INVALID_REQUEST), ("echo\r\n", INVALID_REQUEST),
                           ("e\x7fcho", INVALID_REQUEST), ("\u00e9cho", INVALID_REQUEST),
                           ("echo;rm", INVALID_REQUEST), ("echo<x/>", INVALID_REQUEST)):
            with self.subTest(name=name):
                body = (b"<methodCall><methodName>" + name.encode() +
                        b"</methodName><params/></methodCall>")
                self.assert_fault(body, code, must_not_echo=(name,))

    def test_dotted_probing_finds_nothing(self):
        for name in (".", "..", "system.", ".echo", "echo.", "system..listMethods",
                     "system.listMethods.", "../../etc/passwd", "/etc/passwd", "__proto__",
                     "system.listMethods.__class__", "system.multicall.system.multicall",
                     "sample.add.call", "SAMPLE.ADD", "system:listMethods", "echo/../echo"):
            with self.subTest(name=name):
                # Names of allowed characters: no such method.
                self.assert_fault(call_body(name, 1), NO_METHOD,
                                  must_not_echo=(name,) if len(name) > 3 else ())


class MulticallAmplification(HostileTestCase):

    @staticmethod
    def entry(name, *params):
        return {"methodName": name, "params": list(params)}

    def multicall(self, entries):
        return self.call_raw(call_body("system.multicall", entries))

    def test_more_than_1000_calls_is_refused_quickly(self):
        t0 = time.monotonic()
        self.assert_fault(call_body("system.multicall",
                                    [self.entry("sample.add", i, 1) for i in range(1001)]),
                          INVALID_PARAMS)
        self.assertLess(time.monotonic() - t0, 2.0)
        resp = self.multicall([self.entry("sample.add", i, 1) for i in range(1000)])
        self.assertEqual(hostile.parse_result(resp.decoded_body()), [[i + 1] for i in range(1000)])

    def test_nested_multicall_is_a_fault_in_its_slot(self):
        inner = [self.entry("echo", 1)] * 1000
        resp = self.multicall([self.entry("echo", "a"), self.entry("system.multicall", inner),
                               self.entry("echo", "b")])
        out = hostile.parse_result(resp.decoded_body())
        self.assertEqual(out[0], ["a"])
        self.assertEqual(out[2], ["b"])
        self.assertEqual(out[1]["faultCode"], INVALID_REQUEST, out[1])

    def test_malformed_entries_are_faults_in_their_slots(self):
        resp = self.multicall([1, {"methodName": 5, "params": []}, {"methodName": "echo"},
                               {"methodName": "echo", "params": "x"}, self.entry("nope"),
                               self.entry("echo", 3)])
        out = hostile.parse_result(resp.decoded_body())
        self.assertEqual(len(out), 6)
        for slot in out[:5]:
            self.assertIsInstance(slot, dict, out)
            self.assertIn(slot["faultCode"], (INVALID_REQUEST, INVALID_PARAMS, NO_METHOD), slot)
            self.assert_clean_message(slot["faultString"])
        self.assertEqual(out[5], [3])
        self.assert_fault(call_body("system.multicall", "not an array"), INVALID_PARAMS)


class DocumentLimitOptions(HostileTestCase):
    daemon_args = ("--max-depth", "8", "--multicall-max", "3")

    def test_max_depth_option(self):
        self.assert_result(echo_value(nested_arrays(8)), nested_list(8))
        self.assert_fault(echo_value(nested_arrays(9)), INVALID_REQUEST)

    def test_multicall_max_option(self):
        def mc(n):
            return {"methodName": "echo", "params": [n]}
        self.assert_result(call_body("system.multicall", [mc(1), mc(2), mc(3)]), [[1], [2], [3]])
        self.assert_fault(call_body("system.multicall", [mc(i) for i in range(4)]), INVALID_PARAMS)


if __name__ == "__main__":
    hostile.harness.main()

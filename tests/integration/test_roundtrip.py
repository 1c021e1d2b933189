"""Values survive a round trip through echo(value) unchanged, in kind and
content, using Python's own XML-RPC client (and hand-written XML where that
client cannot express a value)."""

import datetime
import re
import xmlrpc.client

import harness
from harness import DaemonTestCase, exchange, http_request, parse_result, raw_call_body


def assert_same(test, expected, actual, path="value"):
    """Deep equality that also compares types (True is not 1, 1.0 is not 1)."""
    test.assertIs(type(actual), type(expected),
                  f"{path}: expected {type(expected).__name__} {expected!r:.200}, "
                  f"got {type(actual).__name__} {actual!r:.200}")
    if isinstance(expected, dict):
        test.assertEqual(sorted(actual), sorted(expected), f"{path}: struct member names")
        for k in expected:
            assert_same(test, expected[k], actual[k], f"{path}[{k!r}]")
    elif isinstance(expected, list):
        test.assertEqual(len(actual), len(expected), f"{path}: array length")
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(test, e, a, f"{path}[{i}]")
    else:
        test.assertEqual(actual, expected, f"{path}")


NASTY = "a<b>&c&amp;]]>\"quoted\" 'single' \u00e9\u4e2d\u6587 \U0001F600\U0001D11E end"


class EchoRoundTrip(DaemonTestCase):

    def echo(self, value, expected=None):
        with self.proxy() as p:
            result = p.echo(value)
        assert_same(self, value if expected is None else expected, result)
        return result

    # -- scalars ---------------------------------------------------------------

    def test_int_limits(self):
        for v in (0, 1, -1, 42, 2**31 - 1, -2**31):
            with self.subTest(v=v):
                self.echo(v)

    def test_python_client_refuses_ints_beyond_i4(self):
        # Why i8 is tested with hand-written XML below.
        with self.assertRaises(OverflowError):
            xmlrpc.client.dumps((2**31,), "echo")

    def test_booleans(self):
        self.echo(True)
        self.echo(False)

    def test_doubles(self):
        for v in (0.0, 0.1, -1e300, 1e300, 5e-324, -2.5, 1.7976931348623157e308,
                  2.2250738585072014e-308, 123456789.125, 1 / 3):
            with self.subTest(v=v):
                self.echo(v)

    def test_strings(self):
        for v in ("", "plain", NASTY, "tab\there", "line\nfeed", "x" * 1000,
                  "  leading and trailing spaces  ", "<value><i4>1</i4></value>"):
            with self.subTest(v=v[:40]):
                self.echo(v)

    def test_crlf_via_character_reference(self):
        # Python's client writes CR raw, and every XML parser turns a raw CR
        # (or CRLF) into LF; the only way to carry CR is &#13;. The server
        # must keep it and write it back so that it survives parsing.
        body = raw_call_body("echo", "<value><string>a&#13;b&#13;&#10;c\td</string></value>")
        resp = exchange(self.daemon, http_request(body))
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), "a\rb\r\nc\td",
                         f"response body: {resp.decoded_body()!r}")

    def test_unicode_astral_and_markup_in_struct_names(self):
        self.echo({NASTY: NASTY, "": "empty name", "\U0001F600": ["\U0001F600"]})

    def test_base64(self):
        for v in (b"", b"\x00", b"\x00\xff\x10binary<&>", bytes(range(256)) * 3):
            with self.subTest(n=len(v)):
                self.echo(v)

    def test_base64_one_megabyte(self):
        data = bytes((i * 7 + (i >> 8)) & 0xFF for i in range(1 << 20))
        self.echo(data)

    def test_datetime(self):
        dt = datetime.datetime(2024, 2, 29, 23, 59, 58)
        self.echo(dt)
        # xmlrpc.client.DateTime comes back as datetime (use_builtin_types).
        self.echo(xmlrpc.client.DateTime("19980717T14:08:55"),
                  expected=datetime.datetime(1998, 7, 17, 14, 8, 55))
        self.echo(datetime.datetime(1, 1, 1, 0, 0, 0))
        self.echo(datetime.datetime(9999, 12, 31, 23, 59, 59))

    def test_nil(self):
        self.echo(None)

    def test_empty_containers(self):
        self.echo([])
        self.echo({})
        self.echo([[], {}, [[]]])

    # -- composites ------------------------------------------------------------

    def test_nested_structs_and_arrays_of_every_type(self):
        every = [
            1, -2**31, 2**31 - 1, True, False, 0.1, -1e300, 5e-324, "", NASTY,
            b"", b"\x00\x01\x02", datetime.datetime(2000, 1, 2, 3, 4, 5), None,
        ]
        value = {
            "every": list(every),
            "as_struct": {f"m{i}": v for i, v in enumerate(every)},
            "nested": [every, {"deeper": [every, {"deepest": every}]}],
            "matrix": [[i * j for j in range(5)] for i in range(5)],
        }
        self.echo(value)
        self.echo([value, value])

    def test_deep_nesting_within_default_limit(self):
        v = "leaf"
        for i in range(30):
            v = [v] if i % 2 else {"k": v}
        self.echo(v)

    def test_array_of_ten_thousand(self):
        self.echo(list(range(10_000)))
        self.echo([f"s{i}" for i in range(10_000)])

    def test_one_megabyte_string(self):
        s = ("0123456789abcdef<&>" * 60000)[: 1 << 20]
        self.assertEqual(len(s), 1 << 20)
        self.echo(s)
        # and with multi-byte UTF-8 characters throughout
        self.echo("\u00e9\U0001F600" * 200_000)

    def test_echo_takes_exactly_one_param(self):
        with self.proxy() as p:
            self.assertFaultCode(-32602, p.echo, 1, 2)
            self.assertFaultCode(-32602, p.echo)

    # -- hand-written XML ------------------------------------------------------

    def raw_echo(self, value_xml):
        resp = exchange(self.daemon, http_request(raw_call_body("echo", value_xml)))
        self.assertEqual(resp.status, 200, resp)
        return resp.decoded_body()

    def test_i8_round_trip(self):
        for v in (2**63 - 1, -2**63, 2**31, -2**31 - 1, 0):
            with self.subTest(v=v):
                body = self.raw_echo(f"<value><i8>{v}</i8></value>")
                self.assertRegex(body, rb"<(ex:)?i8>\s*%d\s*</(ex:)?i8>" % v,
                                 f"response does not carry <i8>{v}</i8>: {body!r}")
                result = parse_result(body)
                self.assertEqual(result, v)

    def test_i8_out_of_range_is_an_invalid_request(self):
        # docs/limits.md: a literal out of its type's range is a bad literal
        # in a well-formed document that is not a valid call: -32600.
        for v in (2**63, -2**63 - 1):
            with self.subTest(v=v):
                resp = exchange(self.daemon, http_request(
                    raw_call_body("echo", f"<value><i8>{v}</i8></value>")))
                self.assertEqual(resp.status, 200, resp)
                fault = harness.parse_fault(resp.decoded_body())
                self.assertEqual(fault.faultCode, -32600, fault)

    def test_extension_types_with_apache_prefix(self):
        body = (b'<?xml version="1.0"?><methodCall '
                b'xmlns:ex="http://ws.apache.org/xmlrpc/namespaces/extensions">'
                b"<methodName>echo</methodName><params>"
                b"<param><value><array><data><value><ex:nil/></value>"
                b"<value><ex:i8>-9223372036854775808</ex:i8></value>"
                b"</data></array></value></param></params></methodCall>")
        resp = exchange(self.daemon, http_request(body))
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), [None, -2**63])

    def test_untyped_value_is_a_string(self):
        body = self.raw_echo("<value>  untyped &lt;text&gt;  </value>")
        self.assertEqual(parse_result(body), "  untyped <text>  ")

    def test_i4_and_int_tags_equivalent(self):
        self.assertEqual(parse_result(self.raw_echo("<value><i4>-7</i4></value>")), -7)
        self.assertEqual(parse_result(self.raw_echo("<value><int>+7</int></value>")), 7)

    def test_pretty_printed_request(self):
        body = (b'<?xml version="1.0" encoding="UTF-8"?>\n<methodCall>\n'
                b'  <methodName>echo</methodName>\n  <params>\n    <param>\n'
                b'      <value>\n        <struct>\n          <member>\n'
                b'            <name>n</name>\n            <value>\n'
                b'              <int>5</int>\n            </value>\n'
                b'          </member>\n        </struct>\n      </value>\n'
                b'    </param>\n  </params>\n</methodCall>\n')
        resp = exchange(self.daemon, http_request(body))
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), {"n": 5})

    def test_response_document_shape(self):
        body = self.raw_echo("<value><int>5</int></value>")
        self.assertTrue(re.match(rb"\s*(<\?xml[^>]*\?>\s*)?<methodResponse>", body), body)
        self.assertIn(b"<params>", body)


if __name__ == "__main__":
    harness.main()

"""`rapidrpc call` against the real rapidrpcd: every argument form, the
readable, --json and --xml outputs, faults and transport errors, --help."""

import json
import re
import unittest

import clitest
from clitest import EXIT_FAULT, EXIT_OK, EXIT_TRANSPORT, EXIT_USAGE, describe, harness, run_tool


class CallTest(harness.DaemonTestCase):

    def call(self, *args, expect_status=EXIT_OK):
        proc = run_tool("call", self.url, *args)
        self.assertEqual(proc.returncode, expect_status, describe(proc))
        return proc

    def echo_json(self, arg):
        """What the server got for one argument, as --json prints it."""
        proc = self.call("echo", arg, "--json")
        return json.loads(proc.stdout)

    def echo_xml(self, arg):
        return self.call("echo", arg, "--xml").stdout

    # -- acceptance --------------------------------------------------------------

    def test_sample_add_prints_8(self):
        proc = self.call("sample.add", "i/3", "i/5")
        self.assertEqual(proc.stdout, "8\n")
        self.assertEqual(proc.stderr, "")

    def test_json_struct_round_trips(self):
        text = '{"a":[1,2.5,"x",null]}'
        self.assertEqual(self.echo_json(text), {"a": [1, 2.5, "x", None]})
        # --json prints exactly this document (compact, members in the order sent)
        self.assertEqual(self.call("echo", text, "--json").stdout, text + "\n")
        # the readable form shows a container as indented JSON
        readable = self.call("echo", text).stdout
        self.assertEqual(json.loads(readable), {"a": [1, 2.5, "x", None]})
        self.assertIn("\n  ", readable)

    def test_fault_exits_1_with_code_and_message(self):
        proc = self.call("sample.add", "i/2147483647", "i/1", expect_status=EXIT_FAULT)
        self.assertEqual(proc.stdout, "")
        self.assertRegex(proc.stderr, r"^fault -32500: integer overflow")
        proc = self.call("no.such.method", expect_status=EXIT_FAULT)
        self.assertRegex(proc.stderr, r"^fault -32601: ")

    def test_fault_with_json_prints_the_fault_struct(self):
        proc = self.call("no.such.method", "--json", expect_status=EXIT_FAULT)
        fault = json.loads(proc.stdout)
        self.assertEqual(fault["faultCode"], -32601)
        self.assertIsInstance(fault["faultString"], str)

    def test_jsonrpc_protocol(self):
        proc = self.call("--protocol", "jsonrpc", "sample.add", "i/3", "i/5")
        self.assertEqual(proc.stdout, "8\n")
        raw = json.loads(self.call("-P", "jsonrpc", "--raw", "echo", '{"a":[1,2.5,"x",null]}').stdout)
        self.assertEqual(raw, {"jsonrpc": "2.0", "result": {"a": [1, 2.5, "x", None]}, "id": 1})
        proc = self.call("-P", "jsonrpc", "no.such.method", expect_status=EXIT_FAULT)
        self.assertRegex(proc.stderr, r"^fault -32601: Method not found")
        proc = run_tool("call", "-P", "soap", self.url, "echo", "1")
        self.assertEqual(proc.returncode, EXIT_USAGE, describe(proc))
        self.assertIn("'soap' is not a protocol: xmlrpc or jsonrpc", proc.stderr)
        proc = run_tool("call", "-P", "JSONRPC", "--raw", self.url, "sample.add", "3", "5")
        self.assertEqual(json.loads(proc.stdout)["result"], 8, describe(proc))

    def test_help_documents_every_form(self):
        proc = run_tool("call", "--help")
        self.assertEqual(proc.returncode, 0, describe(proc))
        for form in ("i/3", "I/9000000000", "s/text", "b/t", "b/f", "b/true", "b/false", "d/2.5",
                     "n/", "h/", "6/", "8/", "JSON", "--json", "--xml", "--raw", "--timeout", "--header",
                     "--verbose", "--protocol", "jsonrpc"):
            self.assertIn(form, proc.stdout, f"call --help does not mention {form}")
        proc = run_tool("bench", "--help")
        self.assertEqual(proc.returncode, 0, describe(proc))
        for opt in ("--connections", "--requests", "--duration", "--keep-alive", "--no-keep-alive",
                    "--rate", "--threads", "--json", "--report", "--expect", "--protocol", "i/3", "JSON"):
            self.assertIn(opt, proc.stdout, f"bench --help does not mention {opt}")
        # Text only (the man page is made of it): -P's names, not the enum's bytes.
        for command in ("call", "bench"):
            text = run_tool(command, "--help").stdout
            self.assertIn("-P,--protocol ENUM:{xmlrpc,jsonrpc}=xmlrpc", text)
            self.assertNotRegex(text, "[\x00-\x08\x0e-\x1f]", f"{command} --help")

    # -- every argument form, as the server received it ------------------------------

    def test_typed_forms(self):
        cases = {
            "i/3": 3, "i/-7": -7, "I/9000000000": 9000000000, "I/-1": -1,
            "s/text": "text", "s/": "", "s/a/b c": "a/b c", "s/i/3": "i/3",
            "b/t": True, "b/f": False, "b/true": True, "b/false": False,
            "d/2.5": 2.5, "d/-1e3": -1000.0, "n/": None,
            "h/48656c6c6f": {"$base64": "SGVsbG8="}, "h/": {"$base64": ""},
            "6/SGVsbG8=": {"$base64": "SGVsbG8="},
            "8/20240131T12:30:00": {"$datetime": "2024-01-31T12:30:00"},
            "8/2024-02-29T23:59:60": {"$datetime": "2024-02-29T23:59:60"},
        }
        for arg, expected in cases.items():
            with self.subTest(arg=arg):
                got = self.echo_json(arg)
                self.assertEqual(got, expected)
                self.assertIs(type(got), type(expected))

    def test_wire_types(self):
        """Each form goes on the wire as its XML-RPC type."""
        cases = {
            "i/3": r"<(i4|int)>3</\1>", "I/3": r"<i8>3</i8>", "d/2.5": r"<double>2.5</double>",
            "b/t": r"<boolean>1</boolean>", "n/": r"<nil/>", "s/x": r"<string>x</string>",
            "h/00ff": r"<base64>AP8=</base64>",
            "8/20240131T12:30:00": r"<dateTime.iso8601>20240131T12:30:00</dateTime.iso8601>",
            "2147483647": r"<(i4|int)>2147483647</\1>", "2147483648": r"<i8>2147483648</i8>",
            "-2147483649": r"<i8>-2147483649</i8>", "1.0": r"<double>1(\.0)?</double>",
        }
        for arg, pattern in cases.items():
            with self.subTest(arg=arg):
                self.assertRegex(self.echo_xml(arg), pattern)

    def test_json_forms(self):
        cases = {
            "3": 3, "-1.5": -1.5, "true": True, "false": False, "null": None,
            '"quoted"': "quoted", "[]": [], "{}": {}, "[1, [2, [3]]]": [1, [2, [3]]],
            '{"b": 1, "a": {"c": [true, null]}}': {"a": {"c": [True, None]}, "b": 1},
            "9007199254740993": 9007199254740993, "1e300": 1e300,
            "hello": "hello", "two words": "two words", "1abc": "1abc", "01": "01",
        }
        for arg, expected in cases.items():
            with self.subTest(arg=arg):
                got = self.echo_json(arg)
                self.assertEqual(got, expected)
                self.assertIs(type(got), type(expected))

    def test_json_markers_are_base64_and_dates(self):
        """The JSON-RPC mapping both ways: what --json prints is an argument
        that sends the same value again."""
        cases = {
            '{"$base64":"SGVsbG8="}': r"<base64>SGVsbG8=</base64>",
            '{"$datetime":"2024-01-31T12:30:00"}': r"<dateTime.iso8601>20240131T12:30:00</dateTime.iso8601>",
            '{"base64":"SGVsbG8="}': r"<struct><member><name>base64</name>",
            '{"$datetime":"20240131T12:30:00"}': r"<struct><member><name>\$datetime</name>",
        }
        for arg, pattern in cases.items():
            with self.subTest(arg=arg):
                self.assertRegex(self.echo_xml(arg), pattern)
        text = '[{"$base64":"AP8="},{"$datetime":"2024-02-29T23:59:60"},{"k":{"$base64":""}}]'
        self.assertEqual(self.call("echo", text, "--json").stdout, text + "\n")
        self.assertEqual(self.call("-P", "jsonrpc", "echo", text, "--json").stdout, text + "\n")

    def test_json_unicode_escapes(self):
        arg = r'"\ud83d\ude00 \u00e9 é \"q\" \\ \/ \t\n"'
        self.assertEqual(self.echo_json(arg), "\U0001F600 é é \"q\" \\ / \t\n")
        # --json output escapes what JSON requires and reads back the same
        out = self.call("echo", arg, "--json").stdout
        self.assertEqual(json.loads(out), "\U0001F600 é é \"q\" \\ / \t\n")

    def test_double_output_reads_back_exactly(self):
        for text in ("0.1", "2.0", "1e-300", "123456789.123456789", "-0.0", "5e-324"):
            with self.subTest(text=text):
                got = self.echo_json("d/" + text)
                self.assertIsInstance(got, float)
                self.assertEqual(got, float(text))

    def test_bad_arguments_are_usage_errors(self):
        for arg in ("i/abc", "i/2147483648", "I/99999999999999999999", "b/yes", "d/nan", "d/1e999",
                    "n/x", "h/abc", "h/zz", "6/SGVsbG8", "8/20240230T00:00:00", "x/1",
                    '{"a":1,"a":2}', "[1,]", '"\\ud800"', '"\\udc00x"', "{", '"\x01"'):
            with self.subTest(arg=arg):
                proc = run_tool("call", self.url, "echo", arg)
                self.assertEqual(proc.returncode, EXIT_USAGE, describe(proc))
                self.assertIn("rapidrpc:", proc.stderr)
                self.assertEqual(proc.stdout, "")

    def test_deep_json_is_refused(self):
        proc = run_tool("call", self.url, "echo", "[" * 65 + "]" * 65)
        self.assertEqual(proc.returncode, EXIT_USAGE, describe(proc))
        self.assertEqual(self.echo_json("[" * 63 + "]" * 63), json.loads("[" * 63 + "]" * 63))

    # -- outputs ------------------------------------------------------------------

    def test_readable_scalars_are_plain(self):
        self.assertEqual(self.call("echo", "s/two words").stdout, "two words\n")
        self.assertEqual(self.call("echo", "n/").stdout, "nil\n")
        self.assertEqual(self.call("echo", "b/t").stdout, "true\n")
        self.assertEqual(self.call("echo", "d/2.5").stdout, "2.5\n")
        self.assertEqual(self.call("load", "i/10").stdout, "55\n")
        self.assertEqual(self.call("echo", "8/20240131T12:30:00").stdout, "2024-01-31T12:30:00\n")
        self.assertEqual(self.call("echo", "h/48656c6c6f").stdout, "base64:SGVsbG8=\n")

    def test_xml_prints_the_raw_response(self):
        out = self.call("sample.add", "i/3", "i/5", "--xml").stdout
        self.assertRegex(out, r"^<\?xml[^>]*\?>\s*<methodResponse>")
        self.assertRegex(out, r"<(int|i4)>8</\1>")
        fault = self.call("no.such.method", "--xml", expect_status=EXIT_FAULT)
        self.assertIn("<fault>", fault.stdout)
        self.assertIn("-32601", fault.stdout)

    def test_verbose_shows_the_wire(self):
        proc = self.call("sample.add", "i/3", "i/5", "-v", "--header", "X-Test-Header: hello")
        self.assertEqual(proc.stdout, "8\n")
        self.assertIn("POST /RPC2 HTTP/1.1", proc.stderr)
        self.assertIn("X-Test-Header: hello", proc.stderr)
        self.assertIn("<methodName>sample.add</methodName>", proc.stderr)
        self.assertRegex(proc.stderr, r"HTTP/1\.1 200")
        self.assertIn("<methodResponse>", proc.stderr)

    def test_bad_header_is_a_usage_error(self):
        proc = run_tool("call", self.url, "sample.add", "i/1", "i/2", "--header", "no colon")
        self.assertEqual(proc.returncode, EXIT_USAGE, describe(proc))

    def test_negative_numbers_are_arguments(self):
        self.assertEqual(self.call("sample.add", "-3", "-5").stdout, "-8\n")
        self.assertEqual(self.call("sample.add", "--", "i/-3", "-5").stdout, "-8\n")


class TransportErrorTest(unittest.TestCase):

    def test_no_server_exits_2(self):
        port = clitest.free_port()
        proc = run_tool("call", f"http://127.0.0.1:{port}/RPC2", "sample.add", "i/3", "i/5")
        self.assertEqual(proc.returncode, EXIT_TRANSPORT, describe(proc))
        self.assertEqual(proc.stdout, "")
        self.assertTrue(proc.stderr.strip())
        self.assertNotRegex(proc.stderr, r"^fault ")

    def test_bad_url_is_an_error(self):
        proc = run_tool("call", "ftp://example.invalid/", "x")
        self.assertIn(proc.returncode, (EXIT_TRANSPORT, EXIT_USAGE), describe(proc))
        self.assertTrue(proc.stderr.strip())

    def test_missing_method_is_a_usage_error(self):
        proc = run_tool("call", "http://127.0.0.1:1/RPC2")
        self.assertEqual(proc.returncode, EXIT_USAGE, describe(proc))
        self.assertTrue(re.search(r"METHOD", proc.stderr), describe(proc))


if __name__ == "__main__":
    harness.main()

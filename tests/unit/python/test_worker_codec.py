"""The Python worker's reader of the host's calls (python/rapidrpc/_worker.py,
read_call): on documents in the form rapidrpc's XML-RPC writer gives
(src/xmlrpc/writer.cpp: no whitespace between elements, every value typed,
<nil/>, & < > and CR as &amp; &lt; &gt; &#13;) and in the form
xmlrpc.client.dumps gives (what the host passes on from a Python client) it
must give what xmlrpc.client.loads gives, and any other document must go to
loads. No process, no socket."""

import base64
import datetime
import marshal
import os
import random
import sys
import unittest
import xmlrpc.client

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "python"))
from rapidrpc import _worker  # noqa: E402


def text(s):
    """Character data as the writer escapes it."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        "\r", "&#13;")


def value(v):
    """A value as the writer writes it."""
    if v is None:
        body = "<nil/>"
    elif isinstance(v, bool):
        body = "<boolean>%d</boolean>" % v
    elif isinstance(v, int):
        body = ("<int>%d</int>" if -2**31 <= v < 2**31 else "<i8>%d</i8>") % v
    elif isinstance(v, float):
        body = "<double>%r</double>" % v
    elif isinstance(v, str):
        body = "<string>%s</string>" % text(v)
    elif isinstance(v, bytes):
        body = "<base64>%s</base64>" % base64.b64encode(v).decode()
    elif isinstance(v, datetime.datetime):
        body = "<dateTime.iso8601>%s</dateTime.iso8601>" % v.strftime("%Y%m%dT%H:%M:%S")
    elif isinstance(v, list):
        body = "<array><data>%s</data></array>" % "".join(value(x) for x in v)
    else:
        body = "<struct>%s</struct>" % "".join(
            "<member><name>%s</name>%s</member>" % (text(k), value(x)) for k, x in v.items())
    return "<value>%s</value>" % body


def call(name, params):
    return ('<?xml version="1.0"?>\n<methodCall><methodName>%s</methodName><params>%s'
            "</params></methodCall>" % (text(name), "".join(
                "<param>%s</param>" % value(p) for p in params))).encode("utf-8")


def random_value(rng, depth=0):
    kinds = ["nil", "bool", "int", "i8", "double", "string", "bytes", "date"]
    if depth < 3:
        kinds += ["array", "struct"]
    kind = rng.choice(kinds)
    if kind == "nil":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.randint(-2**31, 2**31 - 1)
    if kind == "i8":
        return rng.choice([-1, 1]) * rng.randint(2**31, 2**63 - 1)
    if kind == "double":
        return rng.choice([0.0, -1.5, 1e300, 5e-324, rng.uniform(-1e6, 1e6)])
    if kind == "string":
        return "".join(rng.choice("ab <&>;#\r\n\t\u00e9\u20ac\U0001f600") for _ in range(
            rng.randint(0, 12)))
    if kind == "bytes":
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 20)))
    if kind == "date":
        return datetime.datetime(rng.randint(1000, 9999), rng.randint(1, 12), rng.randint(1, 28),
                                 rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
    if kind == "array":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {"k%d <&>\r" % i: random_value(rng, depth + 1)
            for i in range(rng.randint(0, 4))}


class ReadCall(unittest.TestCase):
    def same(self, document):
        for builtin in (True, False):
            fast = _worker.read_canonical_call(document, builtin)
            self.assertIsNotNone(fast, document)
            self.assertEqual(fast, xmlrpc.client.loads(document, use_builtin_types=builtin),
                             document)

    def test_every_type_as_the_host_writes_it(self):
        self.same(call("sample.add", [2, 3]))
        self.same(call("echo", [None, True, False, 0, -2**31, 2**31, -2**63, 1.5, "", "x<&>\r\n",
                                b"", b"\x00\xff", datetime.datetime(2026, 12, 1, 23, 59, 60 - 1),
                                [], {}, [[{"a": [None]}]]]))
        self.same(call("a.b<c>&d", []))

    def test_random_values_read_as_loads_reads_them(self):
        rng = random.Random(1)
        for _ in range(2000):
            self.same(call("echo", [random_value(rng) for _ in range(rng.randint(0, 3))]))

    def test_calls_as_xmlrpc_client_writes_them(self):
        rng = random.Random(2)
        for _ in range(2000):
            params = [random_value(rng) for _ in range(rng.randint(0, 3))]
            # Its marshaller: no i8, no nil unless allowed, and a CR sent
            # raw (which loads reads as a newline: the fast reader declines).
            params = [p for p in params if "\\r" not in repr(p)]
            try:
                document = xmlrpc.client.dumps(tuple(params), "echo", allow_none=True).encode()
            except OverflowError:
                continue
            self.same(document)

    def test_other_documents_go_to_loads(self):
        for document in (
                xmlrpc.client.dumps(("a\rb",), "m").encode(),  # a raw CR
                xmlrpc.client.dumps((1,), "m", encoding="iso-8859-1").encode(),  # declared
                call("m", ["x"]).replace(b"<string>x</string>", b"x"),  # an untyped string
                call("m", ["a&b"]).replace(b"&amp;", b"&#x26;"),  # another character reference
                call("m", [1]).replace(b"<int>", b"<!-- c --><int>"),  # a comment
                call("m", ["x"]).replace(b">x<", b"><![CDATA[<x>]]><"),  # CDATA
                call("m", [[1]]).replace(b"<data>", b"<data>x"),  # text between elements
                call("m", [1]).replace(b"<value>", b"<value> "),  # a space in <value>
                call("m", ["", 1]).replace(b"<string></string>", b""),  # <value></value>
                call("m", ["", 1]).replace(b"<value><string></string></value>", b"<value/>"),
                call("m", [[]]).replace(b"<data></data>", b"<data/>")):
            self.assertIsNone(_worker.read_canonical_call(document, True), document)
            self.assertEqual(_worker.read_call(document, True),
                             xmlrpc.client.loads(document, use_builtin_types=True))

    def test_malformed_calls_fail_as_loads_fails(self):
        for document in (call("m", [1]).replace(b"<int>1</int>", b"<int>one</int>"),
                         call("m", [1])[:-20],
                         call("m", [True]).replace(b"<boolean>1", b"<boolean>2")):
            with self.assertRaises(Exception):
                _worker.read_call(document, True)


class CompactForm(unittest.TestCase):
    """The worker's answers to calls in marshal's form (src/worker/
    marshal.hpp): b"r" and the result, b"f" and (code, text), or an XML-RPC
    methodResponse for what marshal cannot carry or XML-RPC writes otherwise."""

    def setUp(self):
        def fail():
            raise xmlrpc.client.Fault(42, "x")

        def fail_big():
            raise xmlrpc.client.Fault(2**40, "x")

        self.worker = _worker.Worker({
            "echo": lambda v: v, "fail": fail, "fail_big": fail_big,
            "when": lambda: datetime.datetime(2026, 12, 6, 1, 2, 3),
            "binary": lambda: xmlrpc.client.Binary(b"z")})

    def answer(self, name, *params):
        return self.worker.answer(b"m" + marshal.dumps((name, params), 2))

    def test_results_and_faults_in_marshal_form(self):
        value = [1, 2**40, -0.0, "caf\xe9", b"\x00", None, True, {"a": (1, [])}]
        self.assertEqual(self.answer("echo", value), b"r" + marshal.dumps(value, 2))
        self.assertEqual(self.answer("fail"), b"f" + marshal.dumps((42, "x"), 2))
        self.assertEqual(self.answer("nosuch"), b"f" + marshal.dumps((-32601, "method not found"), 2))
        # What XML-RPC carries and marshal may not yet: the host reads and refuses it.
        self.assertEqual(self.answer("echo", {1, 2}), b"r" + marshal.dumps({1, 2}, 2))

    def test_what_marshal_cannot_carry_goes_as_xmlrpc(self):
        def xml(answer):
            self.assertTrue(answer.startswith(b"<?xml"), answer)
            return xmlrpc.client.loads(answer, use_builtin_types=True)

        self.assertEqual(xml(self.answer("when"))[0][0], datetime.datetime(2026, 12, 6, 1, 2, 3))
        for v in (float("inf"), [1.0, float("-inf")], {"x": float("nan")}):
            self.assertIn(b"inf" if "nan" not in repr(v) else b"nan", self.answer("echo", v))
        with self.assertRaises(xmlrpc.client.Fault) as f:
            xml(self.answer("fail_big"))
        self.assertEqual(f.exception.faultCode, 2**40)
        self.assertEqual(xml(self.answer("binary"))[0][0], b"z")

    def test_a_finite_float_near_the_pattern_stays_in_marshal_form(self):
        # NON_FINITE matches every exponent-all-ones double, and no finite one.
        for v in (1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 2.0**1023):
            self.assertEqual(self.answer("echo", v), b"r" + marshal.dumps(v, 2))


if __name__ == "__main__":
    unittest.main()

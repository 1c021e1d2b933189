#!/usr/bin/env python3
"""Writes the documents Python's xmlrpc.client sends and answers with.

Each case becomes <dir>/python-<name>.xml (exactly what xmlrpc.client.dumps
produces, encoded as ServerProxy / SimpleXMLRPCServer encode it) and
<dir>/python-<name>.expected (the outcome the rapidrpc parser must report, in
the format of tests/unit/xmlrpc/test_support.hpp). The expected text is
written by hand below, not computed, so that it is an independent check.

Run from this directory with Python 3.11: python3 make_python_cases.py
"""
import datetime
import xmlrpc.client as x

CALLS = [
    # name, method, params, expected params
    ("int", "examples.getStateName", (41,), "[41]"),
    ("int-limits", "m", (2147483647, -2147483648, 0, -1), "[2147483647, -2147483648, 0, -1]"),
    ("boolean", "m", (True, False), "[true, false]"),
    ("double", "m",
     (0.1, -1.5, 1e100, 5e-324, 1.7976931348623157e308, 0.0, 123456.0, 1e16, 2.5e-05),
     "[0.1, -1.5, 1e+100, 5e-324, 1.7976931348623157e+308, 0, 123456, 1e+16, 2.5e-05]"),
    ("string", "m", ("hello", "", "  spaced\n\tout  ", "<&>", "a]]>b", "'\""),
     r'''["hello", "", "  spaced\x0a\x09out  ", "<&>", "a]]>b", "'\""]'''),
    ("unicode", "m", ("h\u00e9llo", "\u65e5\u672c\u8a9e", "\U0001F600"),
     '["h\u00e9llo", "\u65e5\u672c\u8a9e", "\U0001F600"]'),
    ("base64", "m", (b"", b"hello", bytes(range(64))),
     "[bytes(), bytes(68656c6c6f), bytes(" + bytes(range(64)).hex() + ")]"),
    ("datetime", "m",
     (datetime.datetime(2024, 2, 29, 23, 59, 59), datetime.datetime(1, 1, 1, 0, 0, 0)),
     "[20240229T23:59:59, 00010101T00:00:00]"),
    ("nil", "m", (None,), "[nil]"),
    ("array", "m", ([1, "two", [3.5, []]],), '[[1, "two", [3.5, []]]]'),
    ("struct", "m", ({"b": 1, "a": {"nested": True}, "": "empty name", "<&>": None},),
     '[{"b": 1, "a": {"nested": true}, "": "empty name", "<&>": nil}]'),
    ("no-params", "system.listMethods", (), "[]"),
    ("method-name-chars", "a.b:c/d_E9", (1,), "[1]"),
]

ENCODED = [
    # encoding, the text sent, the text expected (written out, not computed)
    ("iso-8859-1", "caf\u00e9 \u00bf \u20ac", "caf\u00e9 \u00bf \u20ac"),
    ("latin-1", "d\u00e9j\u00e0 vu", "d\u00e9j\u00e0 vu"),
    ("windows-1252", "\u20ac \u201chi\u201d \u0153", "\u20ac \u201chi\u201d \u0153"),
    ("cp1252", "\u2026 \u00ff", "\u2026 \u00ff"),
    ("iso-8859-15", "\u20ac \u0160 \u0153 \u00bd", "\u20ac \u0160 \u0153 \u00bd"),
    ("koi8-r", "\u041f\u0440\u0438\u0432\u0435\u0442", "\u041f\u0440\u0438\u0432\u0435\u0442"),
    ("ascii", "na\u00efve \U0001F600", "na\u00efve \U0001F600"),
    ("utf8", "caf\u00e9 \U0001F600", "caf\u00e9 \U0001F600"),
    ("utf-16", "caf\u00e9 \u65e5\u672c \U0001F600", "caf\u00e9 \u65e5\u672c \U0001F600"),
    ("utf-16-le", "caf\u00e9 \U0001F600", "caf\u00e9 \U0001F600"),
    ("utf-16-be", "caf\u00e9 \U0001F600", "caf\u00e9 \U0001F600"),
]

RESPONSES = [
    # name, result (or Fault), expected
    ("string", "x", 'result "x"'),
    ("struct", {"sum": 12, "difference": -2}, 'result {"sum": 12, "difference": -2}'),
    ("array", [1, [2, [3]], {}], "result [1, [2, [3]], {}]"),
    ("nil", None, "result nil"),
    ("empty-string", "", 'result ""'),
    ("fault", x.Fault(4, "Too many <params>."), 'fault 4 "Too many <params>."'),
    ("fault-negative", x.Fault(-32601, "method not found"), 'fault -32601 "method not found"'),
]


def write(path, data, expected):
    with open(path + ".xml", "wb") as f:
        f.write(data)
    with open(path + ".expected", "w", encoding="utf-8") as f:
        f.write(expected + "\n")


def main():
    for name, method, params, expected in CALLS:
        doc = x.dumps(params, method, encoding="utf-8", allow_none=True)
        write("call/python-" + name, doc.encode("utf-8", "xmlcharrefreplace"),
              "method %s\nparams %s" % (method, expected))
    # A client created with encoding="us-ascii" declares it and sends
    # non-ASCII characters as character references.
    doc = x.dumps(("h\u00e9llo \U0001F600",), "m", encoding="us-ascii")
    write("call/python-us-ascii", doc.encode("us-ascii", "xmlcharrefreplace"),
          'method m\nparams ["h\u00e9llo \U0001F600"]')
    # Clients created with ServerProxy(url, encoding=E) declare E and encode
    # the document in it (non-ASCII characters it lacks as references).
    for encoding, text, expected_text in ENCODED:
        doc = x.dumps((text,), "echo", encoding=encoding)
        write("call/python-encoding-" + encoding, doc.encode(encoding, "xmlcharrefreplace"),
              'method echo\nparams ["%s"]' % expected_text)
    # A server created with SimpleXMLRPCServer(addr, encoding=E) answers so.
    for encoding, text, expected_text in ENCODED:
        doc = x.dumps((text,), methodresponse=True, encoding=encoding)
        write("response/python-encoding-" + encoding,
              doc.encode(encoding, "xmlcharrefreplace"), 'result "%s"' % expected_text)
    for name, result, expected in RESPONSES:
        params = result if isinstance(result, x.Fault) else (result,)
        doc = x.dumps(params, methodresponse=True, encoding="utf-8", allow_none=True)
        write("response/python-" + name, doc.encode("utf-8", "xmlcharrefreplace"), expected)


if __name__ == "__main__":
    main()

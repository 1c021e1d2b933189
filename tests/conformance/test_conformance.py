"""HTTP/1.1 conformance of rapidrpcd as an origin server (RFC 9112, RFC 9110).

One test per row of cases.CASES, named test_<case>, its RFC section in
every failure message; every response is also held to cases.RESPONSE_RULES.
The daemon is the real rapidrpcd on 127.0.0.1, spoken to over raw sockets.
README.md is generated from the table (`python3 test_conformance.py
--readme > README.md`), and test_readme_is_the_table keeps it so.

Run: ctest -R '^conformance\\.' or, from this directory,
     RAPIDRPCD=../../build/bin/rapidrpcd python3 -m unittest -v test_conformance
"""

import base64
import email.utils
import hashlib
import os
import re
import socket
import sys
import tempfile
import time
import unittest
import xmlrpc.client

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import cases  # noqa: E402
import harness  # noqa: E402
from cases import BODY, CASES, RESPONSE_RULES  # noqa: E402

# Every wait on a socket; a close is seen at once, so only a failing case
# waits this long.
TIMEOUT = 5.0

STATUS_LINE = re.compile(rb"HTTP/1\.1 (\d{3}) [\x20-\x7e]*")
IMF_FIXDATE = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} "
                         r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} "
                         r"\d{2}:\d{2}:\d{2} GMT")


class Response:
    def __init__(self, status, status_line, fields, body):
        self.status = status
        self.status_line = status_line
        self.fields = fields  # [(name, value)] as received
        self.body = body

    def all(self, name):
        return [v for k, v in self.fields if k.lower() == name.lower()]

    def get(self, name):
        values = self.all(name)
        return values[0] if values else None

    def connection_tokens(self):
        return {t.strip().lower() for v in self.all("Connection") for t in v.split(",")}

    def __repr__(self):
        return f"<{self.status_line!r} {self.fields} body={self.body[:200]!r}>"


class Connection:
    """One raw connection. Responses are read by their Content-Length (the
    daemon frames every response so, cases.RESPONSE_RULES), the head alone
    for a response to HEAD or a 1xx."""

    def __init__(self, port):
        self.sock = socket.create_connection((harness.HOST, port), timeout=TIMEOUT)
        self.buf = b""
        self.eof = False

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        try:
            data = self.sock.recv(1 << 16)
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
        self.buf += data

    def read_response(self, head_only=False):
        while b"\r\n\r\n" not in self.buf:
            if self.eof:
                raise AssertionError(f"the connection ended inside a response head: {self.buf!r}")
            self._fill()
        end = self.buf.index(b"\r\n\r\n")
        lines = self.buf[:end].split(b"\r\n")
        m = STATUS_LINE.fullmatch(lines[0])
        if not m:
            raise AssertionError(f"not an HTTP/1.1 status line: {lines[0]!r}")
        status = int(m.group(1))
        fields = []
        for line in lines[1:]:
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or name != name.strip():
                raise AssertionError(f"malformed response field line: {line!r}")
            fields.append((name, value.strip()))
        self.buf = self.buf[end + 4:]
        r = Response(status, lines[0], fields, b"")
        if head_only or status < 200 or status == 204:
            return r
        lengths = r.all("Content-Length")
        if len(lengths) != 1 or not lengths[0].isdigit():
            raise AssertionError(f"a response without one Content-Length (9110 8.6): {r}")
        n = int(lengths[0])
        while len(self.buf) < n:
            if self.eof:
                raise AssertionError(f"the connection ended after {len(self.buf)} of {n} "
                                     f"content bytes: {r}")
            self._fill()
        r.body, self.buf = self.buf[:n], self.buf[n:]
        return r

    def closes(self):
        """True if the server ends the connection with nothing more sent."""
        while not self.eof:
            try:
                self._fill()
            except socket.timeout:
                return False
        return True

    def close(self):
        self.sock.close()


def check_response(test, case, response, http10):
    """cases.RESPONSE_RULES, on one response."""
    where = f"[{case.name}] {response}"
    if 200 <= response.status < 500:
        dates = response.all("Date")
        test.assertEqual(len(dates), 1, f"9110 6.6.1: one Date on a {response.status}: {where}")
        test.assertRegex(dates[0], IMF_FIXDATE, f"9110 5.6.7: Date is an IMF-fixdate: {where}")
        when = email.utils.parsedate_to_datetime(dates[0]).timestamp()
        test.assertLess(abs(when - time.time()), 60, f"9110 6.6.1: Date is the clock's: {where}")
    if response.status < 200 or response.status == 204:
        test.assertEqual(response.all("Content-Length"), [],
                         f"9110 8.6: no Content-Length in a {response.status}: {where}")
    if response.status == 401:
        test.assertTrue(response.get("WWW-Authenticate"),
                        f"9110 11.6.1: a 401 MUST carry WWW-Authenticate: {where}")
    if response.status == 405:
        test.assertTrue(response.get("Allow"), f"9110 15.5.6: a 405 MUST carry Allow: {where}")
    if http10:
        test.assertGreaterEqual(response.status, 200, f"9110 15.2: no 1xx to HTTP/1.0: {where}")
        test.assertIsNone(response.get("Transfer-Encoding"),
                          f"9112 6.1: no Transfer-Encoding to HTTP/1.0: {where}")


def check_result(test, case, response, expected):
    """A 200's body is the call's methodResponse, with `expected`."""
    try:
        params, _ = xmlrpc.client.loads(response.body)
    except Exception as err:  # noqa: BLE001 - the message says what came
        test.fail(f"[{case.name}] {case.section}: not a methodResponse ({err}): {response}")
    test.assertEqual(params, (expected,),
                     f"[{case.name}] {case.section}: the answer is another request's: {response}")


# -- exchanges other than "send the bytes, read the responses" -------------------


def continue_then_body(test, case, conn):
    """The head alone; the 100 (or a final status) must come before the body
    is sent (9110 10.1.1: the server MUST NOT wait for the content)."""
    head, body = case.send.split(b"\r\n\r\n", 1)
    conn.send(head + b"\r\n\r\n")
    first = conn.read_response()
    if first.status != 100:
        return [first]
    conn.send(body)
    return [first, conn.read_response()]


def pause_then_body(test, case, conn):
    """The head, a pause in which a 1xx would be sent, then the body."""
    head, body = case.send.split(b"\r\n\r\n", 1)
    conn.send(head + b"\r\n\r\n")
    time.sleep(0.3)
    conn.send(body)
    return [conn.read_response()]


def head_like_get(test, case, conn):
    """GET and HEAD of the API page (a browser's Accept), on one connection:
    the same fields but Date, and no content after the HEAD's head."""
    def ask(method):
        return cases.request(f"{method} /RPC2 HTTP/1.1", "Host: 127.0.0.1",
                             "Accept: text/html", body=b"", length=False)
    conn.send(ask("GET") + ask("HEAD"))
    get = conn.read_response()
    head = conn.read_response(head_only=True)
    strip = [(k.lower(), v) for k, v in get.fields if k.lower() != "date"]
    test.assertEqual([(k.lower(), v) for k, v in head.fields if k.lower() != "date"], strip,
                     f"[{case.name}] {case.section}: HEAD's fields are GET's")
    test.assertEqual(head.get("Content-Length"), str(len(get.body)),
                     f"[{case.name}] 9110 8.6: HEAD's Content-Length is GET's content length")
    return [get, head]


def pipelined(test, case, conn):
    conn.send(case.send)
    responses = [conn.read_response() for _ in range(3)]
    for response, expected in zip(responses, (42, 2, 4)):
        check_result(test, case, response, expected)
    return responses


RUNS = {f.__name__: f for f in (continue_then_body, pause_then_body, head_like_get, pipelined)}


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


class ConformanceCase(harness.DaemonTestCase):
    """Runs cases on a new connection each to the class's daemon."""

    # The normal call that shows a connection open after a case.
    follow_up = cases.post()

    def run_case(self, case):
        msg = f"[{case.name}] RFC {case.section}: {case.rule}"
        http10 = b" HTTP/1.0\r\n" in case.send.split(b"\r\n", 1)[0] + b"\r\n"
        conn = Connection(self.daemon.port)
        try:
            if case.run:
                responses = RUNS[case.run](self, case, conn)
            else:
                conn.send(case.send)
                expected = as_tuple(case.expect)
                responses = [conn.read_response(head_only=i in case.head)
                             for i in range(len(expected))]
            statuses = tuple(r.status for r in responses)
            expected = tuple(e if isinstance(e, set) else {e} for e in as_tuple(case.expect))
            self.assertEqual(len(statuses), len(expected), f"{msg}: responses {responses}")
            for got, allowed in zip(statuses, expected):
                self.assertIn(got, allowed, f"{msg}: responses {responses}")
            for r in responses:
                check_response(self, case, r, http10)
            for r in responses[:-1]:
                self.assertNotIn("close", r.connection_tokens(),
                                 f"{msg}: 9112 9.6: more responses after a close: {responses}")
            last = responses[-1]
            if case.result is not None and case.run != "pipelined" and last.status == 200:
                check_result(self, case, last, case.result)
            if case.after == "close" or "close" in last.connection_tokens():
                self.assertTrue(conn.closes(),
                                f"{msg}: 9112 9.6: the connection stays open after {last}")
                self.assertEqual(conn.buf, b"", f"{msg}: bytes after the last response "
                                 f"(a request behind it was answered)")
            if case.after == "open":
                self.assertNotIn("close", last.connection_tokens(), f"{msg}: {last}")
                self.assertEqual(conn.buf, b"", f"{msg}: bytes after the last response")
                conn.send(self.follow_up)
                follow = conn.read_response()
                self.assertEqual(follow.status, 200, f"{msg}: the next request on the "
                                 f"connection: {follow}")
                check_result(self, case, follow, 42)
        finally:
            conn.close()


class Conformance(ConformanceCase):
    """The cases against rapidrpcd with its defaults."""

    daemon_args = ()


class AuthConformance(ConformanceCase):
    """The cases against rapidrpcd requiring Basic credentials."""

    @classmethod
    def setUpClass(cls):
        cls.users = tempfile.NamedTemporaryFile("w", suffix=".users")
        salt = os.urandom(16)
        key = hashlib.pbkdf2_hmac("sha256", cases.PASSWORD.encode(), salt, 1000)
        b64 = lambda b: base64.b64encode(b).decode().rstrip("=").replace("+", ".")  # noqa: E731
        cls.users.write(f"{cases.USER}:$pbkdf2-sha256$1000${b64(salt)}${b64(key)}\n")
        cls.users.flush()
        cls.daemon_args = ("--auth-file", cls.users.name)
        cls.follow_up = cases.post("Authorization: Basic " + cases.CREDENTIALS)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.users.close()


def _case_test(case):
    def test(self):
        self.run_case(case)
    test.__name__ = f"test_{case.name}"
    test.__doc__ = f"RFC {case.section}: {case.rule}"
    return test


CLASSES = {"default": Conformance, "auth": AuthConformance}

for _case in CASES:
    _class = CLASSES[_case.daemon]
    assert not hasattr(_class, f"test_{_case.name}"), f"two cases named {_case.name}"
    assert _case.after in ("open", "close"), _case.name
    assert _case.run is None or _case.run in RUNS, _case.name
    setattr(_class, f"test_{_case.name}", _case_test(_case))


# -- README.md, from the table -----------------------------------------------------------

README_HEAD = """\
# HTTP/1.1 conformance

`test_conformance.py` holds rapidrpcd, serving on 127.0.0.1, to the
server-side requirements of RFC 9112 (HTTP/1.1) and RFC 9110 (HTTP
Semantics), over raw sockets: one test per row below (`test_<case>`), each
on a new connection, each failure naming its section. Where the RFC leaves
a choice, or where rapidrpcd chooses to differ from a SHOULD, the last
column says what it does; docs/limits.md ("HTTP") says why.

```
ctest --test-dir build -L conformance                 # a few seconds
RAPIDRPCD=../../build/bin/rapidrpcd python3 -m unittest -v test_conformance   # from here
```

This file is generated from the table in `cases.py`:
`python3 test_conformance.py --readme > README.md` (the test
`test_readme_is_the_table` fails when they differ).

After the responses, the connection is either `close`d by the server (and
nothing sent behind the request is answered: a request appended to it would
be answered with another result) or stays `open` (a normal call sent next
on it is answered with its own result).

Every response of every case is also held to these rules:

| RFC | rule |
|---|---|
"""


def readme():
    out = [README_HEAD]
    for section, rule in RESPONSE_RULES:
        out.append(f"| {section} | {rule} |\n")
    out.append("\n## Cases\n\n| case | RFC | requirement | expected | after | chosen |\n"
               "|---|---|---|---|---|---|\n")
    for c in CASES:
        expect = ", ".join("/".join(map(str, sorted(e))) if isinstance(e, set) else str(e)
                           for e in as_tuple(c.expect))
        rule = c.rule.replace("|", "\\|")
        out.append(f"| `{c.name}` | {c.section} | {rule} | {expect} | {c.after} | "
                   f"{c.choice or ''} |\n")
    return "".join(out)


class Readme(unittest.TestCase):
    def test_readme_is_the_table(self):
        with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
            text = f.read()
        for c in CASES:
            self.assertTrue(f"`{c.name}`" in text, f"README.md does not list {c.name}")
        self.assertEqual(text, readme(), "README.md is not the table of cases.py: "
                         "python3 test_conformance.py --readme > README.md")


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        sys.stdout.write(readme())
    else:
        harness.main()

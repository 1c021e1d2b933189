"""The API page: a browser's GET (Accept: text/html) on a request path gets
an HTML page of the methods; every other GET keeps 405, HEAD gets the head
alone, keep-alive, gzip, access control and the access log hold as for
calls, and --no-api-page and --no-jsonrpc change what is served.
(test_api_page_browser.py drives the page in headless Chromium.)"""

import base64
import gzip
import html
import os
import re
import shutil
import subprocess
import tempfile
import time

import harness
from harness import (DaemonTestCase, RawClient, call_body, exchange, http_request,
                     parse_result, skip_in_modes)

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
METHOD_NAME_RE = re.compile(r'<code class="method-name">([^<]*)</code>')

ONE_REQUEST_PER_CONNECTION = skip_in_modes(
    harness.CLOSE_AFTER_RESPONSE_MODES,
    "one request per connection: a second request on the same connection is not answered")


def page_request(method="GET", path="/RPC2", accept=BROWSER_ACCEPT, headers=()):
    fields = [("Accept", accept)] if accept is not None else []
    return http_request(None, path=path, method=method, content_length=False,
                        headers=fields + list(headers))


def listed_methods(body):
    """The method names the page lists, in its order, unescaped."""
    return [html.unescape(n) for n in METHOD_NAME_RE.findall(body.decode("utf-8"))]


def read_head(client):
    """(status, {lower-case name: value}) of a response that has a head and
    no body (HEAD), taken off `client`'s buffer."""
    while b"\r\n\r\n" not in client.buf:
        if client.eof:
            raise AssertionError(f"connection closed inside a head: {client.buf!r}")
        client._fill()
    end = client.buf.index(b"\r\n\r\n")
    lines = client.buf[:end].decode("latin-1").split("\r\n")
    client.buf = client.buf[end + 4:]
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ")[1]), fields


class ApiPage(DaemonTestCase):
    daemon_args = ("--enable-test-methods",)

    def test_browser_get_gets_the_page_of_every_method(self):
        resp = exchange(self.daemon, page_request())
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(resp.header("Content-Type"), "text/html; charset=utf-8")
        self.assertEqual(int(resp.header("Content-Length")), len(resp.body))
        self.assertEqual(resp.header("X-Content-Type-Options"), "nosniff")
        self.assertTrue(resp.header("Content-Security-Policy", "").startswith("default-src 'none'"),
                        resp.headers)
        self.assertTrue(resp.body.startswith(b"<!DOCTYPE html>"), resp.body[:100])
        with self.proxy() as p:
            self.assertEqual(listed_methods(resp.body), p.system.listMethods())

    def test_markup_in_help_is_escaped(self):
        body = exchange(self.daemon, page_request()).body.decode("utf-8")
        with self.proxy() as p:
            help_text = p.system.methodHelp("test.markup")
        self.assertIn("<script>", help_text)
        self.assertIn(html.escape(help_text, quote=True).replace("&#x27;", "&#39;"), body)
        self.assertNotIn(help_text, body)
        self.assertEqual(body.count("<script"), 1, "only the page's own script")

    def test_every_request_path_serves_it(self):
        for path in ("/RPC2", "/", "/jsonrpc", "/RPC2?x=1"):
            with self.subTest(path=path):
                self.assertEqual(exchange(self.daemon, page_request(path=path)).status, 200)
        self.assertEqual(exchange(self.daemon, page_request(path="/nope")).status, 404)

    def test_other_gets_keep_405(self):
        for accept in (None, "*/*", "text/xml", "application/json", "text/html;q=0"):
            with self.subTest(accept=accept):
                resp = exchange(self.daemon, page_request(accept=accept))
                self.assertEqual(resp.status, 405, resp)
                self.assertEqual(resp.header("Allow"), "POST")
        for method in ("PUT", "DELETE", "OPTIONS"):
            with self.subTest(method=method):
                self.assertEqual(exchange(self.daemon, page_request(method=method)).status, 405)

    def test_head_gets_the_head_without_a_body(self):
        length = len(exchange(self.daemon, page_request()).body)
        with RawClient(self.daemon) as c:
            c.send(page_request(method="HEAD"))
            status, fields = read_head(c)
            self.assertEqual(status, 200)
            self.assertEqual(fields["content-type"], "text/html; charset=utf-8")
            self.assertEqual(int(fields["content-length"]), length)
            if harness.MODE in harness.CLOSE_AFTER_RESPONSE_MODES:
                self.assertTrue(c.at_eof(), "no body, then the close")
            else:
                # The next response follows at once: no body came between.
                c.send(http_request(call_body("sample.add", 2, 3)))
                resp = c.read_response()
                self.assertEqual(parse_result(resp.body), 5)

    @ONE_REQUEST_PER_CONNECTION
    def test_keep_alive_page_then_call_then_page(self):
        with RawClient(self.daemon) as c:
            c.send(page_request())
            first = c.read_response()
            self.assertEqual(first.status, 200)
            self.assertNotIn("close", first.connection_tokens())
            c.send(http_request(call_body("sample.add", 3, 5)))
            self.assertEqual(parse_result(c.read_response().body), 8)
            c.send(page_request(headers=[("Connection", "close")]))
            last = c.read_response()
            self.assertEqual(last.body, first.body)
            self.assertIn("close", last.connection_tokens())
            self.assertTrue(c.at_eof())

    def test_gzip_when_accepted(self):
        plain = exchange(self.daemon, page_request()).body
        resp = exchange(self.daemon, page_request(headers=[("Accept-Encoding", "gzip")]))
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.header("Content-Encoding"), "gzip")
        self.assertLess(len(resp.body), len(plain))
        self.assertEqual(gzip.decompress(resp.body), plain)

    def test_a_call_from_the_page_is_json_rpc_on_the_same_path(self):
        # What the page's script sends (same path, application/json).
        body = b'{"jsonrpc": "2.0", "method": "sample.add", "params": [3, 5], "id": 1}'
        resp = exchange(self.daemon, http_request(body, headers=[
            ("Content-Type", "application/json"), ("Accept", "application/json")]))
        self.assertEqual(resp.status, 200)
        self.assertIn(b'"result":8', resp.body.replace(b" ", b""))


class NoApiPage(DaemonTestCase):
    daemon_args = ("--no-api-page",)

    def test_browser_get_gets_405(self):
        resp = exchange(self.daemon, page_request())
        self.assertEqual(resp.status, 405, resp)
        self.assertEqual(resp.header("Allow"), "POST")
        with RawClient(self.daemon) as c:
            c.send(page_request(method="HEAD"))
            self.assertEqual(read_head(c)[0], 405)


    @ONE_REQUEST_PER_CONNECTION
    def test_head_error_has_no_body_and_the_connection_goes_on(self):
        # A HEAD answered with an error (405 here, 404 below) carries no
        # body: the next response on the connection starts where its head ends.
        with RawClient(self.daemon) as c:
            c.send(page_request(method="HEAD"))
            status, fields = read_head(c)
            self.assertEqual(status, 405)
            self.assertEqual(fields.get("content-length"), str(len("Method Not Allowed\n")))
            c.send(http_request(None, path="/nowhere", method="HEAD", content_length=False))
            self.assertEqual(read_head(c)[0], 404)
            c.send(http_request(call_body("sample.add", 3, 5)))
            resp = c.read_response()
            self.assertEqual(resp.status, 200, resp)
            self.assertEqual(parse_result(resp.body), 8)


class NoJsonRpc(DaemonTestCase):
    daemon_args = ("--no-jsonrpc",)

    def test_page_lists_methods_without_a_form(self):
        resp = exchange(self.daemon, page_request())
        self.assertEqual(resp.status, 200)
        body = resp.body.decode("utf-8")
        self.assertNotIn("<form", body)
        self.assertNotIn("<script", body)
        self.assertIn("Calls from this page need JSON-RPC", body)
        with self.proxy() as p:
            self.assertEqual(listed_methods(resp.body), p.system.listMethods())


class AccessControlAndLog(DaemonTestCase):
    """The page is behind the same checks as calls, and logged like them."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rapidrpc-api-page-")
        users = os.path.join(cls.dir, "users")
        hashed = subprocess.run([harness.daemon_path(), "--hash-password", "alice",
                                 "--hash-iterations", "1000"], input=b"wonderland\n",
                                capture_output=True, timeout=30, check=True).stdout
        with open(users, "wb") as f:
            f.write(hashed)
        cls.log = os.path.join(cls.dir, "access.log")
        cls.daemon_args = ("--auth-file", users, "--access-log", cls.log)
        try:
            super().setUpClass()
        except BaseException:
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.dir, ignore_errors=True)

    def test_without_credentials_401_with_them_the_page_and_a_log_line(self):
        resp = exchange(self.daemon, page_request())
        self.assertEqual(resp.status, 401, resp)
        self.assertNotIn(b"method-name", resp.body)
        auth = "Basic " + base64.b64encode(b"alice:wonderland").decode()
        resp = exchange(self.daemon, page_request(headers=[("Authorization", auth)]))
        self.assertEqual(resp.status, 200, resp)
        line_re = re.compile(rf' alice - 200 0 0 {len(resp.body)} \d+$')
        deadline = time.monotonic() + 10
        lines = []
        while time.monotonic() < deadline:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            if any(line_re.search(line) for line in lines):
                break
            time.sleep(0.05)
        self.assertTrue(any(line_re.search(line) for line in lines), lines)


if __name__ == "__main__":
    harness.main()

"""Requests in the encodings real clients send at their default settings,
against the real daemon: Python's ServerProxy(url, encoding=E) for the
single-byte encodings, UTF-8 spelled "utf8" and UTF-16; PHP's xmlrpc
extension at its defaults (it declares iso-8859-1) and with raw Latin-1
bytes; UTF-16 documents with and without a byte order mark; a Latin-1
method name. Every value reaches the method as the same text, and the
answer (UTF-8) reads back to it. Refusals (bytes that are no character of
the declared encoding, names nothing reads) are in tests/hostile/test_xml.py.

PHP comes from scripts/setup.sh --tests (php-cli, php-xmlrpc)."""

import shutil
import subprocess
import xmlrpc.client

import harness
from harness import DaemonTestCase, exchange, http_request, parse_fault, parse_result

# Each encoding with text it can carry in its own bytes, and characters it
# cannot (Python sends those as character references).
TEXTS = {
    "iso-8859-1": "caf\u00e9 \u00bf\u00e0 \u00ff",
    "latin-1": "d\u00e9j\u00e0 vu \u20ac",
    "windows-1252": "\u20ac \u201cquoted\u201d \u0153uvre \u2026",
    "cp1252": "na\u00efve \u2122",
    "iso-8859-15": "\u20ac \u0160 \u0153 \u0178 \u00bd",
    "koi8-r": "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440",
    "ascii": "caf\u00e9 \U0001F600",
    "us-ascii": "\u65e5\u672c",
    "utf8": "caf\u00e9 \U0001F600 \u65e5\u672c",
    "utf-16": "caf\u00e9 \U0001F600 \u65e5\u672c",
}

PHP = shutil.which("php") or "/usr/bin/php"

# Calls echo at PHP's defaults, or with `escaping` => markup (raw Latin-1
# bytes on the wire), posting with a stream context; prints the request
# sent and the decoded answer, in hex.
PHP_ECHO = r'''
$url = $argv[1];
$text = hex2bin($argv[2]);
$options = $argv[3] === "raw" ? ["escaping" => "markup"] : [];
$request = xmlrpc_encode_request("echo", [$text], $options);
$context = stream_context_create(["http" => [
    "method" => "POST", "header" => "Content-Type: text/xml", "content" => $request,
    "timeout" => 30]]);
$reply = file_get_contents($url, false, $context);
if ($reply === false) { fwrite(STDERR, "no reply\n"); exit(1); }
$value = xmlrpc_decode($reply);
if (is_array($value) && xmlrpc_is_fault($value)) {
    fwrite(STDERR, "fault " . $value["faultCode"] . " " . $value["faultString"] . "\n"); exit(1);
}
echo bin2hex($request), "\n", bin2hex($value), "\n";
'''


class PythonClients(DaemonTestCase):

    def test_server_proxy_in_each_encoding_echoes_the_text(self):
        for encoding, text in TEXTS.items():
            with self.subTest(encoding=encoding):
                proxy = xmlrpc.client.ServerProxy(
                    self.url, encoding=encoding,
                    transport=harness.TimeoutTransport(use_builtin_types=True))
                with proxy:
                    self.assertEqual(proxy.echo(text), text)
                    self.assertEqual(proxy.echo({"cl\u00e9": [text]}), {"cl\u00e9": [text]})

    def test_the_request_is_really_in_that_encoding(self):
        # What ServerProxy sends, byte for byte, posted raw: the bytes of the
        # text are those of the encoding, not UTF-8.
        for encoding, text, raw in (("iso-8859-1", "caf\u00e9", b"caf\xe9"),
                                    ("windows-1252", "\u20ac", b"\x80"),
                                    ("koi8-r", "\u041f", b"\xf0")):
            with self.subTest(encoding=encoding):
                body = xmlrpc.client.dumps((text,), "echo", encoding=encoding).encode(encoding)
                self.assertIn(raw, body)
                resp = exchange(self.daemon, http_request(body))
                self.assertEqual(resp.status, 200, resp)
                self.assertTrue(resp.body.startswith(b'<?xml version="1.0"?>'), resp)
                self.assertIn(text.encode("utf-8"), resp.body)  # the answer is UTF-8
                self.assertEqual(parse_result(resp.body), text)

    def test_utf16_with_and_without_a_byte_order_mark(self):
        text = "caf\u00e9 \U0001F600"
        for codec, declared in (("utf-16", "utf-16"), ("utf-16-le", "UTF-16LE"),
                                ("utf-16-be", "UTF-16BE"), ("utf-16-le", None),
                                ("utf-16-be", None)):
            with self.subTest(codec=codec, declared=declared):
                doc = xmlrpc.client.dumps((text,), "echo", encoding=declared or "utf-8")
                if declared is None:
                    doc = doc.split("?>", 1)[1]  # no XML declaration at all
                resp = exchange(self.daemon, http_request(doc.encode(codec)))
                self.assertEqual(resp.status, 200, resp)
                self.assertEqual(parse_result(resp.body), text)

    def test_a_latin1_method_name_is_judged_as_its_utf8_spelling(self):
        # Method names are A-Z a-z 0-9 _ . : / in any encoding (docs/limits.md):
        # "caf\xe9" in Latin-1 gets the answer its UTF-8 spelling gets, not
        # an encoding error.
        latin1 = xmlrpc.client.dumps((1,), "caf\u00e9", encoding="iso-8859-1").encode("iso-8859-1")
        utf8 = xmlrpc.client.dumps((1,), "caf\u00e9", encoding="utf-8").encode("utf-8")
        self.assertIn(b"caf\xe9", latin1)
        faults = []
        for body in (latin1, utf8):
            resp = exchange(self.daemon, http_request(body))
            self.assertEqual(resp.status, 200, resp)
            faults.append(parse_fault(resp.body))
        self.assertEqual(faults[0].faultCode, -32600)
        self.assertEqual((faults[0].faultCode, faults[0].faultString),
                         (faults[1].faultCode, faults[1].faultString))
        # A name that is allowed, in a Latin-1 document, reaches dispatch.
        body = xmlrpc.client.dumps((), "no.such_method", encoding="iso-8859-1").encode("latin-1")
        fault = parse_fault(exchange(self.daemon, http_request(body)).body)
        self.assertEqual(fault.faultCode, -32601, fault.faultString)


class PhpClient(DaemonTestCase):

    def php_echo(self, text_latin1, mode):
        self.assertTrue(shutil.which(PHP), "php is not installed (scripts/setup.sh --tests)")
        out = subprocess.run([PHP, "-r", PHP_ECHO, self.url, text_latin1.hex(), mode],
                             capture_output=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr.decode(errors="replace"))
        request_hex, value_hex = out.stdout.decode().split()
        return bytes.fromhex(request_hex), bytes.fromhex(value_hex)

    def test_xmlrpc_encode_request_at_its_defaults(self):
        # PHP's strings are bytes; its xmlrpc extension takes them as
        # Latin-1, declares encoding="iso-8859-1" and sends every non-ASCII
        # character as a reference.
        request, value = self.php_echo(b"caf\xe9 \xbf\xe0", "default")
        self.assertIn(b'encoding="iso-8859-1"', request)
        self.assertIn(b"caf&#233;", request)
        # The method saw "café ¿à" (echo answers it in UTF-8), and
        # xmlrpc_decode gives PHP its Latin-1 bytes back.
        self.assertEqual(value, b"caf\xe9 \xbf\xe0")

    def test_raw_latin1_bytes(self):
        request, value = self.php_echo(b"d\xe9j\xe0 \xff", "raw")
        self.assertIn(b'encoding="iso-8859-1"', request)
        self.assertIn(b"d\xe9j\xe0 \xff", request)  # Latin-1 bytes on the wire
        self.assertEqual(value, b"d\xe9j\xe0 \xff")

    def test_what_the_method_sees_is_the_decoded_text(self):
        # The same request posted from here: the answer is the UTF-8 text.
        request, _ = self.php_echo(b"\xe9t\xe9", "raw")
        resp = exchange(self.daemon, http_request(request))
        self.assertEqual(parse_result(resp.body), "\u00e9t\u00e9")


if __name__ == "__main__":
    harness.main()

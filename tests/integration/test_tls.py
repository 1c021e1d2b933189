"""HTTPS: rapidrpcd with --tls-cert/--tls-key, against Python's ssl client,
with certificates made at test time (tls_pki.py)."""

import http.client
import os
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import unittest
import warnings
import xmlrpc.client

import harness
from harness import (HOST, RAW_TIMEOUT, Daemon, DaemonTestCase, RawClient, call_body, daemon_path,
                     http_request, main, parse_result, skip_in_modes)
from tls_pki import OPENSSL, TlsDaemon, client_context, make_test_pki

@unittest.skipIf(OPENSSL is None, "the openssl command line is not installed")
class Tls(TlsDaemon, DaemonTestCase):
    """One HTTPS daemon for the class."""


    def https_url(self, host=HOST):
        return f"https://{host}:{self.daemon.port}/RPC2"

    def https_proxy(self, context=None, host=HOST):
        return xmlrpc.client.ServerProxy(
            self.https_url(host), context=context or client_context(self.pki["ca"]),
            allow_none=True, use_builtin_types=True)

    def assert_still_serving(self):
        self.daemon.assert_alive()
        with self.https_proxy() as p:
            self.assertEqual(p.sample.add(20, 22), 42, "a normal call after the previous one failed")

    def tls_connection(self, host=HOST, context=None):
        return http.client.HTTPSConnection(host, self.daemon.port, timeout=RAW_TIMEOUT,
                                           context=context or client_context(self.pki["ca"]))

    # -- calls -------------------------------------------------------------------

    def test_start_up_line_says_https(self):
        lines = b"".join(self.daemon._stdout_lines)
        self.assertIn(b"(https, mode ", lines)

    def test_sample_add(self):
        with self.https_proxy() as p:
            self.assertEqual(p.sample.add(3, 5), 8)

    def test_echo_round_trip(self):
        value = {"text": "caf\u00e9 <&> \u4e2d\u6587", "list": [1, -2, 3.5, True, None],
                 "nested": {"deep": [[{"x": "y"}]]}, "big": "z" * 300_000,
                 "bytes": b"\x00\x01\xff" * 1000}
        with self.https_proxy() as p:
            self.assertEqual(p.echo(value), value)

    def test_host_name_localhost_verifies(self):
        try:
            socket.getaddrinfo("localhost", self.daemon.port)
        except socket.gaierror:
            self.skipTest("Python cannot resolve localhost here (no /etc/hosts)")
        with self.https_proxy(host="localhost") as p:
            self.assertEqual(p.sample.add(1, 1), 2)

    @skip_in_modes("sequential", "answers one request per connection")
    def test_keep_alive_reuses_the_tls_connection(self):
        conn = self.tls_connection()
        try:
            sockets = set()
            for i in range(5):
                conn.request("POST", "/RPC2", body=call_body("sample.add", i, 1),
                             headers={"Content-Type": "text/xml"})
                resp = conn.getresponse()
                self.assertEqual(resp.status, 200)
                self.assertEqual(parse_result(resp.read()), i + 1)
                sockets.add(id(conn.sock))
                self.assertIsNotNone(conn.sock, "the server closed the connection")
            self.assertEqual(len(sockets), 1, "a new connection was made")
        finally:
            conn.close()

    @skip_in_modes("sequential", "answers one request per connection")
    def test_a_client_that_half_closes_after_its_request_sees_the_close_at_once(self):
        # As test_http's: the second request's records and the end of the
        # stream in one segment, which one read of the socket takes whole.
        # An idle connection parks after a second: the close must come well
        # before that.
        bound_s = 0.9
        with RawClient(self.daemon) as c:
            c.sock = client_context(self.pki["ca"]).wrap_socket(c.sock, server_hostname=HOST)
            c.send(http_request(call_body("sample.add", 1, 2)))
            self.assertEqual(parse_result(c.read_response().body), 3)
            c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
            c.send(http_request(call_body("sample.add", 1, 2)))
            # Not c.sock.shutdown(), which would drop the TLS session first.
            with socket.socket(fileno=os.dup(c.sock.fileno())) as same:
                same.shutdown(socket.SHUT_WR)
            self.assertEqual(parse_result(c.read_response().body), 3)
            self.assertTrue(c.at_eof(bound_s), f"no close within {bound_s} s of the answer")

    @skip_in_modes("sequential", "answers one request per connection")
    def test_pipelined_requests_in_one_write(self):
        with socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT) as raw, \
                client_context(self.pki["ca"]).wrap_socket(raw, server_hostname=HOST) as s:
            one = call_body("sample.add", 1, 2)
            head = (f"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                    f"Content-Length: {len(one)}\r\n\r\n").encode()
            last = (f"POST /RPC2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    f"Content-Type: text/xml\r\nContent-Length: {len(one)}\r\n\r\n").encode()
            s.sendall(head + one + head + one + last + one)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            self.assertEqual(data.count(b"HTTP/1.1 200 OK"), 3, data[:500])

    def test_a_large_reply_to_a_slow_reader(self):
        # The reply outgrows the socket buffers: the server's TLS writes block
        # and resume, record by record, until the client reads it all.
        big = "r" * (14 * 1024 * 1024)
        body = call_body("echo", big)
        with socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT) as raw, \
                client_context(self.pki["ca"]).wrap_socket(raw, server_hostname=HOST) as s:
            s.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                      b"Connection: close\r\nContent-Length: " + str(len(body)).encode() +
                      b"\r\n\r\n" + body)
            time.sleep(1.0)
            data = bytearray()
            while True:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
        head, _, payload = bytes(data).partition(b"\r\n\r\n")
        self.assertIn(b"200 OK", head)
        self.assertEqual(parse_result(payload), big)

    # -- what must fail ------------------------------------------------------------

    def test_plain_http_to_the_tls_port_fails_cleanly(self):
        with socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT) as s:
            body = call_body("sample.add", 1, 2)
            s.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                      b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            received = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    received += chunk
            except ConnectionResetError:
                pass
            # No HTTP answer (at most a TLS alert record), and the connection ends.
            self.assertFalse(received.startswith(b"HTTP/"), received[:200])
        self.assert_still_serving()

    def test_garbage_handshake_fails_cleanly(self):
        with socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT) as s:
            s.sendall(b"\x16\x03\x01\x00\x05hello" + bytes(range(256)))
            try:
                while s.recv(4096):
                    pass
            except ConnectionResetError:
                pass
        self.assert_still_serving()

    def test_tls_1_1_is_refused(self):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_1
            ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # let this client offer TLS 1.1 at all
        with socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT) as raw:
            with self.assertRaises(ssl.SSLError) as cm:
                ctx.wrap_socket(raw, server_hostname=HOST).close()
        # The server's refusal (its protocol_version alert), not the client's.
        self.assertIn("PROTOCOL_VERSION", str(cm.exception).upper().replace(" ", "_"))
        self.assert_still_serving()

    def test_tls_1_2_and_1_3_are_served(self):
        for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            ctx = client_context(self.pki["ca"])
            ctx.minimum_version = ctx.maximum_version = version
            with socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT) as raw, \
                    ctx.wrap_socket(raw, server_hostname=HOST) as s:
                self.assertEqual(s.version(), version.name.replace("_", "."))
                self.assertIsNone(s.compression())

    def test_a_client_trusting_another_ca_refuses_the_server(self):
        with self.assertRaises(ssl.SSLCertVerificationError):
            with self.https_proxy(context=client_context(self.pki["other_ca"])) as p:
                p.sample.add(1, 2)
        self.assert_still_serving()

    def test_a_client_checks_the_host_name(self):
        ctx = client_context(self.pki["ca"])
        with socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT) as raw:
            with self.assertRaises(ssl.SSLCertVerificationError):
                ctx.wrap_socket(raw, server_hostname="not-this-server.invalid").close()
        self.assert_still_serving()


@unittest.skipIf(OPENSSL is None, "the openssl command line is not installed")
class TlsTimeoutsAndOptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._dir = tempfile.TemporaryDirectory(prefix="rapidrpc-tls-")
        cls.pki = make_test_pki(cls._dir.name)

    @classmethod
    def tearDownClass(cls):
        cls._dir.cleanup()

    def test_a_client_that_never_says_hello_is_dropped_after_the_request_timeout(self):
        d = Daemon("--tls-cert", self.pki["cert"], "--tls-key", self.pki["key"],
                   "--request-timeout", "2", "--idle-timeout", "60").start()
        with d:
            with socket.create_connection((HOST, d.port), timeout=RAW_TIMEOUT) as s:
                start = time.monotonic()
                try:
                    data = s.recv(4096)
                except ConnectionResetError:
                    data = b""
                elapsed = time.monotonic() - start
            self.assertEqual(data, b"", "no answer is due to a client that never said hello")
            # The request timeout (2 s), checked once a second (so by 3 s);
            # far from the idle timeout (60 s).
            self.assertGreaterEqual(elapsed, 1.5)
            self.assertLess(elapsed, 4.5, "the request timeout fired late")
            ctx = client_context(self.pki["ca"])
            with xmlrpc.client.ServerProxy(f"https://{HOST}:{d.port}/RPC2", context=ctx) as p:
                self.assertEqual(p.sample.add(2, 3), 5)

    def test_a_client_silent_after_the_handshake_is_dropped_after_the_request_timeout(self):
        # The handshake and the first request share the request timeout
        # (docs/limits.md): a finished handshake does not make the
        # connection idle, with the idle timeout's longer wait.
        d = Daemon("--tls-cert", self.pki["cert"], "--tls-key", self.pki["key"],
                   "--request-timeout", "2", "--idle-timeout", "60").start()
        with d:
            ctx = client_context(self.pki["ca"])
            with socket.create_connection((HOST, d.port), timeout=RAW_TIMEOUT) as raw:
                start = time.monotonic()
                with ctx.wrap_socket(raw, server_hostname=HOST) as s:
                    try:
                        data = s.recv(4096)
                    except (ConnectionResetError, ssl.SSLError):
                        data = b""
                    elapsed = time.monotonic() - start
            # A 408 may come first, over TLS; then the connection ends.
            self.assertTrue(data == b"" or data.startswith(b"HTTP/1.1 408"), data[:80])
            self.assertGreaterEqual(elapsed, 1.5)
            self.assertLess(elapsed, 4.5, "the request timeout fired late")
            # After a first request, the wait for the next is the idle timeout
            # (where connections are kept: process modes cap it at 2 s, and
            # sequential closes after each answer).
            if harness.MODE in harness.PROCESS_MODES + harness.CLOSE_AFTER_RESPONSE_MODES:
                return
            with socket.create_connection((HOST, d.port), timeout=RAW_TIMEOUT) as raw:
                with ctx.wrap_socket(raw, server_hostname=HOST) as s:
                    body = (b"<?xml version='1.0'?><methodCall><methodName>sample.add"
                            b"</methodName><params><param><value><int>2</int></value></param>"
                            b"<param><value><int>3</int></value></param></params></methodCall>")
                    s.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Type: text/xml\r\n"
                              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                    answer = s.recv(4096)
                    self.assertTrue(answer.startswith(b"HTTP/1.1 200"), answer[:80])
                    s.settimeout(4.0)
                    with self.assertRaises(socket.timeout):
                        s.recv(4096)  # still open after the request timeout

    @skip_in_modes(("sequential", "fork", "prefork"),
                   "a connection serves one request there, and a child is not told of the stop")
    def test_a_client_reset_mid_request_does_not_hold_the_stop(self):
        # test_shutdown's test over TLS: part of a request's records and a
        # reset arrive together (the daemon stopped meanwhile), and OpenSSL's
        # read takes the records. The daemon must still see the reset, or
        # the connection stays mid-request and holds the stop until the
        # drain deadline. Whether OpenSSL's own read meets the reset first
        # varies from one connection to the next: 10 of them.
        d = Daemon("--tls-cert", self.pki["cert"], "--tls-key", self.pki["key"],
                   "--drain-timeout", "2").start()
        self.addCleanup(d.kill)
        clients = [RawClient(d) for _ in range(10)]
        for c in clients:
            self.addCleanup(c.close)  # closing twice is harmless
            c.sock = client_context(self.pki["ca"]).wrap_socket(c.sock, server_hostname=HOST)
            c.send(http_request(call_body("echo", 1)))  # the handshake and a call first
            self.assertEqual(parse_result(c.read_response().body), 1)
        harness.reset_mid_request_while_stopped(d, clients)
        d.send_signal(signal.SIGTERM)
        self.assertEqual(d.wait(harness.STOP_TIMEOUT), 0, d.diagnostics())
        self.assertNotIn("drain deadline reached", d.stderr_text())

    def run_daemon(self, *args):
        return subprocess.run([daemon_path(), "--host", HOST, "--port", "0", *args],
                              capture_output=True, timeout=30)

    def test_a_missing_certificate_file_is_a_clear_error(self):
        r = self.run_daemon("--tls-cert", os.path.join(self._dir.name, "missing.pem"),
                            "--tls-key", self.pki["key"])
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"missing.pem", r.stderr)
        self.assertIn(b"No such file", r.stderr)

    def test_a_key_that_does_not_match_is_a_clear_error(self):
        other_key = os.path.join(self._dir.name, "other-ca.key")
        r = self.run_daemon("--tls-cert", self.pki["cert"], "--tls-key", other_key)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"key values mismatch", r.stderr)

    def test_certificate_and_key_go_together(self):
        r = self.run_daemon("--tls-cert", self.pki["cert"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"--tls-key", r.stderr)
        r = self.run_daemon("--tls-key", self.pki["key"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"--tls-cert", r.stderr)


if __name__ == "__main__":
    main()

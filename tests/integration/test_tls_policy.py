"""The TLS policy of docs/design.md ("TLS") and docs/limits.md ("TLS"):
"TLS 1.2 and 1.3 only, for 1.2 only ECDHE key exchange with AES-GCM or
ChaCha20-Poly1305, no compression, no renegotiation, resumption by
stateless session tickets (no session cache for the loops to share)".

Shown from the client side, with Python's ssl module and `openssl
s_client`, against a daemon with an RSA certificate (so that RSA key
exchange is possible at all, and its refusal is the policy's) and one with
an ECDSA certificate (tls_pki.py's):

- TLS 1.0 and 1.1 clients get the server's protocol_version alert.
- TLS 1.2 suites without ECDHE (RSA key exchange) or with CBC are refused
  with a handshake_failure alert; ECDHE with AES-GCM or ChaCha20-Poly1305
  is accepted, with no compression.
- A client-initiated renegotiation (s_client's `R`) does not happen: the
  server refuses it.
- A TLS 1.2 and a TLS 1.3 session resume from the ticket of an earlier
  connection; in fork and prefork the next connection is served by another
  process, which reads the same ticket.
- There is no session cache: a TLS 1.2 session without a ticket (the client
  refuses tickets, so the server can keep it only in a cache, under its
  session id) is offered again and not resumed: a full handshake.
"""

import os
import socket
import ssl
import subprocess
import time
import unittest
import warnings

import harness
from harness import HOST, RAW_TIMEOUT, call_body, http_request
from tls_pki import OPENSSL, TlsDaemon, client_context, make_test_pki


def make_rsa_server_cert(directory):
    """An RSA-2048 server certificate for 127.0.0.1 signed by the test CA of
    make_test_pki(directory); returns (cert, key)."""
    def openssl(*args):
        r = subprocess.run([OPENSSL, *args], cwd=directory, capture_output=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"openssl {' '.join(args)}: {r.stderr.decode(errors='replace')}")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "rsa.key", "-out", "rsa.csr",
            "-subj", "/CN=localhost")
    openssl("x509", "-req", "-in", "rsa.csr", "-CA", "test-ca.pem", "-CAkey", "test-ca.key",
            "-CAcreateserial", "-out", "rsa.pem", "-days", "2", "-extfile", "server.ext")
    return os.path.join(directory, "rsa.pem"), os.path.join(directory, "rsa.key")


def tls12_context(ciphers=None, verify_ca=None):
    if verify_ca:
        ctx = client_context(verify_ca)
    else:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    if ciphers:
        # SECLEVEL=0: this client offers whatever the test asks for; the
        # refusal must be the server's.
        ctx.set_ciphers(ciphers + ":@SECLEVEL=0")
    return ctx


class PolicyTestCase(TlsDaemon, harness.DaemonTestCase):
    """A daemon serving HTTPS with the certificate server_cert() makes."""

    def handshake(self, ctx, session=None):
        """A finished handshake: the SSLSocket (close it)."""
        raw = socket.create_connection((HOST, self.daemon.port), timeout=RAW_TIMEOUT)
        try:
            return ctx.wrap_socket(raw, server_hostname=HOST, session=session)
        except BaseException:
            raw.close()
            raise

    def assert_refused(self, ctx, alert):
        with self.assertRaises(ssl.SSLError) as cm:
            self.handshake(ctx).close()
        # The server's alert, not a refusal of the client's own.
        self.assertIn(alert, str(cm.exception).upper().replace(" ", "_"))

    def call(self, s):
        """sample.add(20, 22) on an open TLS socket, with Connection: close;
        reads to the end (so TLS 1.3 tickets sent after the handshake are in)."""
        s.sendall(http_request(call_body("sample.add", 20, 22), headers=[("Connection", "close")]))
        reply = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except (ssl.SSLEOFError, ConnectionResetError):
            pass
        self.assertTrue(reply.startswith(b"HTTP/1.1 200"), reply[:200])
        self.assertIn(b"42", reply.split(b"\r\n\r\n", 1)[1])

    def tearDown(self):
        # The daemon still serves after whatever was refused.
        with self.handshake(client_context(self.pki["ca"])) as s:
            self.call(s)
        super().tearDown()


@unittest.skipIf(OPENSSL is None, "the openssl command line is not installed")
class RsaCertificate(PolicyTestCase):

    @classmethod
    def server_cert(cls):
        return make_rsa_server_cert(cls._dir.name)

    def test_tls_1_0_and_1_1_are_refused(self):
        for version in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            with self.subTest(version=version.name):
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    ctx.minimum_version = ctx.maximum_version = version
                ctx.set_ciphers("ALL:@SECLEVEL=0")
                self.assert_refused(ctx, "PROTOCOL_VERSION")

    def test_tls_1_2_without_ecdhe_is_refused(self):
        # RSA key exchange, with the AEAD ciphers that are otherwise allowed.
        for suite in ("AES128-GCM-SHA256", "AES256-GCM-SHA384"):
            with self.subTest(suite=suite):
                self.assert_refused(tls12_context(suite), "HANDSHAKE_FAILURE")

    def test_tls_1_2_cbc_suites_are_refused(self):
        for suite in ("ECDHE-RSA-AES128-SHA256", "ECDHE-RSA-AES256-SHA384", "ECDHE-RSA-AES128-SHA",
                      "AES128-SHA256"):
            with self.subTest(suite=suite):
                self.assert_refused(tls12_context(suite), "HANDSHAKE_FAILURE")

    def test_tls_1_2_ecdhe_aead_suites_are_served(self):
        for suite in ("ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
                      "ECDHE-RSA-CHACHA20-POLY1305"):
            with self.subTest(suite=suite):
                with self.handshake(tls12_context(suite, self.pki["ca"])) as s:
                    self.assertEqual(s.version(), "TLSv1.2")
                    self.assertEqual(s.cipher()[0], suite)
                    self.assertIsNone(s.compression())
                    self.call(s)

    def test_tls_1_3_is_served(self):
        ctx = client_context(self.pki["ca"])
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        with self.handshake(ctx) as s:
            self.assertEqual(s.version(), "TLSv1.3")
            self.assertIsNone(s.compression())
            self.call(s)

    def test_client_initiated_renegotiation_is_refused(self):
        # s_client renegotiates when it reads "R" on a line of its own, then
        # sends what follows; a refused renegotiation ends its session.
        proc = subprocess.Popen(
            [OPENSSL, "s_client", "-connect", f"{HOST}:{self.daemon.port}", "-tls1_2",
             "-CAfile", self.pki["ca"], "-servername", "localhost", "-no_ign_eof"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            out = b""
            # Wait for the handshake before asking for a renegotiation.
            deadline = time.monotonic() + 10
            os.set_blocking(proc.stdout.fileno(), False)
            while b"Verify return code" not in out and time.monotonic() < deadline:
                chunk = proc.stdout.read()
                if chunk:
                    out += chunk
                elif proc.poll() is not None:
                    break
                else:
                    time.sleep(0.02)
            self.assertIn(b"Verify return code: 0", out, out.decode(errors="replace")[-2000:])
            proc.stdin.write(b"R\n")
            proc.stdin.flush()
            # The attempt and its refusal, before anything else is sent.
            deadline = time.monotonic() + 10
            while b"no renegotiation" not in out.lower() and time.monotonic() < deadline:
                chunk = proc.stdout.read()
                if chunk:
                    out += chunk
                elif proc.poll() is not None:
                    break
                else:
                    time.sleep(0.02)
            request = http_request(call_body("sample.add", 20, 22), headers=[("Connection", "close")])
            try:
                rest, _ = proc.communicate(request, timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                rest, _ = proc.communicate()
            out += rest or b""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        text = out.decode(errors="replace")
        self.assertIn("RENEGOTIATING", text, text[-2000:])
        after = text.split("RENEGOTIATING", 1)[1]
        # A renegotiated session would verify the server again and go on to
        # answer the request.
        self.assertNotIn("verify return:", after, f"the renegotiation happened:\n{after[-2000:]}")
        self.assertIn("no renegotiation", after.lower(), f"no refusal seen:\n{after[-2000:]}")

    def resume(self, version):
        ctx = client_context(self.pki["ca"])
        ctx.minimum_version = ctx.maximum_version = version
        with self.handshake(ctx) as s:
            self.call(s)
            session = s.session
        self.assertTrue(session.has_ticket, f"{version.name}: the server sent no session ticket")
        self.assertGreater(session.ticket_lifetime_hint, 0)
        resumed = []
        for _ in range(3):
            with self.handshake(ctx, session=session) as s:
                resumed.append(s.session_reused)
                self.call(s)
        self.assertEqual(resumed, [True] * 3, f"{version.name}: sessions not resumed from the ticket")

    def test_tls_1_2_resumes_by_ticket(self):
        self.resume(ssl.TLSVersion.TLSv1_2)

    def test_no_session_cache_a_session_without_a_ticket_is_not_resumed(self):
        ctx = client_context(self.pki["ca"])
        ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.options |= ssl.OP_NO_TICKET
        with self.handshake(ctx) as s:
            self.call(s)
            session = s.session
        self.assertFalse(session.has_ticket, "the client refused tickets, yet holds one")
        # (A server without a cache may give no session id at all; the
        # session is offered again all the same.)
        for _ in range(3):
            with self.handshake(ctx, session=session) as s:
                self.assertFalse(s.session_reused,
                                 "a session without a ticket resumed: the server keeps a cache")
                self.call(s)

    def test_tls_1_3_resumes_by_ticket(self):
        self.resume(ssl.TLSVersion.TLSv1_3)


@unittest.skipIf(OPENSSL is None, "the openssl command line is not installed")
class EcdsaCertificate(PolicyTestCase):
    """The test PKI's own server certificate (an ECDSA key)."""

    def test_tls_1_2_cbc_suites_are_refused(self):
        for suite in ("ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384",
                      "ECDHE-ECDSA-AES128-SHA"):
            with self.subTest(suite=suite):
                self.assert_refused(tls12_context(suite), "HANDSHAKE_FAILURE")

    def test_tls_1_2_ecdhe_aead_suites_are_served(self):
        for suite in ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
                      "ECDHE-ECDSA-CHACHA20-POLY1305"):
            with self.subTest(suite=suite):
                with self.handshake(tls12_context(suite, self.pki["ca"])) as s:
                    self.assertEqual(s.cipher()[0], suite)
                    self.assertIsNone(s.compression())
                    self.call(s)


if __name__ == "__main__":
    harness.main()

"""gzip both ways (docs/limits.md, "HTTP"; --help of --gzip-min-bytes):

- a request body with `Content-Encoding: x-gzip` is inflated as one with
  `gzip` is (RFC 9110 8.4.1.3: x-gzip is gzip), and a broken one is 400;
- a client whose Accept-Encoding names `x-gzip` (or `*`) takes gzip, and
  `gzip;q=0` (or `*;q=0`) refuses it;
- `--gzip-min-bytes N`: a reply of N - 1 bytes goes as it is, one of exactly
  N bytes compressed (the threshold is "at least"); a client that does not
  offer gzip never gets it;
- `--gzip-min-bytes 0` means never: not a large reply, not the API page.

The reply sizes are measured on the daemon itself (an uncompressed reply
of echo(s) is a fixed envelope plus the bytes of s), so no byte count of the envelope is
written down here.
"""

import gzip
import unittest

from harness import (Daemon, call_body, exchange, http_request, main, parse_result,
                     running_daemon)

THRESHOLD = 2000


def echo_request(text, accept=None, close=True):
    headers = [("Connection", "close")] if close else []
    if accept is not None:
        headers.append(("Accept-Encoding", accept))
    return http_request(call_body("echo", text), headers=headers)


class GzipBodies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon().start()

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def test_an_x_gzip_body_is_read_as_gzip(self):
        for coding in ("x-gzip", "X-GZIP", "gzip"):
            body = gzip.compress(call_body("sample.add", 20, 22))
            resp = exchange(self.daemon, http_request(
                body, headers=[("Content-Encoding", coding), ("Connection", "close")]))
            self.assertEqual(resp.status, 200, f"{coding}: {resp!r}")
            self.assertEqual(parse_result(resp.decoded_body()), 42, coding)

    def test_a_broken_x_gzip_body_is_400(self):
        good = gzip.compress(call_body("sample.add", 1, 2))
        broken = good[:10] + bytes(b ^ 0x55 for b in good[10:-8]) + good[-8:]
        resp = exchange(self.daemon, http_request(
            broken, headers=[("Content-Encoding", "x-gzip"), ("Connection", "close")]))
        self.assertEqual(resp.status, 400, resp)

    def test_accept_encoding_x_gzip_takes_gzip(self):
        text = "x" * 5000  # past the default threshold (1024)
        for accept in ("x-gzip", "X-Gzip;q=0.5", "*", "identity, *;q=0.1"):
            resp = exchange(self.daemon, echo_request(text, accept=accept))
            self.assertEqual(resp.status, 200, f"{accept}: {resp!r}")
            self.assertEqual(resp.header("Content-Encoding"), "gzip", f"{accept}: {resp!r}")
            self.assertEqual(parse_result(gzip.decompress(resp.body)), text, accept)

    def test_gzip_with_q_zero_is_refused_gzip(self):
        text = "x" * 5000
        for accept in ("gzip;q=0", "x-gzip; q=0.000, identity", "gzip;q=0, *", "*;q=0"):
            resp = exchange(self.daemon, echo_request(text, accept=accept))
            self.assertIsNone(resp.header("Content-Encoding"), f"{accept}: {resp!r}")
            self.assertEqual(parse_result(resp.body), text, accept)


class Threshold(unittest.TestCase):
    def test_a_reply_of_at_least_gzip_min_bytes_is_compressed(self):
        with running_daemon("--gzip-min-bytes", str(THRESHOLD)) as d:
            # The envelope: echo("a") less its one byte of text, uncompressed
            # (below any threshold) whatever the client offers.
            envelope = len(exchange(d, echo_request("a", accept="gzip")).body) - 1
            self.assertLess(envelope, THRESHOLD)
            below = "b" * (THRESHOLD - 1 - envelope)
            at = "a" * (THRESHOLD - envelope)

            plain = exchange(d, echo_request(below, accept="gzip"))
            self.assertIsNone(plain.header("Content-Encoding"), plain)
            self.assertEqual(len(plain.body), THRESHOLD - 1)
            self.assertEqual(parse_result(plain.body), below)

            packed = exchange(d, echo_request(at, accept="gzip"))
            self.assertEqual(packed.header("Content-Encoding"), "gzip", packed)
            inflated = gzip.decompress(packed.body)
            self.assertEqual(len(inflated), THRESHOLD)
            self.assertEqual(parse_result(inflated), at)
            self.assertLess(len(packed.body), THRESHOLD)

            # Without Accept-Encoding, nothing is compressed, however large.
            large = "c" * (4 * THRESHOLD)
            bare = exchange(d, echo_request(large))
            self.assertIsNone(bare.header("Content-Encoding"), bare)
            self.assertEqual(parse_result(bare.body), large)

    def test_zero_means_never(self):
        with running_daemon("--gzip-min-bytes", "0") as d:
            large = "z" * 100000
            resp = exchange(d, echo_request(large, accept="gzip"))
            self.assertEqual(resp.status, 200, resp)
            self.assertIsNone(resp.header("Content-Encoding"), resp)
            self.assertEqual(parse_result(resp.body), large)
            # The API page (a browser's GET) neither.
            page = exchange(d, http_request(b"", method="GET", headers=[
                ("Accept", "text/html"), ("Accept-Encoding", "gzip"), ("Connection", "close")],
                content_length=False))
            self.assertEqual(page.status, 200, page)
            self.assertIn(b"<html", page.body)
            self.assertIsNone(page.header("Content-Encoding"), page)

    def test_the_default_threshold_gzips_the_api_page(self):
        # The counterpart of the above: with the default the page is gzipped.
        with running_daemon() as d:
            page = exchange(d, http_request(b"", method="GET", headers=[
                ("Accept", "text/html"), ("Accept-Encoding", "gzip"), ("Connection", "close")],
                content_length=False))
            self.assertEqual(page.status, 200, page)
            self.assertEqual(page.header("Content-Encoding"), "gzip", page)
            self.assertIn(b"<html", gzip.decompress(page.body))


if __name__ == "__main__":
    main()

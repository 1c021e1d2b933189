"""HTTP behaviour: keep-alive, HTTP/1.0, pipelining, chunked and gzip bodies,
response headers."""

import email.utils
import gzip
import socket
import time
import unittest

import harness
from harness import (DaemonTestCase, RawClient, call_body, chunked, exchange, http_request,
                     parse_result, skip_in_modes)

# --mode sequential answers one request per connection, then closes it.
ONE_REQUEST_PER_CONNECTION = skip_in_modes(
    harness.CLOSE_AFTER_RESPONSE_MODES,
    "one request per connection (every reply carries Connection: close), so keep-alive "
    "reuse and pipelining do not apply; see SequentialClosesEveryConnection")

# An idle connection parks after a second (connection.hpp, park_after): a
# close that waited for it would come no sooner.
HALF_CLOSE_BOUND_S = 0.9


class KeepAlive(DaemonTestCase):

    @ONE_REQUEST_PER_CONNECTION
    def test_http11_connection_is_reused(self):
        conn = self.daemon.connection()
        try:
            conn.request("POST", "/RPC2", body=call_body("echo", "first"),
                         headers={"Content-Type": "text/xml"})
            resp = conn.getresponse()
            self.assertEqual(parse_result(resp.read()), "first")
            self.assertFalse(resp.will_close, resp.getheaders())
            sock = conn.sock
            self.assertIsNotNone(sock, "http.client dropped the connection after response 1")
            local = sock.getsockname()
            for i in range(3):
                conn.request("POST", "/RPC2", body=call_body("echo", i),
                             headers={"Content-Type": "text/xml"})
                resp = conn.getresponse()
                self.assertEqual(parse_result(resp.read()), i)
                self.assertIs(conn.sock, sock, "a new socket was opened")
                self.assertEqual(conn.sock.getsockname(), local)
        finally:
            conn.close()

    @ONE_REQUEST_PER_CONNECTION
    def test_server_proxy_reuses_connection(self):
        with self.proxy() as p:
            self.assertEqual(p.echo(1), 1)
            conn = p("transport")._connection[1]
            sock = conn.sock
            self.assertIsNotNone(sock)
            self.assertEqual(p.echo(2), 2)
            self.assertIs(p("transport")._connection[1].sock, sock)

    def test_http11_connection_close_is_honoured(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", 1), headers=[("Connection", "close")]))
            resp = c.read_response()
            self.assertEqual(resp.status, 200)
            self.assertEqual(parse_result(resp.decoded_body()), 1)
            self.assertTrue(c.at_eof(10), "server kept the connection open after Connection: close")

    def test_http10_closes(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", "ten"), version="HTTP/1.0"))
            resp = c.read_response()
            self.assertEqual(resp.status, 200, resp)
            self.assertEqual(parse_result(resp.decoded_body()), "ten")
            self.assertNotIn("keep-alive", resp.connection_tokens())
            self.assertTrue(c.at_eof(10), "HTTP/1.0 connection left open")

    @ONE_REQUEST_PER_CONNECTION
    def test_http10_keep_alive(self):
        with RawClient(self.daemon) as c:
            req = http_request(call_body("echo", "a"), version="HTTP/1.0",
                               headers=[("Connection", "keep-alive")])
            c.send(req)
            resp = c.read_response()
            self.assertEqual(parse_result(resp.decoded_body()), "a")
            self.assertIn("keep-alive", resp.connection_tokens(), resp)
            c.send(http_request(call_body("echo", "b"), version="HTTP/1.0",
                                headers=[("Connection", "keep-alive")]))
            self.assertEqual(parse_result(c.read_response().decoded_body()), "b")

    @ONE_REQUEST_PER_CONNECTION
    def test_a_client_that_half_closes_after_its_request_sees_the_close_at_once(self):
        # `nc -N`, socat: the request, then the end of the stream, then the
        # answer read to the server's close. The end travels in the segment
        # of the request's bytes (TCP_CORK holds them until the shutdown
        # sends both), so the one read that takes the request drains the
        # socket and epoll reports nothing more. Found only by the parking,
        # the close would come no sooner than a second after the answer:
        # it must come well before.
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", 1)))  # the socket read once already
            self.assertEqual(parse_result(c.read_response().body), 1)
            c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
            c.send(http_request(call_body("echo", 2)))
            c.sock.shutdown(socket.SHUT_WR)
            self.assertEqual(parse_result(c.read_response().body), 2)
            self.assertTrue(c.at_eof(HALF_CLOSE_BOUND_S),
                            f"no close within {HALF_CLOSE_BOUND_S} s of the answer")

    @ONE_REQUEST_PER_CONNECTION
    def test_idle_keep_alive_connection_survives_a_short_pause(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", 1)))
            self.assertEqual(parse_result(c.read_response().body), 1)
            time.sleep(1.0)
            c.send(http_request(call_body("echo", 2)))
            self.assertEqual(parse_result(c.read_response().body), 2)


class ExpectContinue(DaemonTestCase):

    def test_expect_100_continue(self):
        # curl (7.88) sends "Expect: 100-continue" before bodies over 1 MiB
        # and then waits 1 s for an interim answer. RFC 9110 10.1.1: the
        # server sends 100 Continue (or a final status) without waiting.
        body = call_body("echo", "e" * 2000)
        req = http_request(body, headers=[("Expect", "100-continue")])
        with RawClient(self.daemon) as c:
            c.send(req[: len(req) - len(body)])
            c.sock.settimeout(2.0)
            try:
                interim = c.read_response()
            except TimeoutError:
                self.fail("no '100 Continue' within 2 s of a request with Expect: 100-continue")
            finally:
                c.sock.settimeout(harness.RAW_TIMEOUT)
            self.assertEqual(interim.status, 100, interim)
            c.send(body)
            resp = c.read_response()
            self.assertEqual(resp.status, 200, resp)
            self.assertEqual(parse_result(resp.decoded_body()), "e" * 2000)


@ONE_REQUEST_PER_CONNECTION
class Pipelining(DaemonTestCase):

    def test_three_requests_in_one_send(self):
        values = ["one", "two", "three"]
        with RawClient(self.daemon) as c:
            c.send(b"".join(http_request(call_body("echo", v)) for v in values))
            for v in values:
                resp = c.read_response()
                self.assertEqual(resp.status, 200, resp)
                self.assertEqual(parse_result(resp.decoded_body()), v)

    def test_order_kept_when_first_is_slow(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("sleep", 0.3)) +
                   http_request(call_body("load", 20000)) +
                   http_request(call_body("echo", "fast")) +
                   http_request(call_body("nosuch")))
            self.assertIs(parse_result(c.read_response().body), True)
            self.assertEqual(parse_result(c.read_response().body), harness.fib_str(20000))
            self.assertEqual(parse_result(c.read_response().body), "fast")
            self.assertEqual(harness.parse_fault(c.read_response().body).faultCode, -32601)

    def test_many_pipelined_byte_by_byte_boundaries(self):
        reqs = [http_request(call_body("sample.add", i, 1)) for i in range(50)]
        blob = b"".join(reqs)
        with RawClient(self.daemon) as c:
            # Odd-sized writes so requests straddle segment boundaries.
            for i in range(0, len(blob), 97):
                c.send(blob[i:i + 97])
            for i in range(50):
                self.assertEqual(parse_result(c.read_response().body), i + 1)

    def test_pipelined_with_connection_close_last(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", 1)) +
                   http_request(call_body("echo", 2), headers=[("Connection", "close")]))
            self.assertEqual(parse_result(c.read_response().body), 1)
            self.assertEqual(parse_result(c.read_response().body), 2)
            self.assertTrue(c.at_eof(10))


class Bodies(DaemonTestCase):

    def test_chunked_request_body(self):
        body = call_body("echo", "chunked \u00e9 " * 300)
        for sizes in ([len(body)], [1000], [7, 1, 300], [1]):
            with self.subTest(sizes=sizes):
                req = http_request(chunked(body, sizes), content_length=False,
                                   headers=[("Transfer-Encoding", "chunked")])
                resp = exchange(self.daemon, req)
                self.assertEqual(resp.status, 200, resp)
                self.assertEqual(parse_result(resp.decoded_body()), "chunked \u00e9 " * 300)

    def test_chunked_with_extension_and_trailer(self):
        body = call_body("echo", 77)
        raw = (b"%x;name=value\r\n" % len(body) + body + b"\r\n0\r\nX-Trailer: t\r\n\r\n")
        req = http_request(raw, content_length=False, headers=[("Transfer-Encoding", "chunked")])
        if harness.MODE in harness.CLOSE_AFTER_RESPONSE_MODES:
            # One request per connection: the trailer must still be consumed
            # cleanly (the reply, then an orderly close).
            with RawClient(self.daemon) as c:
                c.send(req)
                self.assertEqual(parse_result(c.read_response().body), 77)
                self.assertTrue(c.at_eof(10))
            return
        with RawClient(self.daemon) as c:
            c.send(req + http_request(call_body("echo", 78)))
            self.assertEqual(parse_result(c.read_response().body), 77)
            self.assertEqual(parse_result(c.read_response().body), 78)

    def test_chunked_via_http_client(self):
        conn = self.daemon.connection()
        try:
            body = call_body("echo", "zz")
            parts = [body[i:i + 10] for i in range(0, len(body), 10)]
            conn.request("POST", "/RPC2", body=iter(parts),
                         headers={"Content-Type": "text/xml"}, encode_chunked=True)
            resp = conn.getresponse()
            self.assertEqual(resp.status, 200)
            self.assertEqual(parse_result(resp.read()), "zz")
        finally:
            conn.close()

    def test_gzip_request_body(self):
        value = {"text": "compress me " * 1000, "n": 12}
        packed = gzip.compress(call_body("echo", value))
        resp = exchange(self.daemon, http_request(packed, headers=[("Content-Encoding", "gzip")]))
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), value)

    def test_gzip_and_chunked_request_body(self):
        packed = gzip.compress(call_body("echo", "both"))
        req = http_request(chunked(packed, [13]), content_length=False,
                           headers=[("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")])
        resp = exchange(self.daemon, req)
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), "both")

    def test_gzip_response_for_large_body(self):
        value = "large response " * 2000
        req = http_request(call_body("echo", value), headers=[("Accept-Encoding", "gzip")])
        resp = exchange(self.daemon, req)
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual((resp.header("Content-Encoding") or "").lower(), "gzip", resp.headers)
        self.assertLess(len(resp.body), len(value) // 4, "gzip body not actually compressed")
        self.assertEqual(parse_result(gzip.decompress(resp.body)), value)

    def test_no_gzip_response_without_accept_encoding(self):
        value = "large response " * 2000
        resp = exchange(self.daemon, http_request(call_body("echo", value)))
        self.assertEqual(resp.status, 200, resp)
        self.assertIsNone(resp.header("Content-Encoding"), resp.headers)
        self.assertEqual(parse_result(resp.body), value)

    def test_no_gzip_when_refused_by_qvalue(self):
        value = "large response " * 2000
        req = http_request(call_body("echo", value), headers=[("Accept-Encoding", "gzip;q=0")])
        resp = exchange(self.daemon, req)
        self.assertEqual(resp.status, 200, resp)
        self.assertNotEqual((resp.header("Content-Encoding") or "").lower(), "gzip", resp.headers)

    def test_small_response_with_accept_encoding_still_parses(self):
        # Below --gzip-min-bytes (1024) a response goes out as it is.
        req = http_request(call_body("echo", 5), headers=[("Accept-Encoding", "gzip")])
        resp = exchange(self.daemon, req)
        self.assertIsNone(resp.header("Content-Encoding"), resp.headers)
        self.assertEqual(parse_result(resp.body), 5)


@harness.only_in_modes(harness.CLOSE_AFTER_RESPONSE_MODES,
                       "only --mode sequential closes every connection after one reply")
class SequentialClosesEveryConnection(DaemonTestCase):
    """What replaces keep-alive and pipelining in --mode sequential."""

    def test_http11_reply_carries_connection_close_then_closes(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", "once")))
            resp = c.read_response()
            self.assertEqual(resp.status, 200, resp)
            self.assertEqual(parse_result(resp.decoded_body()), "once")
            self.assertIn("close", resp.connection_tokens(), resp)
            self.assertTrue(c.at_eof(10), "connection left open after a Connection: close reply")

    def test_http10_keep_alive_request_still_closes(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", "a"), version="HTTP/1.0",
                                headers=[("Connection", "keep-alive")]))
            resp = c.read_response()
            self.assertEqual(parse_result(resp.decoded_body()), "a")
            self.assertNotIn("keep-alive", resp.connection_tokens(), resp)
            self.assertTrue(c.at_eof(10))

    def test_pipelined_requests_only_the_first_is_answered(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", "one")) + http_request(call_body("echo", "two")))
            resp = c.read_response()
            self.assertEqual(parse_result(resp.decoded_body()), "one")
            self.assertIn("close", resp.connection_tokens(), resp)
            try:
                self.assertTrue(c.at_eof(10), "a second reply or an open connection")
            except ConnectionResetError:
                pass  # unread pipelined bytes may turn the close into a reset

    def test_server_proxy_calls_each_on_a_new_connection(self):
        with self.proxy() as p:
            self.assertEqual([p.echo(i) for i in range(5)], list(range(5)))


class Headers(DaemonTestCase):

    def test_standard_headers(self):
        resp = exchange(self.daemon, http_request(call_body("echo", "h")))
        self.assertEqual(resp.status, 200)
        self.assertTrue(resp.version in ("HTTP/1.1",), resp.version)
        self.assertTrue(resp.header("Server"), resp.headers)
        date = resp.header("Date")
        self.assertTrue(date, resp.headers)
        parsed = email.utils.parsedate_to_datetime(date)
        self.assertLess(abs(parsed.timestamp() - time.time()), 300, date)
        ctype = resp.header("Content-Type", "")
        self.assertEqual(ctype.split(";")[0].strip().lower(), "text/xml", ctype)
        self.assertEqual(int(resp.header("Content-Length")), len(resp.body))

    def test_error_responses_have_headers_too(self):
        # Another path is 404, another method on a known path 405 (docs/limits.md).
        for req, status in ((http_request(call_body("echo", 1), path="/nope"), 404),
                            (http_request(None, method="GET"), 405)):
            with self.subTest(request=req[:20]):
                resp = exchange(self.daemon, req)
                self.assertEqual(resp.status, status, resp)
                self.assertTrue(resp.header("Date"), resp.headers)
                self.assertTrue(resp.header("Server"), resp.headers)
                self.assertIsNotNone(resp.header("Content-Length") or
                                     resp.header("Transfer-Encoding"), resp.headers)

    def test_fault_is_http_200_text_xml(self):
        resp = exchange(self.daemon, http_request(call_body("no.such")))
        self.assertEqual(resp.status, 200)
        self.assertTrue(resp.header("Content-Type", "").startswith("text/xml"))
        self.assertEqual(harness.parse_fault(resp.body).faultCode, -32601)


if __name__ == "__main__":
    harness.main()

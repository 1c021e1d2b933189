"""Faults and malformed input, sent with http.client or raw sockets. After
every test a normal call on a new connection must succeed."""

import gzip
import socket
import struct
import time
import unittest

import harness
from harness import (DaemonTestCase, RawClient, call_body, chunked, exchange, http_request,
                     parse_fault, parse_result, raw_call_body)


class FaultTestCase(DaemonTestCase):

    def tearDown(self):
        self.assert_still_serving()
        super().tearDown()

    def post(self, body, path="/RPC2", headers=None):
        """POSTs with http.client; returns (status, headers dict, body)."""
        conn = self.daemon.connection()
        try:
            hdrs = {"Content-Type": "text/xml"}
            hdrs.update(headers or {})
            conn.request("POST", path, body=body, headers=hdrs)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
        finally:
            conn.close()

    def assert_fault_response(self, body, codes, http_status=200):
        status, headers, data = self.post(body)
        self.assertEqual(status, http_status, data[:500])
        self.assertTrue(headers.get("content-type", "").startswith("text/xml"), headers)
        fault = parse_fault(data)
        if isinstance(codes, int):
            codes = (codes,)
        self.assertIn(fault.faultCode, codes, f"{fault.faultString!r} for {body[:200]!r}")
        self.assertIsInstance(fault.faultString, str)
        return fault


class MalformedXml(FaultTestCase):

    def test_malformed_xml_is_parse_error_with_http_200(self):
        cases = [
            b"not xml at all",
            b"<methodCall><methodName>echo</methodName>",
            b"<methodCall><methodName>echo</methodName><params><param><value><int>1</int>"
            b"</param></params></methodCall>",
            b"<methodCall><methodName>echo</methodName><params/></methodCall><second/>",
            b"<methodCall><methodName>echo</methodName><params></params></methodcall>",
            b"<?xml version='1.0'?><methodCall><methodName>echo</methodName>"
            b"<params><param><value><string>&undefined;</string></value></param></params>"
            b"</methodCall>",
            b"<methodCall attr=noquotes><methodName>echo</methodName></methodCall>",
        ]
        for body in cases:
            with self.subTest(body=body[:60]):
                self.assert_fault_response(body, -32700)

    def test_empty_body(self):
        self.assert_fault_response(b"", (-32700, -32600))

    def test_invalid_utf8(self):
        body = raw_call_body("echo", "<value><string>X</string></value>").replace(
            b"X", b"\xff\xfe\xc3(")
        self.assert_fault_response(body, (-32700, -32702))

    def test_doctype_refused(self):
        doctype = (b'<?xml version="1.0"?>\n<!DOCTYPE methodCall>\n'
                   b"<methodCall><methodName>echo</methodName><params><param><value>"
                   b"<int>1</int></value></param></params></methodCall>")
        self.assert_fault_response(doctype, -32700)

    def test_entity_expansion_refused(self):
        # "Billion laughs": must be refused, quickly, not expanded.
        ents = ['<!ENTITY l0 "lollollollollollollollollollol">']
        for i in range(1, 10):
            ents.append(f'<!ENTITY l{i} "' + f"&l{i - 1};" * 10 + '">')
        body = (f'<?xml version="1.0"?>\n<!DOCTYPE methodCall [{"".join(ents)}]>\n'
                "<methodCall><methodName>echo</methodName><params><param><value><string>"
                "&l9;</string></value></param></params></methodCall>").encode()
        t0 = time.monotonic()
        self.assert_fault_response(body, -32700)
        self.assertLess(time.monotonic() - t0, 5.0)

    def test_external_entity_refused(self):
        body = (b'<?xml version="1.0"?>\n<!DOCTYPE methodCall [<!ENTITY xxe SYSTEM '
                b'"file:///etc/passwd">]>\n<methodCall><methodName>echo</methodName><params>'
                b"<param><value><string>&xxe;</string></value></param></params></methodCall>")
        fault = self.assert_fault_response(body, -32700)
        self.assertNotIn("root:", fault.faultString)

    def test_bad_scalar_values(self):
        cases = [
            "<value><int>abc</int></value>",
            "<value><int>1 2</int></value>",
            "<value><int>99999999999</int></value>",        # beyond i4
            "<value><boolean>2</boolean></value>",
            "<value><boolean>true</boolean></value>",
            "<value><double>nan</double></value>",
            "<value><double>1e999</double></value>",
            "<value><base64>!!!notbase64</base64></value>",
            "<value><dateTime.iso8601>2024-13-45T99:99:99</dateTime.iso8601></value>",
            "<value><struct><member><value><int>1</int></value></member></struct></value>",
            "<value><array><value><int>1</int></value></array></value>",  # no <data>
            "<value><unknowntype>1</unknowntype></value>",
        ]
        for v in cases:
            with self.subTest(value=v):
                self.assert_fault_response(raw_call_body("echo", v), (-32700, -32600, -32602))

    def test_not_a_method_call_is_invalid_request(self):
        cases = [
            b"<foo/>",
            b"<methodCall><params></params></methodCall>",                # no methodName
            b"<methodResponse><params><param><value><int>1</int></value></param>"
            b"</params></methodResponse>",
        ]
        for body in cases:
            with self.subTest(body=body[:60]):
                self.assert_fault_response(body, -32600)

    def test_nesting_beyond_default_limit(self):
        # Default depth limit is 64: 100 levels must be refused as a fault.
        depth = 100
        v = "<value><array><data>" * depth + "<value><int>1</int></value>" + \
            "</data></array></value>" * depth
        self.assert_fault_response(raw_call_body("echo", v), (-32700, -32600, -32602))

    def test_very_deep_nesting_does_not_crash(self):
        depth = 50000
        v = "<value><struct><member><name>a</name>" * depth + "<value>x</value>" + \
            "</member></struct></value>" * depth
        self.assert_fault_response(raw_call_body("echo", v), (-32700, -32600, -32602))


class WrongParams(FaultTestCase):

    def test_wrong_types(self):
        body = raw_call_body("sample.add", "<value><string>1</string></value>",
                             "<value><int>2</int></value>")
        self.assert_fault_response(body, -32602)
        body = raw_call_body("sample.add", "<value><int>1</int></value>",
                             "<value><double>2</double></value>")
        self.assert_fault_response(body, -32602)

    def test_wrong_counts(self):
        self.assert_fault_response(raw_call_body("sample.add", "<value><int>1</int></value>"),
                                   -32602)
        self.assert_fault_response(raw_call_body("sample.add", *["<value><int>1</int></value>"] * 3),
                                   -32602)
        self.assert_fault_response(b"<methodCall><methodName>sample.add</methodName></methodCall>",
                                   -32602)

    def test_unknown_method(self):
        self.assert_fault_response(call_body("nope", 1), -32601)

    def test_fault_response_has_no_internal_detail(self):
        fault = self.assert_fault_response(b"<methodCall><methodName>echo", -32700)
        self.assertLess(len(fault.faultString), 1000)
        for leak in ("/work/", ".cpp", ".hpp", "Traceback", "std::"):
            self.assertNotIn(leak, fault.faultString)


class HttpErrors(FaultTestCase):

    def test_unknown_path_is_404(self):
        for path in ("/nope", "/RPC2/extra", "/RPC3"):
            with self.subTest(path=path):
                status, _, _ = self.post(call_body("echo", 1), path=path)
                self.assertEqual(status, 404)

    def test_query_string_on_rpc_path(self):
        status, _, data = self.post(call_body("echo", 5), path="/RPC2?x=1")
        # Either served (query ignored) or a clean 404; never a broken reply.
        self.assertIn(status, (200, 404))
        if status == 200:
            self.assertEqual(parse_result(data), 5)

    def test_get_is_405_with_allow_post(self):
        for method in ("GET", "PUT", "DELETE"):
            with self.subTest(method=method):
                conn = self.daemon.connection()
                try:
                    conn.request(method, "/RPC2")
                    resp = conn.getresponse()
                    resp.read()
                    self.assertEqual(resp.status, 405)
                    allow = resp.getheader("Allow", "")
                    self.assertIn("POST", [t.strip() for t in allow.split(",")],
                                  f"Allow: {allow!r}")
                finally:
                    conn.close()

    def test_malformed_http_is_400_then_close(self):
        cases = [
            b"GARBAGE\r\n\r\n",
            b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
            b"POST /RPC2 HTTP/1.1\r\nHost x no colon\r\nContent-Length: 0\r\n\r\n",
            b"POST /RPC2 HTTP/9.9\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
            b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
            b"Content-Length: 2\r\n\r\nab",
        ]
        for req in cases:
            with self.subTest(request=req[:50]):
                with RawClient(self.daemon) as c:
                    c.send(req)
                    try:
                        resp = c.read_response()
                    except (harness.IncompleteResponse, ConnectionResetError) as err:
                        self.fail(f"no HTTP error response to {req!r}: {err}")
                    self.assertIn(resp.status, (400, 505) if b"9.9" in req else (400,), resp)
                    self.assertTrue(c.at_eof(10), "connection not closed after 400")

    def test_missing_length_is_411_or_400(self):
        with RawClient(self.daemon) as c:
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n\r\n")
            resp = c.read_response()
            self.assertIn(resp.status, (400, 411), resp)

    def test_huge_header_refused(self):
        req = (b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) +
               b"\r\nContent-Length: 0\r\n\r\n")
        with RawClient(self.daemon) as c:
            try:
                c.send(req)
                resp = c.read_response()
            except (ConnectionResetError, BrokenPipeError, harness.IncompleteResponse):
                return  # closing on an oversize header is acceptable
            self.assertIn(resp.status, (400, 413, 431), resp)


class Disconnects(FaultTestCase):

    def test_disconnect_mid_body(self):
        body = call_body("echo", "x" * 5000)
        req = http_request(body)
        with RawClient(self.daemon) as c:
            c.send(req[: len(req) - len(body) // 2])
        time.sleep(0.2)

    def test_disconnect_mid_headers(self):
        with RawClient(self.daemon) as c:
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Le")
        time.sleep(0.2)

    def test_reset_mid_body(self):
        body = call_body("echo", "x" * 5000)
        req = http_request(body)
        c = RawClient(self.daemon)
        c.send(req[:200])
        # SO_LINGER 0: close sends RST instead of FIN.
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
        time.sleep(0.2)

    def test_disconnect_while_call_in_flight(self):
        for method, args in (("sleep", (0.5,)), ("load", (150000,))):
            with self.subTest(method=method):
                with RawClient(self.daemon) as c:
                    c.send(http_request(call_body(method, *args)))
                    time.sleep(0.05)
                time.sleep(0.8)  # the result comes back to a closed connection

    def test_many_aborted_connections(self):
        body = call_body("echo", "abc")
        req = http_request(body)
        for i in range(50):
            with RawClient(self.daemon) as c:
                c.send(req[: (i * 37) % len(req)])


class BodyLimit(FaultTestCase):
    daemon_args = ("--max-body-bytes", "1024")

    def test_within_limit_is_served(self):
        body = call_body("echo", "y" * 500)
        self.assertLessEqual(len(body), 1024)
        resp = exchange(self.daemon, http_request(body))
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), "y" * 500)

    def test_oversize_content_length_is_413_on_headers_alone(self):
        with RawClient(self.daemon) as c:
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                   b"Content-Length: 2048\r\n\r\n")
            resp = c.read_response()
            self.assertEqual(resp.status, 413, resp)

    def test_oversize_body_is_413(self):
        body = call_body("echo", "z" * 2000)
        self.assertGreater(len(body), 1024)
        resp = exchange(self.daemon, http_request(body))
        self.assertEqual(resp.status, 413, resp)

    def test_oversize_body_is_413_with_http_client(self):
        body = call_body("echo", "z" * 100_000)
        try:
            status, _, _ = self.post(body)
        except (ConnectionResetError, BrokenPipeError) as err:
            self.fail(f"413 expected, connection dropped instead: {err!r}")
        self.assertEqual(status, 413)

    def test_oversize_chunked_body_is_413(self):
        body = call_body("echo", "c" * 4000)
        req = http_request(chunked(body, [500]), content_length=False,
                           headers=[("Transfer-Encoding", "chunked")])
        with RawClient(self.daemon) as c:
            try:
                c.send(req)
                resp = c.read_response()
            except (ConnectionResetError, BrokenPipeError, harness.IncompleteResponse) as err:
                self.fail(f"413 expected, connection dropped instead: {err!r}")
            self.assertEqual(resp.status, 413, resp)

    def test_gzip_body_inflating_beyond_limit_is_refused(self):
        body = call_body("echo", "g" * 200_000)
        packed = gzip.compress(body)
        self.assertLess(len(packed), 1024)
        resp = exchange(self.daemon, http_request(packed, headers=[("Content-Encoding", "gzip")]))
        if resp.status == 200:
            fault = parse_fault(resp.decoded_body())  # at least not served as a call
            self.assertNotEqual(fault.faultCode, 0)
        else:
            self.assertEqual(resp.status, 413, resp)


class RequestTimeout(FaultTestCase):
    daemon_args = ("--request-timeout", "1")

    def test_stalled_request_is_timed_out(self):
        with RawClient(self.daemon) as c:
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Le")
            t0 = time.monotonic()
            try:
                resp = c.read_response()
            except (harness.IncompleteResponse, ConnectionResetError):
                resp = None  # closed without a response: acceptable
            elapsed = time.monotonic() - t0
            if resp is not None:
                self.assertEqual(resp.status, 408, resp)
            self.assertLess(elapsed, 8.0, "a stalled request held the connection")


class IdleTimeout(FaultTestCase):
    # In fork and prefork the idle timeout is capped at 2 s anyway.
    daemon_args = ("--idle-timeout", "1")

    def test_silent_connection_is_closed(self):
        with RawClient(self.daemon) as c:
            t0 = time.monotonic()
            try:
                closed = c.at_eof(8)
            except ConnectionResetError:
                closed = True
            self.assertTrue(closed, "a connection that sent nothing was kept open for 8 s")
            self.assertLess(time.monotonic() - t0, 4.0)

    # Regression: a call that outlasted the idle timeout was cut off with no
    # reply (the connection kept its idle deadline while the call ran).
    def test_call_longer_than_idle_timeout_is_answered(self):
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("sleep", 2.5)))
            try:
                resp = c.read_response()
            except (harness.IncompleteResponse, ConnectionResetError) as err:
                self.fail(f"sleep(2.5) with --idle-timeout 1: connection closed without a reply "
                          f"({err!r})")
            self.assertEqual(resp.status, 200, resp)
            self.assertIs(parse_result(resp.decoded_body()), True)


class DocumentLimits(FaultTestCase):
    daemon_args = ("--max-depth", "8", "--multicall-max", "3")

    def test_max_depth_option(self):
        def nested(depth):
            return "<value><array><data>" * depth + "<value><int>1</int></value>" + \
                   "</data></array></value>" * depth
        ok = exchange(self.daemon, http_request(raw_call_body("echo", nested(3))))
        self.assertEqual(ok.status, 200, ok)
        self.assertEqual(parse_result(ok.decoded_body()), [[[1]]])
        bad = exchange(self.daemon, http_request(raw_call_body("echo", nested(12))))
        self.assertEqual(bad.status, 200, bad)
        parse_fault(bad.decoded_body())

    def test_multicall_max_option(self):
        def mc(n):
            return {"methodName": "echo", "params": [n]}
        with self.proxy() as p:
            self.assertEqual(p.system.multicall([mc(1), mc(2)]), [[1], [2]])
            with self.assertRaises(harness.xmlrpc.client.Fault):
                p.system.multicall([mc(i) for i in range(10)])


if __name__ == "__main__":
    harness.main()

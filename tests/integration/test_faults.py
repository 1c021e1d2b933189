"""Faults and malformed input, sent with http.client or raw sockets. After
every test a normal call on a new connection must succeed.

Hostile input (DTDs and entities, nesting, bad literals and characters,
hostile method names, multicall amplification, request smuggling and other
framing errors, the size limits, gzip bombs, slow and resetting clients)
is tested in tests/hostile/ (README.md there maps each class to its test)."""

import harness
from harness import (DaemonTestCase, RawClient, call_body, http_request, parse_fault,
                     parse_result, raw_call_body)


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
        # No document at all is not well-formed (docs/limits.md).
        self.assert_fault_response(b"", -32700)

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
        # The path is /RPC2; the query is ignored.
        self.assertEqual(status, 200, data[:300])
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

    def test_missing_length_is_411(self):
        # A POST with neither Content-Length nor chunked (docs/jsonrpc.md: 411).
        with RawClient(self.daemon) as c:
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n\r\n")
            resp = c.read_response()
            self.assertEqual(resp.status, 411, resp)


class IdleTimeout(FaultTestCase):
    # In fork and prefork the idle timeout is capped at 2 s anyway.
    daemon_args = ("--idle-timeout", "1")

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


if __name__ == "__main__":
    harness.main()

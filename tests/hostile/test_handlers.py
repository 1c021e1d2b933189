"""Hostile handlers: methods that throw, hang or crash (rapidrpcd
--enable-test-methods: test.throw, test.spin, test.crash), and results that
need escaping. Each call gets a well-formed answer without internal detail;
after each test a normal call on a new connection succeeds within 1 s.

tests/integration/test_isolation.py covers crashes and runaways further, in
the modes that survive them (prefork, fork, --isolate)."""

import time

import hostile
from hostile import HostileTestCase, RawClient, call_body, http_request, parse_fault, parse_result

harness = hostile.harness

INTERNAL_ERROR = -32603
TIMEOUT = -32001


class ThrowingAndHangingHandlers(HostileTestCase):
    daemon_args = ("--enable-test-methods", "--method-timeout", "1", "--workers", "2")

    def test_a_handler_that_throws_is_an_internal_error_without_detail(self):
        fault = self.assert_fault(call_body("test.throw"), INTERNAL_ERROR)
        self.assertNotIn("rapidrpc", fault.faultString)  # the exception said /etc/rapidrpc/secret

    def test_a_handler_that_hangs_is_timed_out_and_others_are_served(self):
        with RawClient(self.daemon) as c:
            t0 = time.monotonic()
            c.send(http_request(call_body("test.spin", 5.0)))
            time.sleep(0.2)
            # While it spins, everyone else is served.
            hostile.normal_call(self.daemon.port)
            resp = c.read_response()
            took = time.monotonic() - t0
        self.assertEqual(resp.status, 200, resp)
        fault = parse_fault(resp.decoded_body())
        self.assertEqual(fault.faultCode, TIMEOUT, fault)
        self.assert_clean_message(fault.faultString)
        self.assertLess(took, 3.0, "the method timeout fired late")

    def test_a_client_gone_while_its_handler_hangs(self):
        with RawClient(self.daemon) as c:
            t0 = time.monotonic()
            c.send(http_request(call_body("test.spin", 1.5)))
            time.sleep(0.1)
        # The other worker thread is free meanwhile...
        took = harness.assert_pool_call_answers(self.daemon, deadline=1.0)
        self.assertLess(time.monotonic() - t0, 1.5, "the pool call waited for the spin")
        # ...and once the spin has ended (its answer dropped), both are: two
        # calls of 0.3 s run at once (with one worker, the second ends at 0.6 s).
        time.sleep(max(0.0, t0 + 1.6 - time.monotonic()))
        results, done, t1 = harness.concurrent_exchanges(
            self.daemon.port, [http_request(call_body("test.spin", 0.3))] * 2, 10.0)
        for r in results:
            self.assertIsInstance(r, harness.RawResponse, r)
            self.assertIs(parse_result(r.decoded_body()), True)
        self.assertLess(max(done) - t1, 0.55, f"a worker thread is still held (pool call: "
                                              f"{took * 1000:.0f} ms)")


class CrashingHandler(HostileTestCase):
    daemon_args = ("--enable-test-methods", "--isolate", "--workers", "2")
    expected_deaths = 1  # the worker that ran test.crash, and no other

    def test_a_handler_that_crashes_costs_only_its_call(self):
        fault = self.assert_fault(call_body("test.crash"), INTERNAL_ERROR)
        self.assertNotIn("SIGSEGV", fault.faultString)
        # The pool runs again (the worker is replaced) for the next pool call.
        deadline = time.monotonic() + 5
        while True:
            try:
                self.assert_result(call_body("load", 10), "55")
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


class ResultsThatNeedEscaping(HostileTestCase):

    def test_markup_in_strings_comes_back_intact(self):
        for s in ("<b>&amp;</b>", "]]>", "<![CDATA[x]]>", "\t\"'", "&#0;",
                  "<?xml version='1.0'?>", "</string></value></param></params>",
                  "\U0001F600 \u00e9 \u2028 \ufeff", "x" * 100_000 + "<"):
            with self.subTest(s=s[:40]):
                self.assert_result(call_body("echo", s), s)

    def test_carriage_returns_survive_line_end_normalisation(self):
        # Sent as &#13; (Python's marshaller writes a raw CR, which XML reads
        # as LF); the server writes CR as &#13; so it comes back a CR.
        self.assert_result(hostile.raw_call_body(
            "echo", "<value><struct><member><name>a&#13;</name><value>b&#13;&#10;c&#13;</value>"
                    "</member></struct></value>"), {"a\r": "b\r\nc\r"})

    def test_markup_in_member_names_comes_back_intact(self):
        value = {"<a>": 1, "&": [2, "</name>"], "]]>": {"\t": "\n"}, "": None}
        self.assert_result(call_body("echo", value), value)

    def test_every_byte_comes_back_through_base64(self):
        data = bytes(range(256)) * 16
        self.assert_result(call_body("echo", data), data)

    def test_gzip_response_of_escaped_text(self):
        value = "<&>" * 2000
        with RawClient(self.daemon) as c:
            c.send(http_request(call_body("echo", value), headers=[("Accept-Encoding", "gzip")]))
            resp = c.read_response()
        self.assertEqual(resp.header("Content-Encoding"), "gzip", resp)
        self.assertEqual(parse_result(resp.decoded_body()), value)


if __name__ == "__main__":
    harness.main()

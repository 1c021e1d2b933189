"""`rapidrpc call` and `rapidrpc bench` with tcp:// and ipc:// URLs against
rapidrpcd --zmq (JSON-RPC 2.0 over ZeroMQ), and the options that make no
sense there."""

import json
import os
import re
import shutil
import tempfile
import time
import unittest

import clitest
from clitest import EXIT_FAULT, EXIT_OK, EXIT_TRANSPORT, EXIT_USAGE, describe, harness, run_tool

ZMQ_MODES = ("async-pool", "async-pool-isolate", "async")
NOT_ZMQ_MODES = tuple(m for m in harness.MODES if m not in ZMQ_MODES)

_DIR = tempfile.mkdtemp(prefix="rapidrpc-cli-zmq-")


def tearDownModule():
    shutil.rmtree(_DIR, ignore_errors=True)


@harness.skip_in_modes(NOT_ZMQ_MODES, "no ZeroMQ endpoint in this mode")
class ZmqCliTest(harness.DaemonTestCase):
    daemon_args = ("--zmq", "tcp://127.0.0.1:*", "--zmq", f"ipc://{_DIR}/rpc.sock")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        endpoints = cls.daemon.zmq_endpoints
        cls.tcp = next(e for e in endpoints if e.startswith("tcp://"))
        cls.ipc = next(e for e in endpoints if e.startswith("ipc://"))
        cls.urls = (cls.tcp, cls.ipc)

    def run_ok(self, *args, expect_status=EXIT_OK):
        proc = run_tool(*args)
        self.assertEqual(proc.returncode, expect_status, describe(proc))
        return proc

    def test_help_mentions_the_zmq_forms(self):
        for cmd in ("call", "bench"):
            proc = self.run_ok(cmd, "--help")
            for form in ("tcp://host:port", "ipc://path"):
                self.assertIn(form, proc.stdout, f"{cmd} --help does not mention {form}")
        self.assertIn("--in-flight", self.run_ok("bench", "--help").stdout)

    # -- call ----------------------------------------------------------------------

    def test_call_over_tcp_and_ipc(self):
        for url in self.urls:
            with self.subTest(url=url):
                self.assertEqual(self.run_ok("call", url, "sample.add", "3", "5").stdout, "8\n")
                got = json.loads(self.run_ok("call", "--json", url, "echo", '{"a":[1,2.5,"x",null]}').stdout)
                self.assertEqual(got, {"a": [1, 2.5, "x", None]})

    def test_raw_prints_the_reply_frame(self):
        raw = json.loads(self.run_ok("call", "--raw", self.tcp, "sample.add", "3", "5").stdout)
        self.assertEqual(raw, {"jsonrpc": "2.0", "result": 8, "id": 1})
        proc = self.run_ok("call", "-v", self.ipc, "echo", "s/hi")
        self.assertIn('"method":"echo"', proc.stderr)
        self.assertIn('"result":"hi"', proc.stderr)

    def test_fault(self):
        proc = self.run_ok("call", self.tcp, "no.such.method", expect_status=EXIT_FAULT)
        self.assertRegex(proc.stderr, r"^fault -32601: ")

    def test_timeout(self):
        start = time.monotonic()
        proc = self.run_ok("call", "--timeout", "1", self.tcp, "sleep", "5", expect_status=EXIT_TRANSPORT)
        took = time.monotonic() - start
        self.assertIn("within 1000 ms", proc.stderr)
        self.assertLess(took, 3.0)

    def test_no_server_is_a_timeout(self):
        for url in (f"tcp://127.0.0.1:{clitest.free_port()}", f"ipc://{_DIR}/nobody.sock"):
            with self.subTest(url=url):
                proc = self.run_ok("call", "--timeout", "0.3", url, "echo", "1", expect_status=EXIT_TRANSPORT)
                self.assertIn("no reply", proc.stderr)

    def test_http_only_options_are_usage_errors(self):
        for args, says in ((("-P", "xmlrpc"), "JSON-RPC"), (("-H", "X-A: 1"), "--header"),
                           (("-k",), "--insecure"), (("--cacert", "/dev/null"), "--cacert")):
            with self.subTest(args=args):
                # (options after the positionals: -H takes every value up to the next option)
                proc = self.run_ok("call", self.tcp, "echo", "1", *args, expect_status=EXIT_USAGE)
                self.assertIn(says, proc.stderr)
        self.run_ok("call", "-P", "jsonrpc", self.tcp, "echo", "1")  # what it speaks anyway
        proc = self.run_ok("call", "tcp://127.0.0.1", "echo", "1", expect_status=EXIT_USAGE)
        self.assertIn("tcp://host:port", proc.stderr)

    # -- bench ---------------------------------------------------------------------

    def bench(self, *args, expect_status=EXIT_OK):
        return json.loads(self.run_ok("bench", "--json", *args, expect_status=expect_status).stdout)

    def test_bench_counts_and_checks(self):
        for url in self.urls:
            with self.subTest(url=url):
                r = self.bench("-c", 2, "--in-flight", 16, "-n", 3000, url, "sample.add", "3", "5")
                self.assertEqual(r["ok"], 3000, r)
                self.assertEqual(r["errors"]["total"], 0)
                self.assertEqual(r["settings"]["in_flight"], 16)
                self.assertEqual(r["settings"]["protocol"], "jsonrpc")
                self.assertEqual(sum(r["timeline"]["ok"]), 3000)
                lat = r["latency_us"]
                self.assertTrue(0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"], lat)

    def test_bench_structured_result_and_threads(self):
        r = self.bench("-c", 4, "-t", 2, "--in-flight", 4, "-d", 1, self.ipc, "echo", '{"a":[1,2.5,"x",null]}')
        self.assertGreater(r["ok"], 100, r)
        self.assertEqual(r["errors"]["total"], 0)
        self.assertEqual(r["settings"]["expected"], {"a": [1, 2.5, "x", None]})

    def test_bench_mismatch_and_fault_are_errors(self):
        r = self.bench("-c", 1, "--in-flight", 8, "-n", 200, "--expect", "9", self.tcp, "sample.add", "3", "5",
                       expect_status=EXIT_FAULT)
        self.assertEqual(r["errors"]["mismatch"], 200)
        self.assertIn("unexpected result", r["first_error"])
        r = self.bench("-c", 1, "--in-flight", 8, "-n", 100, "--expect", "8", self.tcp, "sample.add",
                       "2147483647", "1", expect_status=EXIT_FAULT)
        self.assertEqual(r["errors"]["fault"], 100)

    def test_bench_timeouts_and_late_replies(self):
        # Each call gives up at 0.2 s; its reply comes at 0.3 s and must be
        # dropped, not taken for a newer call's.
        r = self.bench("-c", 1, "--in-flight", 4, "-n", 12, "--timeout", "0.2", "--expect", "true",
                       self.tcp, "sleep", "0.3", expect_status=EXIT_FAULT)
        self.assertEqual(r["errors"]["timeout"], 12, r)
        self.assertEqual(r["errors"]["total"], 12, r)
        self.assertEqual(r["ok"], 0)

    def test_bench_open_loop(self):
        r = self.bench("-r", 2000, "-c", 2, "--in-flight", 4, "-d", 1, self.tcp, "echo", "1")
        self.assertGreater(r["ok"], 1800, r)
        self.assertLessEqual(r["ok"] + r["unfinished"], 2001, r)

    def test_bench_in_flight_pipelines_one_socket(self):
        # 64 sleeps of 0.3 s in flight on one socket end in about 0.3 s.
        r = self.bench("-c", 1, "--in-flight", 64, "-n", 64, self.tcp, "sleep", "0.3")
        self.assertEqual(r["ok"], 64, r)
        self.assertLess(r["elapsed_s"], 1.5, r)

    def test_bench_warm_up_failure(self):
        proc = self.run_ok("bench", "--timeout", "0.3", "-n", 10, f"tcp://127.0.0.1:{clitest.free_port()}",
                           "echo", "1", expect_status=EXIT_TRANSPORT)
        self.assertIn("warm-up", proc.stderr)
        proc = self.run_ok("bench", "-n", 10, self.tcp, "no.such.method", expect_status=EXIT_TRANSPORT)
        self.assertIn("fault -32601", proc.stderr)

    def test_bench_usage_errors(self):
        for url, args, says in ((self.tcp, ("-P", "xmlrpc"), "JSON-RPC"),
                                (self.tcp, ("--no-keep-alive",), "keep-alive"),
                                (self.ipc, ("-H", "X-A: 1"), "--header"),
                                (self.url, ("--in-flight", 2), "--in-flight"),
                                (self.tcp, ("--in-flight", 0), "--in-flight")):
            with self.subTest(url=url, args=args):
                proc = self.run_ok("bench", "-n", 1, url, "echo", "1", *args, expect_status=EXIT_USAGE)
                self.assertIn(says, proc.stderr)

    def test_bench_live_line_on_a_terminal(self):
        # The ZeroMQ driver shows the line as the HTTP one does
        # (test_live_line); a counted run says how many of its calls are
        # done. 1000 calls/s make 2500 last 2.5 s: two refreshes.
        status, terminal, _ = clitest.run_on_terminal("bench", "-r", 1000, "-n", 2500, "-c", 1,
                                                      "--in-flight", 4, self.tcp, "sample.add", "3", "5")
        self.assertEqual(status, EXIT_OK, repr(terminal[-3000:]))
        before, lines, summary = clitest.split_terminal(terminal)
        self.assertEqual(before, "")
        self.assertGreaterEqual(len(lines), 2, repr(terminal))
        calls = []
        for line in lines:
            m = re.match(r"^\d+ s: (\d+) of 2500 calls, \d+ calls/s \(last second\), 0 errors, p99 \d", line)
            self.assertIsNotNone(m, f"not a live line: {line!r}")
            calls.append(int(m[1]))
        self.assertTrue(all(a < b for a, b in zip(calls, calls[1:])), f"calls do not grow: {calls}")
        self.assertTrue(summary.startswith("rapidrpc bench: sample.add on tcp://"), repr(summary[:300]))
        self.assertIn("2500 ok, 0 errors", summary)

    def test_report(self):
        path = os.path.join(_DIR, "run.html")
        r = self.bench("-c", 1, "--in-flight", 8, "-n", 500, "--report", path, self.tcp, "echo", "1")
        self.assertEqual(r["ok"], 500)
        with open(path, encoding="utf-8") as f:
            html = f.read()
        self.assertIn("DEALER sockets, 8 calls in flight", html)
        self.assertIn(self.tcp, html)


if __name__ == "__main__":
    unittest.main()
